"""Second-order Platt scaling (Section 6, Eq. (recal), (That)) and first-order Platt scaling for comparison.

The fitted map is (m, var) -> (eta1-hat, max(0, eta2-hat - eta1-hat^2)) after projecting (eta1-hat, eta2-hat) onto
the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1, where eta1-hat and eta2-hat are the
tensor-Chebyshev ridge regressions of :func:`socal.ce2` fitted on perturbed scores and k-snapshots.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .degrees import DEFAULT_MAX_DEGREE, MAX_DEGREE, stream_cap
from .fitting import CalibrationMap
from ._typing import ArrayLike, Counts, Seed
from ._validation import check_array, check_choice, check_labels, check_mean, check_scores
from .pipeline import N_BOOT, data_source, estimator_settings, fit_from
from .sufficient import SufficientStats

__all__ = ["SecondOrderPlatt", "FirstOrderPlatt", "NotFittedError", "sklearn_expected_failed_checks"]


class NotFittedError(ValueError, AttributeError):
    """A recalibrator was used before ``fit`` (a ValueError and an AttributeError, as in scikit-learn)."""


class _PlattBase:
    _params = ("ndim", "h", "degree", "alpha", "folds", "max_degree", "rng", "search")
    _second_order = True

    def __init__(self, *, ndim: int = 2, h: float | None = None, degree: Any = None, alpha: Any = None, folds: int = 5,
                 max_degree: int = DEFAULT_MAX_DEGREE, rng: Seed = None, search: str = "greedy") -> None:
        self.ndim = ndim
        self.h = h
        self.degree = degree
        self.alpha = alpha
        self.folds = folds
        self.max_degree = max_degree
        self.rng = rng
        self.search = search

    # -- scikit-learn conventions --------------------------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params: Any) -> _PlattBase:
        for k, v in params.items():
            if k not in self._params:
                raise ValueError(f"Invalid parameter {k!r} for {type(self).__name__}; valid: {', '.join(self._params)}.")
            setattr(self, k, v)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._params
                         if getattr(self, k) != type(self)().get_params()[k])
        return f"{type(self).__name__}({args})"

    def _check_fitted(self):
        if not hasattr(self, "map_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with perturbed "
                                 f"scores and k-snapshot labels first.")

    # -- fitting ---------------------------------------------------------------------------------------------------
    def _settings(self, name):
        ndim = check_choice(self.ndim, "ndim", type(self).__name__, (1, 2))
        st = estimator_settings(type(self).__name__, self.h, self.degree, self.alpha, self.folds, None,
                                self.max_degree, self.rng, None, N_BOOT, self.search)
        return ndim, st

    def _finish_fit(self, fit, n):
        self.map_ = fit.calmap
        self.degree_ = fit.calmap.degree
        self.alpha_ = fit.calmap.alpha
        self.selection_ = fit.selection
        self.n_samples_fit_ = n
        return self

    def _inputs(self, X, y, labels, counts, name, *, fitting):
        """(mean, var or None, labels, counts) from either calling convention (see :meth:`fit`)."""
        if not _is_table(X):
            return X, y, labels, counts  # fit(mean, var, labels): the original convention
        if y is None and counts is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None: {name}(X, y) "
                             f"needs the (n, k) 0/1 labels as y (or counts=(positives, trials)).")
        if labels is not None:
            raise ValueError(f"With X of shape (n, {self.ndim}) as the first argument of {name}, the labels are the "
                             f"second argument y (scikit-learn's fit(X, y)); 'labels' must be None.")
        m, v = self._columns(X, name, fitting=fitting)
        if counts is not None and not isinstance(counts, (tuple, list)):
            c = check_array(counts, "counts", name, ndim=2)
            if c.shape[1] != 2:
                raise ValueError(f"The 'counts' parameter of {name} must be a pair (positives, trials) or an (n, 2) "
                                 f"array with those columns. Got shape {c.shape} instead.")
            counts = (c[:, 0], c[:, 1])
        if y is not None and np.ndim(y) == 1 and not self._second_order:
            y = np.asarray(y, dtype=float)[:, None]  # one label per item: a column (first order needs k >= 1)
        if y is not None and np.ndim(y) == 1:
            raise ValueError(f"The 'y' parameter of {name} must be an (n, k) array of 0/1 labels with k >= 2 per "
                             f"item (a k-snapshot; second order needs two labels per item), or pass "
                             f"counts=(positives, trials). Got a 1-dimensional array instead.")
        return m, v, y, counts

    def _columns(self, X, name, *, fitting):
        """Columns (mean, var) of a 2-D X, with scikit-learn's feature-count and feature-name checks."""
        names = _feature_names(X)
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            X = X.to_numpy()
        elif not isinstance(X, np.ndarray):
            X = np.asarray(X)
        shape = X.shape
        if len(shape) == 2 and shape[1] == 0:
            raise ValueError(f"The 'X' parameter of {name}: found array with 0 feature(s) (shape={shape}) while a "
                             f"minimum of 1 is required.")
        x = check_array(X, "X", name, ndim=2)
        p = x.shape[1]
        if fitting:
            allowed = (2,) if self.ndim == 2 else (1, 2)
            if p not in allowed:
                raise ValueError(f"The 'X' parameter of {name} must have the columns (mean, var)"
                                 f"{' or (mean,)' if self.ndim == 1 else ''}: 2 features. Got {p} feature(s) "
                                 f"instead.")
            self.n_features_in_ = p
            if names is not None:
                self.feature_names_in_ = names
            else:
                self.__dict__.pop("feature_names_in_", None)
        else:
            self._check_fitted()
            fitted = getattr(self, "feature_names_in_", None)
            if names is not None and fitted is None:
                warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without feature names",
                              UserWarning, stacklevel=3)
            elif names is None and fitted is not None:
                warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was fitted with "
                              f"feature names", UserWarning, stacklevel=3)
            elif names is not None and not np.array_equal(names, fitted):
                raise ValueError(f"The feature names should match those that were passed during fit: fitted with "
                                 f"{list(fitted)}, got {list(names)}.")
            expected = getattr(self, "n_features_in_", 2 if self.map_.ndim == 2 else 1)
            if p != expected:
                raise ValueError(f"X has {p} features, but {type(self).__name__} is expecting {expected} features as "
                                 f"input.")
        if self.ndim == 2 or (not fitting and self.map_.ndim == 2):
            return check_scores(x[:, 0], x[:, 1], name)
        return check_mean(x[:, 0], name), None

    def fit(self, X: ArrayLike | SufficientStats, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
            counts: Counts | None = None) -> _PlattBase:
        """Fit on perturbed scores and their labels.

        Two calling conventions:

        * ``fit(X, y)`` (scikit-learn's): ``X`` of shape (n, 2) with columns (mean, var) (a DataFrame too; for
          ``ndim=1`` also (n, 1)), ``y`` the (n, k) 0/1 labels, or ``counts`` as a pair (positives, trials) or an
          (n, 2) array with those columns.
        * ``fit(mean, var, labels)``: 1-D arrays, labels (n, k) 0/1 (or ``counts=(positives, trials)``); ``var``
          is None for ``ndim=1``.

        ``X`` may instead be a :class:`socal.SufficientStats` (built with the same ``ndim``; for the first-order
        class with ``responses=1`` or from 2-D statistics whose second response is then ignored): the fit needs the
        statistics only.  Returns self.
        """
        name = type(self).__name__ + ".fit"
        ndim, st = self._settings(name)
        R = 2 if self._second_order else 1
        self.__dict__.pop("stats_", None)  # fit starts afresh; partial_fit accumulates from here
        if isinstance(X, SufficientStats):
            if y is not None or labels is not None or counts is not None:
                raise ValueError(f"With SufficientStats as the first argument of {name}, 'y', 'labels' and "
                                 f"'counts' must be None.")
            stats = _stats_for(X, ndim, R, name)
            fit, stats = fit_from(None, stats, st, ndim, name, responses=R)
            return self._finish_fit(fit, stats.n)
        if not _is_table(X):
            self.n_features_in_ = 2 if (ndim == 2 or y is not None) else 1
            self.__dict__.pop("feature_names_in_", None)
        mean, var, labels, counts = self._inputs(X, y, labels, counts, name, fitting=True)
        source, _ = data_source(name, ndim, mean, var if ndim == 2 else None, labels, counts, None, responses=R)
        fit, stats = fit_from(source, None, st, ndim, name, responses=R)
        return self._finish_fit(fit, stats.n)

    def partial_fit(self, X: ArrayLike, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
                    counts: Counts | None = None) -> _PlattBase:
        """Add a chunk to the statistics kept in ``stats_`` and refit from all chunks seen so far.

        Calling conventions as in :meth:`fit`.  The statistics are built at the cap ``max_degree`` (or the fixed
        ``degree``); each call refits (a cross-validated fit costs its selection each time: pass ``degree`` and
        ``alpha`` to make refits cheap).  The result equals :meth:`fit` on all chunks at once, up to float
        summation order.
        """
        name = type(self).__name__ + ".partial_fit"
        ndim, st = self._settings(name)
        R = 2 if self._second_order else 1
        if not _is_table(X):
            self.n_features_in_ = 2 if (ndim == 2 or y is not None) else 1
        mean, var, labels, counts = self._inputs(X, y, labels, counts, name, fitting=True)
        if not hasattr(self, "stats_"):
            self.stats_ = SufficientStats(max_degree=stream_cap(name, st), ndim=ndim, folds=st.folds,
                                          rng=st.fold_rng, responses=R)
        self.stats_.update(mean, var if ndim == 2 else None, labels, counts=counts)
        fit, _ = fit_from(None, self.stats_, st, ndim, name, responses=R)
        return self._finish_fit(fit, self.stats_.n)

    def fit_transform(self, X: ArrayLike, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
                      counts: Counts | None = None) -> Any:
        """:meth:`fit`, then :meth:`transform` of the same scores (same calling convention)."""
        self.fit(X, y, labels, counts=counts)
        return self.transform(X) if _is_table(X) else self.transform(X, y)

    def _moments(self, X, var, name):
        """Projected (eta1-hat, eta2-hat) at the scores, and the input's row index when X was a DataFrame."""
        self._check_fitted()
        if _is_table(X):
            if var is not None:
                raise ValueError(f"With X of shape (n, 2) as the first argument of {name}, 'var' must be None "
                                 f"(X holds both columns).")
            m, v = self._columns(X, name, fitting=False)
        elif self.map_.ndim == 2 or var is not None:
            m, v = check_scores(X, var, name)
        else:
            m, v = check_mean(X, name), None
        pred = self.map_.predict(m, v if self.map_.ndim == 2 else None, project=True)
        if pred.shape[1] == 1:  # first order: eta2 := eta1^2
            pred = np.column_stack([pred[:, 0], pred[:, 0] ** 2])
        return pred[:, 0], pred[:, 1]

    def predict_moments(self, X: ArrayLike, var: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(eta1-hat, eta2-hat), projected onto the feasible moment region (calling conventions as in
        :meth:`transform`; always a pair of arrays)."""
        return self._moments(X, var, type(self).__name__ + ".predict_moments")

    def transform(self, X: ArrayLike, var: ArrayLike | None = None) -> Any:
        """Recalibrated scores (m', var') = (eta1-hat, max(0, eta2-hat - eta1-hat^2)) (Eq. (That)).

        ``transform(X)`` with X of shape (n, 2) (or a DataFrame) returns an (n, 2) array with columns (mean, var)
        (a DataFrame after ``set_output(transform="pandas")``); ``transform(mean, var)`` returns the pair of
        arrays.
        """
        e1, e2 = self._moments(X, var, type(self).__name__ + ".transform")
        v = np.maximum(0.0, e2 - e1 * e1)
        if not _is_table(X):
            return e1, v
        out = np.column_stack([e1, v])
        if getattr(self, "_sklearn_output_config", {}).get("transform") == "pandas":
            import pandas as pd

            index = X.index if hasattr(X, "index") and hasattr(X, "iloc") else None
            return pd.DataFrame(out, columns=self.get_feature_names_out(), index=index)
        return out

    def score(self, X: ArrayLike, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
              counts: Counts | None = None) -> float:
        """Minus the mean squared error of the predicted moments against the unbiased targets, on new data.

        The targets are a/k for eta1 and a(a-1)/(k(k-1)) for eta2 (Eq. (erm1), (erm2)), unbiased for f* and f*^2:
        this is the criterion the built-in cross-validation minimises, so ``GridSearchCV`` over ``degree`` or
        ``alpha`` selects what the built-in selection would.  Higher is better.  For the first-order class only
        the eta1 term is scored.  Calling conventions as in :meth:`fit`.
        """
        name = type(self).__name__ + ".score"
        self._check_fitted()
        if _is_table(X):
            labels, counts = self._score_labels(y, labels, counts, name)
            e1, e2 = self._moments(X, None, name)
        else:  # score(mean, var, labels)
            e1, e2 = self._moments(X, y if self.map_.ndim == 2 else None, name)
        a, k = check_labels(labels, e1.shape[0], name, counts=counts, min_k=2 if self._second_order else 1)
        t1 = a / k
        err = np.mean((e1 - t1) ** 2)
        if self._second_order:
            t2 = a * (a - 1) / (k * (k - 1))
            err += np.mean((e2 - t2) ** 2)
        return -float(err)

    def _score_labels(self, y, labels, counts, name):
        if labels is not None:
            raise ValueError(f"With X as the first argument of {name}, the labels are y; 'labels' must be None.")
        if counts is not None and not isinstance(counts, (tuple, list)):
            c = check_array(counts, "counts", name, ndim=2)
            counts = (c[:, 0], c[:, 1])
        if y is not None and np.ndim(y) == 1:
            y = np.asarray(y, dtype=float)[:, None]
        return y, counts

    # -- scikit-learn conventions (scikit-learn is optional: nothing here imports it at module level) -------------
    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of :meth:`transform`'s output columns: ('mean', 'var')."""
        return np.asarray(["mean", "var"], dtype=object)

    def set_output(self, *, transform: str | None = None) -> _PlattBase:
        """Choose :meth:`transform`'s container for 2-D input: 'default' (ndarray) or 'pandas' (a DataFrame).

        As in scikit-learn's ``set_output`` (``Pipeline.set_output`` calls it); returns self."""
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise ValueError(f"The 'transform' parameter of {type(self).__name__}.set_output must be 'default' or "
                             f"'pandas'. Got {transform!r} instead.")
        if transform == "pandas":
            import importlib.util

            if importlib.util.find_spec("pandas") is None:
                raise ImportError("set_output(transform='pandas') needs pandas, which is not installed")
        self._sklearn_output_config = {"transform": transform}
        return self

    def __sklearn_is_fitted__(self):
        return hasattr(self, "map_")

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None,
                    target_tags=TargetTags(required=True, two_d_labels=True, multi_output=True,
                                           single_output=not self._second_order),
                    transformer_tags=TransformerTags(preserves_dtype=["float64"]),
                    input_tags=InputTags(two_d_array=True, allow_nan=False))

    # -- persistence -----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe description; :meth:`from_dict` rebuilds a map with bit-identical output."""
        self._check_fitted()
        params = self.get_params()
        params["rng"] = params["rng"] if isinstance(params["rng"], (int, type(None))) else None
        return {"format": FORMAT, "version": FORMAT_VERSION, "class": type(self).__name__, "params": params,
                "map": self.map_.to_dict(), "n_samples_fit": self.n_samples_fit_}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> _PlattBase:
        """Rebuild from :meth:`to_dict`'s output after checking its schema (keys, types, shapes, finiteness, format
        version); a ValueError names the field at fault.  Nothing read is evaluated."""
        where = f"{cls.__name__}.from_dict"

        def bad(field, rule, got):
            return ValueError(f"The field '{field}' of {where} must be {rule}. Got {got!r} instead.")

        if not isinstance(d, dict):
            raise bad("d", "a dict (the output of to_dict)", type(d).__name__)
        missing = [k for k in ("format", "version", "class", "params", "map", "n_samples_fit") if k not in d]
        if missing:
            raise ValueError(f"{where}: field(s) {missing} missing (not the output of to_dict, or cut).")
        if d["format"] != FORMAT:
            raise bad("format", repr(FORMAT), d["format"])
        if d["version"] != FORMAT_VERSION:
            raise bad("version", f"{FORMAT_VERSION} (this socal's format)", d["version"])
        if d["class"] != cls.__name__:
            raise bad("class", repr(cls.__name__), d["class"])
        params = d["params"]
        if not isinstance(params, dict) or set(params) != set(cls._params):
            raise bad("params", f"a dict with exactly the keys {list(cls._params)}",
                      sorted(params) if isinstance(params, dict) else params)
        nf = d["n_samples_fit"]
        if isinstance(nf, bool) or not isinstance(nf, int) or nf < 1:
            raise bad("n_samples_fit", "an int >= 1", nf)
        checks = {"ndim": lambda x: x in (1, 2) and not isinstance(x, bool),
                  "h": lambda x: x is None or (_is_real(x) and 0 < x <= 1e6)
                  or (isinstance(x, list) and len(x) == 2 and all(_is_real(e) and 0 < e <= 1e6 for e in x)),
                  "degree": lambda x: x is None or x == "paper" or _is_int(x, 0, MAX_DEGREE)
                  or (isinstance(x, list) and len(x) > 0 and all(_is_int(e, 0, MAX_DEGREE) for e in x)),
                  "alpha": lambda x: x is None or (_is_real(x) and 0 <= x <= 1e6)
                  or (isinstance(x, list) and len(x) > 0 and all(_is_real(e) and 0 <= e <= 1e6 for e in x)),
                  "folds": lambda x: _is_int(x, 2, 100), "max_degree": lambda x: _is_int(x, 0, MAX_DEGREE),
                  "rng": lambda x: x is None or _is_int(x, 0, 2**63 - 1)}
        for key, ok in checks.items():
            if not ok(params[key]):
                raise bad(f"params.{key}", "of the type and range the constructor takes", params[key])
        mp = d["map"]
        if not isinstance(mp, dict) or set(mp) != {"degree", "ndim", "alpha", "beta"}:
            raise bad("map", "a dict with keys degree, ndim, alpha, beta", mp if not isinstance(mp, dict) else sorted(mp))
        if not _is_int(mp["degree"], 0, MAX_DEGREE):
            raise bad("map.degree", f"an int in [0, {MAX_DEGREE}]", mp["degree"])
        if mp["ndim"] != params["ndim"] or isinstance(mp["ndim"], bool):
            raise bad("map.ndim", f"equal to params.ndim ({params['ndim']})", mp["ndim"])
        if not (_is_real(mp["alpha"]) and 0 <= mp["alpha"] <= 1e6):
            raise bad("map.alpha", "a float in [0, 1e6]", mp["alpha"])
        R = 2 if cls._second_order else 1
        size = (mp["degree"] + 1) ** mp["ndim"]
        beta = mp["beta"]
        if not (isinstance(beta, list) and len(beta) == size
                and all(isinstance(row, list) and len(row) == R and all(_is_real(x) for x in row) for row in beta)):
            raise bad("map.beta", f"a list of {size} rows of {R} finite numbers ((degree+1)^ndim coefficients per "
                      f"response)", f"{type(beta).__name__} of length {len(beta) if isinstance(beta, list) else '?'}")
        obj = cls(**params)
        obj.map_ = CalibrationMap.from_dict(mp)
        obj.degree_, obj.alpha_ = obj.map_.degree, obj.map_.alpha
        obj.selection_ = None
        obj.n_samples_fit_ = nf
        return obj


_RANDOM_X = ("draws X from unbounded random data with 3-5 columns; X must be the two columns (mean, var) with mean in "
             "[0, 1] and var in [0, 1/4], and fit raises a ValueError naming the rule (never a silent clip); the "
             "property is tested on valid scores in tests/test_sklearn.py")


def sklearn_expected_failed_checks(estimator):
    """The scikit-learn ``check_estimator`` checks a recalibrator fails, each with its reason.

    Pass it as ``check_estimator(est, expected_failed_checks=sklearn_expected_failed_checks(est))``.  All but three
    fail only because the check's random data lie outside the score domain; tests/test_sklearn.py runs each of
    those properties (fit returns self, pickling, idempotence, sample-order and subset invariance, n_features_in_,
    feature names, dtypes, read-only input, parameters untouched) on valid scores instead.
    """
    out = {name: _RANDOM_X for name in (
        "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
        "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
        "check_estimators_dtypes", "check_pipeline_consistency", "check_estimators_nan_inf",
        "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_transformer_data_not_an_array",
        "check_transformer_general", "check_transformer_preserve_dtypes", "check_methods_sample_order_invariance",
        "check_methods_subset_invariance", "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
        "check_n_features_in", "check_fit2d_predict1d", "check_fit2d_1sample")}
    out["check_positive_only_tag_during_fit"] = (
        "scikit-learn has no tag for a bounded domain: without positive_only the check requires negative X to fit, "
        "with it the check requires a message about negative values only; negative means are refused either way")
    out["check_dtype_object"] = ("object arrays are refused (a ValueError naming X): numbers only, no silent "
                                 "conversion of mixed-type columns")
    if getattr(estimator, "ndim", 2) == 1:
        out["check_fit2d_1feature"] = _RANDOM_X + " (one column, the mean, is valid for ndim=1)"
    return out


FORMAT = "socal.recalibrator"
FORMAT_VERSION = 1


def _is_table(x):
    """A 2-D input (scikit-learn's X): an array-like with two dimensions, or a DataFrame.  Sparse matrices are
    refused here (the score pair is dense by nature)."""
    if x is None or isinstance(x, SufficientStats):
        return False
    if hasattr(x, "columns") and hasattr(x, "iloc"):
        return True
    if type(x).__module__.startswith("scipy.sparse"):
        raise TypeError("Sparse data was passed for X, but dense data is required: X holds the two columns (mean, "
                        "var). Use '.toarray()' to convert to a dense numpy array.")
    nd = getattr(x, "ndim", None)
    if nd is None:
        try:
            nd = np.asarray(x).ndim
        except (TypeError, ValueError):
            return False
    return nd == 2


def _feature_names(X):
    """Column names of a DataFrame whose columns are all strings (scikit-learn's rule), else None."""
    cols = getattr(X, "columns", None)
    if cols is None or not hasattr(X, "iloc"):
        return None
    names = np.asarray(cols, dtype=object)
    return names if len(names) and all(isinstance(c, str) for c in names) else None


def _is_int(x, lo, hi):
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _is_real(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _stats_for(stats, ndim, R, name):
    """Statistics of the right shape for a recalibrator: 1-D read off 2-D, first response only for first order."""
    try:
        return stats.view(ndim, R)
    except ValueError as exc:
        raise ValueError(f"The 'mean' parameter of {name} holds SufficientStats that do not fit this recalibrator: "
                         f"{exc}") from None


class SecondOrderPlatt(_PlattBase):
    """Second-order Platt scaling: recalibrate both the mean and the epistemic variance.

    Parameters
    ----------
    ndim : {2, 1}
        2: eta1, eta2 are functions of (mean, var) (the paper's method).  1: functions of the mean only.
    h, degree, alpha, folds, max_degree, rng, search
        As in :func:`socal.ce2`: bandwidth (caps the degree), degree and relative ridge (None: cross-validated), and
        how the cross-validation searches the grid.

    Attributes
    ----------
    map_ : CalibrationMap
        The fitted calibration functions.
    degree_, alpha_ : int, float
        The degree and relative ridge used.
    selection_ : SelectionReport or None
        How they were chosen (None after :meth:`from_dict`).
    n_features_in_ : int
        Columns of X seen in :meth:`fit` (2 for (mean, var)).
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    stats_ : SufficientStats
        After :meth:`partial_fit`: the statistics accumulated so far.

    Notes
    -----
    Fit on the *perturbed* scores the deployed predictor outputs and their k-snapshots.  With the true calibration
    functions the map is exactly second-order calibrated (Proposition "Exact second-order Platt scaling"); the
    fitted map is so up to the estimation error (Corollary "approx_recal"; see ``socal audit --only platt-approx``
    for the constants).

    Examples
    --------
    >>> import socal, json
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(5000, h=1/16, rng=0)
    >>> platt = socal.SecondOrderPlatt(h=1/16, rng=0).fit(m, v, y)
    >>> m2, v2 = platt.transform(m, v)
    >>> again = socal.SecondOrderPlatt.from_dict(json.loads(json.dumps(platt.to_dict())))
    >>> bool((again.transform(m, v)[1] == v2).all())
    True
    """


class FirstOrderPlatt(_PlattBase):
    """First-order Platt scaling in 1-D (mean only) or 2-D (mean and var): eta1-hat, with eta2 := eta1^2.

    ``transform`` returns (eta1-hat, 0): a first-order method asserts no epistemic variance.  ``labels`` may have
    k >= 1 columns.  Parameters as in :class:`SecondOrderPlatt`.
    """

    _second_order = False

    def __init__(self, *, ndim: int = 1, h: float | None = None, degree: Any = None, alpha: Any = None, folds: int = 5,
                 max_degree: int = DEFAULT_MAX_DEGREE, rng: Seed = None, search: str = "greedy") -> None:
        super().__init__(ndim=ndim, h=h, degree=degree, alpha=alpha, folds=folds, max_degree=max_degree, rng=rng,
                         search=search)
