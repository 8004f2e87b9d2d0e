"""scikit-learn's conventions for the recalibrators, without importing scikit-learn.

:class:`TransformerConventions` gives a recalibrator what scikit-learn's tools expect of a transformer:
``get_params``/``set_params`` over the constructor's parameters, a repr of the non-default ones, ``set_output``,
``get_feature_names_out``, tags, and the checks of a 2-D ``X`` (feature count and names remembered at ``fit``, as
``check_estimator`` requires).  scikit-learn is optional: it is imported only by ``__sklearn_tags__``, which only
scikit-learn calls.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._validation import check_array, check_mean, check_scores
from .sufficient import SufficientStats

__all__ = ["TransformerConventions", "is_table", "sklearn_expected_failed_checks"]


class TransformerConventions:
    """Mixin: scikit-learn's transformer conventions for a class with ``_params`` (the constructor's parameter
    names), ``ndim``, ``_second_order`` and, once fitted, ``map_``."""

    _params: tuple = ()
    _second_order = True

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters, as scikit-learn's get_params gives them."""
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params: Any) -> TransformerConventions:
        """Set constructor parameters by name (scikit-learn's set_params); an unknown name is a ValueError."""
        for k, v in params.items():
            if k not in self._params:
                raise ValueError(f"Invalid parameter {k!r} for {type(self).__name__}; valid: "
                                 f"{', '.join(self._params)}.")
            setattr(self, k, v)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._params
                         if getattr(self, k) != type(self)().get_params()[k])
        return f"{type(self).__name__}({args})"

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

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of :meth:`transform`'s output columns: ('mean', 'var').

        ``input_features``, when given, is checked as scikit-learn checks it: as many names as the features seen at
        ``fit``, and the same names when ``fit`` saw named columns (a ValueError otherwise); the output names do
        not depend on it."""
        if input_features is not None:
            self._check_fitted()
            names = np.asarray(input_features, dtype=object)
            fitted, count = getattr(self, "feature_names_in_", None), getattr(self, "n_features_in_", None)
            if names.ndim != 1 or (count is not None and len(names) != count):
                raise ValueError(f"The 'input_features' parameter of {type(self).__name__}.get_feature_names_out "
                                 f"must name the {count or 'input'} feature(s) seen at fit. Got "
                                 f"{list(np.atleast_1d(names))!r} instead.")
            if fitted is not None and not np.array_equal(names, fitted):
                raise ValueError(f"The 'input_features' parameter of {type(self).__name__}.get_feature_names_out "
                                 f"must equal the feature names seen at fit ({list(fitted)!r}). Got {list(names)!r} "
                                 f"instead.")
        return np.asarray(["mean", "var"], dtype=object)

    def set_output(self, *, transform: str | None = None) -> TransformerConventions:
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


def is_table(x):
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
