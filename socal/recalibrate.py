"""Second-order Platt scaling (Section 6, Eq. (recal), (That)) and first-order Platt scaling for comparison.

The fitted map is (m, var) -> (eta1-hat, max(0, eta2-hat - eta1-hat^2)) after projecting (eta1-hat, eta2-hat) onto
the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1, where eta1-hat and eta2-hat are the
tensor-Chebyshev ridge regressions of :func:`socal.ce2` fitted on perturbed scores and k-snapshots.
"""

from __future__ import annotations

import io
import json
import os
import warnings
from typing import Any

import numpy as np

from .files import write_text_atomic
from ._typing import ArrayLike, Counts, Seed
from ._validation import (RENAMED, check_aligned, check_array, check_choice, check_labels, check_mean, check_scores,
                          renamed_ridge, warn_renamed_attribute)
from .degrees import DEFAULT_MAX_DEGREE, resolve_degrees, stream_cap, training_rows
from .fitting import CalibrationMap
from .pipeline import data_source, estimator_settings, fit_from
from .rowkeys import KEY_BITS, RowsFingerprint, fingerprint_pass, valid_key_bits
from .schema import FORMAT, FORMAT_VERSION, check_saved
from .sklearn_api import TransformerConventions, is_table, sklearn_expected_failed_checks
from .sources import ArraySource, check_rows
from .sufficient import SufficientStats

__all__ = ["SecondOrderPlatt", "FirstOrderPlatt", "NotFittedError", "sklearn_expected_failed_checks"]


class NotFittedError(ValueError, AttributeError):
    """A recalibrator was used before ``fit`` (a ValueError and an AttributeError, as in scikit-learn)."""


class _PlattBase(TransformerConventions):
    _params = ("ndim", "h", "degree", "ridge", "folds", "max_degree", "rng", "search", "alpha")
    _saved = _params[:-1]  # what to_dict writes: the ridge under its name (a file with "alpha" still loads)
    _second_order = True

    def __init__(self, *, ndim: int = 2, h: float | None = None, degree: Any = None, ridge: Any = None,
                 folds: int | None = None, max_degree: int = DEFAULT_MAX_DEGREE, rng: Seed = None,
                 search: str = "greedy", alpha: Any = RENAMED) -> None:
        self.ndim = ndim
        self.h = h
        self.degree = degree
        self.ridge = ridge
        self.folds = folds
        self.max_degree = max_degree
        self.rng = rng
        self.search = search
        self.alpha = alpha  # the ridge's former name: read at fit, with a FutureWarning (scikit-learn's habit)

    @property
    def alpha_(self):
        """Deprecated: :attr:`ridge_` (its former name)."""
        self._check_fitted()
        warn_renamed_attribute(type(self).__name__, "alpha_", "ridge_")
        return self.ridge_

    def _check_fitted(self):
        if not hasattr(self, "map_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with perturbed "
                                 f"scores and k-snapshot labels first.")

    # -- fitting ---------------------------------------------------------------------------------------------------
    def _settings(self, name):
        ndim = check_choice(self.ndim, "ndim", type(self).__name__, (1, 2))
        value = self.max_degree
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0:
            # a cap of 0 leaves the automatic search one candidate, a constant; degree=0 asked for by name (a
            # baseline in a grid search) is taken
            raise ValueError(f"The 'max_degree' parameter of {type(self).__name__} must be at least 1. Got 0 "
                             f"instead: the search would have one candidate, a degree-0 map, which sends every score "
                             f"to the base rate and forgets the scores it is meant to recalibrate (pass degree=0 to "
                             f"ask for that constant map by name).")
        ridge = renamed_ridge(type(self).__name__, self.ridge, self.alpha)
        opts = estimator_settings(type(self).__name__, ndim=ndim, h=self.h, degree=self.degree, ridge=ridge,
                                  folds=self.folds, max_degree=self.max_degree, rng=self.rng, search=self.search)
        return ndim, opts

    def _finish_fit(self, fit, n, rows=None):
        self.map_ = fit.calmap
        self.degree_ = fit.calmap.degree
        self.ridge_ = fit.calmap.alpha
        self.selection_ = fit.selection
        self.n_samples_fit_ = n
        self.fit_rows_ = rows
        return self

    def _inputs(self, X, y, labels, counts, name, *, fitting):
        """(mean, var or None, labels, counts) from either calling convention (see :meth:`fit`)."""
        if not is_table(X):  # fit(mean, var, labels): the original convention
            if fitting and self.ndim == 1 and y is not None:
                cls = type(self).__name__
                if labels is None and counts is None and np.ndim(y) == 2:
                    raise ValueError(f"{name}(mean, var, labels) reads its second argument as 'var', and ndim=1 fits "
                                     f"on the mean alone; the labels seem to be there (a {np.shape(y)} array): call "
                                     f"{name.split('.')[-1]}(mean, None, labels), or pass X = mean[:, None] as "
                                     f"scikit-learn's fit(X, y).")
                hint = ""
                if labels is None and counts is None and np.ndim(y) == 1:
                    values = np.asarray(y)
                    if values.dtype.kind in "biuf" and np.isin(values, (0, 1)).all():  # 0/1: one label per item?
                        hint = (f" Its values are all 0 or 1: one label per item? call "
                                f"{name.split('.')[-1]}(mean, None, labels[:, None]), or pass X = mean[:, None] as "
                                f"scikit-learn's fit(X, y).")
                raise ValueError(f"The 'var' parameter of {name} must be None: {cls}(ndim=1) fits on the mean alone. "
                                 f"Pass var=None, or ndim=2 to fit on (mean, var).{hint}")
            return X, y, labels, counts
        if labels is not None:  # first: fit(X, labels=y) would otherwise be told that y is missing
            raise ValueError(f"With X of shape (n, {self.ndim}) as the first argument of {name}, the labels are the "
                             f"second argument y (scikit-learn's fit(X, y)); 'labels' must be None.")
        if y is None and counts is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None: {name}(X, y) "
                             f"needs the (n, k) 0/1 labels as y (or counts=(positives, trials)).")
        check_aligned(name, (("X", X), ("y", y), ("counts", counts)))
        m, v = self._columns(X, name, fitting=fitting)
        counts = _counts_pair(counts, name)
        if y is not None and np.ndim(y) == 1 and not self._second_order:
            y = np.asarray(y, dtype=float)[:, None]  # one label per item: a column (first order needs k >= 1)
        if y is not None and np.ndim(y) == 1:
            raise ValueError(f"The 'y' parameter of {name} must be an (n, k) array of 0/1 labels with k >= 2 per "
                             f"item (a k-snapshot; second order needs two labels per item), or pass "
                             f"counts=(positives, trials). Got a 1-dimensional array instead.")
        return m, v, y, counts

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
        statistics only.  Dask collections are read as :func:`socal.ce2` reads them, with one more pass over the
        partitions for the fingerprint of the fit rows (``fit_rows_``).  Returns self.
        """
        name = type(self).__name__ + ".fit"
        ndim, opts = self._settings(name)
        R = 2 if self._second_order else 1
        self.__dict__.pop("stats_", None)  # fit starts afresh; its statistics are kept for partial_fit
        if isinstance(X, SufficientStats):
            if y is not None or labels is not None or counts is not None:
                raise ValueError(f"With SufficientStats as the first argument of {name}, 'y', 'labels' and "
                                 f"'counts' must be None.")
            stats = _stats_for(X, ndim, R, name)  # a copy: partial_fit adds to it, never to the caller's
            fit, stats = fit_from(None, stats, opts, ndim, name, responses=R)
            self.stats_ = stats
            return self._finish_fit(fit, stats.n)  # the rows are not known: no fingerprint
        if not is_table(X):
            self.n_features_in_ = 2 if (ndim == 2 or y is not None) else 1
            self.__dict__.pop("feature_names_in_", None)
        mean, var, labels, counts = self._inputs(X, y, labels, counts, name, fitting=True)
        source, _ = data_source(name, ndim, mean, var if ndim == 2 else None, labels, counts, None, responses=R)
        fit, stats = fit_from(source, None, opts, ndim, name, responses=R)
        self.stats_ = stats
        # dask collections: the fingerprint takes a pass of its own (arrays: the one chunk at hand)
        rows = RowsFingerprint.of(*source.chunk) if isinstance(source, ArraySource) else source.map_reduce(
            fingerprint_pass)
        return self._finish_fit(fit, stats.n, rows)

    def partial_fit(self, X: ArrayLike, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
                    counts: Counts | None = None) -> _PlattBase:
        """Add a chunk to the statistics kept in ``stats_`` and refit from all rows seen so far.

        Calling conventions as in :meth:`fit`.  The first call builds the statistics at the cap ``max_degree`` (or
        the fixed ``degree``); each call refits (a cross-validated fit costs its selection each time: pass
        ``degree`` and ``ridge`` to make refits cheap).  The result equals :meth:`fit` on all chunks at once, up to
        float summation order, unless rows repeat (the same scores and labels): :meth:`fit` spreads those over the
        folds as separate items, while chunks added one by one cannot see each other's rows and keep each content
        in one fold (:meth:`socal.SufficientStats.update`).

        After :meth:`fit`, the chunk is added to the rows :meth:`fit` read, as scikit-learn's incremental
        estimators do (``StandardScaler``: ``fit`` starts afresh, ``partial_fit`` continues): :meth:`fit` keeps its
        statistics in ``stats_``.  Their cap is the largest degree :meth:`fit` could select for its rows
        (``max_degree``, or less where its training rows or ``h`` allowed less: the rule l = ceil(2 log n /
        log theta(h)) of :func:`socal.paper_degree` grows with n), and the rows themselves are gone, so the degrees
        stay within that cap; a warning says so when cross-validation chooses the cap itself and the rows seen since
        would allow a larger degree.  A recalibrator read by :meth:`load` or :meth:`from_dict` has no statistics (the
        file holds the map only): ``partial_fit`` then starts from its own chunk, and a warning says that the map
        read is replaced.
        """
        name = type(self).__name__ + ".partial_fit"
        ndim, opts = self._settings(name)
        R = 2 if self._second_order else 1
        if not is_table(X):
            self.n_features_in_ = 2 if (ndim == 2 or y is not None) else 1
        mean, var, labels, counts = self._inputs(X, y, labels, counts, name, fitting=True)
        rows = check_rows(name, ndim, mean, var if ndim == 2 else None, labels, counts, R)
        if not hasattr(self, "stats_"):
            if hasattr(self, "map_"):  # read from a file: the map has no statistics to add this chunk to
                warnings.warn(f"{name}: this {type(self).__name__} was read from a saved map, which keeps no "
                              f"statistics: the map is refitted on the rows given to partial_fit from here on, "
                              f"without the {self.n_samples_fit_} rows it was fitted on.", UserWarning,
                              stacklevel=2)
            self.stats_ = SufficientStats(max_degree=stream_cap(name, opts), ndim=ndim, folds=opts.folds,
                                          rng=opts.fold_rng, responses=R)
        self.stats_.add_validated(*rows)
        fit, _ = fit_from(None, self.stats_, opts, ndim, name, responses=R)
        st = self.stats_
        if fit.calmap.degree == st.max_degree < stream_cap(name, opts):  # fit's statistics' cap, and it binds
            top = resolve_degrees(name, opts.degree, opts.h, st.n, training_rows(st.n, st.folds, st.holdout),
                                  opts.max_degree, ndim)[0][0]
            if top > st.max_degree:
                warnings.warn(f"{name}: cross-validation chose degree {st.max_degree}, the largest the statistics "
                              f"kept by fit reach (the cap for the rows fit read); the {st.n} rows seen now would "
                              f"allow up to {top}, which these statistics cannot give (the rows are gone). Call fit "
                              f"on all rows, or build from the first chunk with partial_fit.", UserWarning,
                              stacklevel=2)
        before = getattr(self, "fit_rows_", None) if self.stats_.n > rows[0].shape[0] else RowsFingerprint()
        return self._finish_fit(fit, self.stats_.n, None if before is None else before.add(RowsFingerprint.of(*rows)))

    def fit_transform(self, X: ArrayLike, y: ArrayLike | None = None, labels: ArrayLike | None = None, *,
                      counts: Counts | None = None) -> Any:
        """:meth:`fit`, then :meth:`transform` of the same scores (same calling convention)."""
        self.fit(X, y, labels, counts=counts)
        return self.transform(X) if is_table(X) else self.transform(X, y)

    def _moments(self, X, var, name):
        """Projected (eta1-hat, eta2-hat) at the scores, and the input's row index when X was a DataFrame."""
        self._check_fitted()
        if is_table(X):
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
        if not is_table(X):
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
        if is_table(X):
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
        counts = _counts_pair(counts, name)
        if y is not None and np.ndim(y) == 1:
            y = np.asarray(y, dtype=float)[:, None]
        return y, counts

    # -- persistence -----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe description; :meth:`from_dict` rebuilds a map with bit-identical output."""
        self._check_fitted()
        params = {k: v for k, v in self.get_params().items() if k in self._saved}
        if not (isinstance(self.alpha, str) and self.alpha == RENAMED) and params["ridge"] is None:
            params["ridge"] = self.alpha  # the ridge given under its former name
        params["rng"] = params["rng"] if isinstance(params["rng"], (int, type(None))) else None
        rows = getattr(self, "fit_rows_", None)
        return {"format": FORMAT, "version": FORMAT_VERSION, "class": type(self).__name__, "params": params,
                "map": self.map_.to_dict(), "n_samples_fit": self.n_samples_fit_,
                "fit_rows": None if rows is None else rows.to_hex(),
                "fit_sketch": None if rows is None else rows.sketch_hex(),
                "fit_key_bits": None if rows is None else KEY_BITS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> _PlattBase:
        """Rebuild from :meth:`to_dict`'s output after checking its schema (keys, types, shapes, finiteness, format
        version); a ValueError names the field at fault.  Nothing read is evaluated."""
        params, mp, nf = check_saved(d, cls.__name__, cls._saved, 2 if cls._second_order else 1)
        obj = cls(**params)
        obj.map_ = CalibrationMap.from_dict(mp)
        obj.degree_, obj.ridge_ = obj.map_.degree, obj.map_.alpha
        obj.selection_ = None
        obj.n_samples_fit_ = nf
        where = f"{cls.__name__}.from_dict"
        obj.fit_rows_ = RowsFingerprint.from_hex(d.get("fit_rows"), where, d.get("fit_sketch"))
        bits = d.get("fit_key_bits")
        if not valid_key_bits(bits):
            raise ValueError(f"The field 'fit_key_bits' of {where} must be an int in [0, 52] or null. Got {bits!r} "
                             f"instead.")
        if obj.fit_rows_ is not None and bits != KEY_BITS:
            # the fingerprint hashes the rows' keys, whose rule changed (values rounded to KEY_BITS mantissa bits
            # since 2026-11-29; a map saved before has no field and keys of the exact bits): compared with today's
            # keys it would never match, and in-sample rows would pass for held-out ones
            warnings.warn(f"{where}: the fingerprint of the rows this map was fitted on was made with another rule "
                          f"for the rows' keys ({'exact bits' if bits is None else f'{bits} bits'}; this socal reads "
                          f"{KEY_BITS}), so evaluate_recalibrated cannot tell whether the items it is given are those "
                          f"rows; it is dropped.  Refit the map to record it again.", UserWarning, stacklevel=2)
            obj.fit_rows_ = None
        return obj

    def save(self, file: str | os.PathLike | Any) -> None:
        """Write :meth:`to_dict` as JSON to ``file`` (a path, or a text or binary file object, as :meth:`load` reads
        either); :meth:`load` reads it back with bit-identical output.  JSON, not pickle: loading a map never runs
        code from the file.  A path is written atomically (:func:`socal.files.atomic_write`: a process killed
        mid-save leaves the previous file); one that cannot be written is a ValueError naming it, as :meth:`load`'s
        is."""
        where = f"{type(self).__name__}.save"
        text = json.dumps(self.to_dict(), indent=1)
        if isinstance(file, (str, os.PathLike)):
            try:
                write_text_atomic(file, text)
            except OSError as exc:
                raise ValueError(f"{where}: {os.fspath(file)} cannot be written ({exc.strerror or exc}).") from None
        elif hasattr(file, "write"):
            binary = isinstance(file, (io.RawIOBase, io.BufferedIOBase)) or "b" in str(getattr(file, "mode", ""))
            file.write(text.encode("utf-8") if binary else text)
        else:
            raise TypeError(f"The 'file' parameter of {type(self).__name__}.save must be a path or a file object. "
                            f"Got {type(file).__name__} instead.")

    @classmethod
    def load(cls, file: str | os.PathLike | Any) -> _PlattBase:
        """Read what :meth:`save` wrote (a path, or a text or binary file object), checked field by field as
        :meth:`from_dict` checks a dict; a file that is not JSON is a ValueError naming it."""
        where = f"{cls.__name__}.load"
        if isinstance(file, (str, os.PathLike)):
            try:
                with open(file, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"{where}: {os.fspath(file)} cannot be read ({exc}).") from None
            name = os.fspath(file)
        elif hasattr(file, "read"):
            text, name = file.read(), "the file object"
        else:
            raise TypeError(f"The 'file' parameter of {where} must be a path or a file object. Got "
                            f"{type(file).__name__} instead.")
        try:
            d = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}: {name} is not a saved recalibrator (not JSON: {exc}).") from None
        return cls.from_dict(d)


def _counts_pair(counts, name):
    """``counts`` as a pair (positives, trials): a pair stays, an (n, 2) array gives its columns."""
    if counts is None or isinstance(counts, (tuple, list)):
        return counts
    c = check_array(counts, "counts", name, ndim=2)
    if c.shape[1] != 2:
        raise ValueError(f"The 'counts' parameter of {name} must be a pair (positives, trials) or an (n, 2) array "
                         f"with those columns. Got shape {c.shape} instead.")
    return c[:, 0], c[:, 1]


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
    h, degree, ridge, folds, max_degree, rng, search
        As in :func:`socal.ce2`: bandwidth (caps the degree), degree and relative ridge (None: cross-validated), and
        how the cross-validation searches the grid.
    alpha : deprecated
        The former name of ``ridge``: given, it is the ridge, with a FutureWarning at :meth:`fit`.

    Attributes
    ----------
    map_ : CalibrationMap
        The fitted calibration functions.
    degree_, ridge_ : int, float
        The degree and relative ridge used.
    selection_ : SelectionReport or None
        How they were chosen (None after :meth:`from_dict`).
    n_features_in_ : int
        Columns of X seen in :meth:`fit` (2 for (mean, var)).
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    stats_ : SufficientStats
        After :meth:`fit` or :meth:`partial_fit`: the statistics of the rows fitted on, to which :meth:`partial_fit`
        adds (not saved by :meth:`save`).

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

    ``transform`` returns (eta1-hat, 0): a first-order method asserts no epistemic variance.  With ``ndim=1``,
    ``transform(mean, var)`` checks ``var`` and does not read it, so the call is the same as
    :class:`SecondOrderPlatt`'s and the two swap in one line.  ``labels`` may have k >= 1 columns.  Parameters as
    in :class:`SecondOrderPlatt`.
    """

    _second_order = False

    def __init__(self, *, ndim: int = 1, h: float | None = None, degree: Any = None, ridge: Any = None,
                 folds: int | None = None, max_degree: int = DEFAULT_MAX_DEGREE, rng: Seed = None,
                 search: str = "greedy", alpha: Any = RENAMED) -> None:
        super().__init__(ndim=ndim, h=h, degree=degree, ridge=ridge, folds=folds, max_degree=max_degree, rng=rng,
                         search=search, alpha=alpha)
