"""Second-order Platt scaling (Section 6, Eq. (recal), (That)) and first-order Platt scaling for comparison.

The fitted map is (m, var) -> (eta1-hat, max(0, eta2-hat - eta1-hat^2)) after projecting (eta1-hat, eta2-hat) onto
the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1, where eta1-hat and eta2-hat are the
tensor-Chebyshev ridge regressions of :func:`socal.ce2` fitted on perturbed scores and k-snapshots.
"""

from __future__ import annotations

import numpy as np

from ._fit import DEFAULT_MAX_DEGREE, CalibrationMap, fit_calibration, target_classes, targets
from ._validation import check_bandwidth, check_choice, check_int, check_labels, check_mean, check_rng, check_scores
from .estimators import _resolve_alphas, _resolve_degrees

__all__ = ["SecondOrderPlatt", "FirstOrderPlatt", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """A recalibrator was used before ``fit`` (a ValueError and an AttributeError, as in scikit-learn)."""


class _PlattBase:
    _params = ("ndim", "h", "degree", "alpha", "folds", "max_degree", "rng")
    _second_order = True

    def __init__(self, *, ndim=2, h=None, degree=None, alpha=None, folds=5, max_degree=DEFAULT_MAX_DEGREE, rng=None):
        self.ndim = ndim
        self.h = h
        self.degree = degree
        self.alpha = alpha
        self.folds = folds
        self.max_degree = max_degree
        self.rng = rng

    # -- scikit-learn conventions --------------------------------------------------------------------------------
    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params):
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
    def fit(self, mean, var=None, labels=None, *, counts=None):
        """Fit on perturbed scores (mean, var) and labels ((n, k) 0/1, or ``counts=(positives, trials)``)."""
        name = type(self).__name__ + ".fit"
        ndim = check_choice(self.ndim, "ndim", type(self).__name__, (1, 2))
        if ndim == 2 or var is not None:
            m, v = check_scores(mean, var, name)
        else:
            m, v = check_mean(mean, name), None
        n = m.shape[0]
        a, k = check_labels(labels, n, name, counts=counts, min_k=2 if self._second_order else 1)
        h = check_bandwidth(self.h, type(self).__name__, allow_none=True)
        folds = check_int(self.folds, "folds", type(self).__name__, 2, 100)
        max_degree = check_int(self.max_degree, "max_degree", type(self).__name__, 0, 200)
        n_train = n - -(-n // folds)
        degs, sel_d = _resolve_degrees(name, self.degree, h, n, n_train, max_degree, ndim)
        alphas, sel_a = _resolve_alphas(name, self.alpha)
        R = 2 if self._second_order else 1
        z1, z2 = targets(a, k)
        zs = np.column_stack([z1, z2])[:, :R]
        fit = fit_calibration(m, v if ndim == 2 else None, zs, degrees=degs, alphas=alphas, folds=folds,
                              holdout=None, rng=check_rng(self.rng), select=sel_d or sel_a,
                              classes=target_classes(a, k, R))
        self.map_ = fit.cmap
        self.degree_ = fit.cmap.degree
        self.alpha_ = fit.cmap.alpha
        self.selection_ = fit.selection
        self.n_samples_fit_ = n
        return self

    def fit_transform(self, mean, var=None, labels=None, *, counts=None):
        return self.fit(mean, var, labels, counts=counts).transform(mean, var)

    def _moments(self, mean, var):
        """Projected (eta1-hat, eta2-hat) at the scores."""
        self._check_fitted()
        name = type(self).__name__ + ".transform"
        if self.map_.ndim == 2 or var is not None:
            m, v = check_scores(mean, var, name)
        else:
            m, v = check_mean(mean, name), None
        pred = self.map_.predict(m, v if self.map_.ndim == 2 else None, project=True)
        if pred.shape[1] == 1:  # first order: eta2 := eta1^2
            pred = np.column_stack([pred[:, 0], pred[:, 0] ** 2])
        return pred[:, 0], pred[:, 1]

    def predict_moments(self, mean, var=None):
        """(eta1-hat, eta2-hat), projected onto the feasible moment region."""
        return self._moments(mean, var)

    def transform(self, mean, var=None):
        """Recalibrated scores (m', var') = (eta1-hat, max(0, eta2-hat - eta1-hat^2)) (Eq. (That))."""
        e1, e2 = self._moments(mean, var)
        return e1, np.maximum(0.0, e2 - e1 * e1)

    # -- persistence -----------------------------------------------------------------------------------------------
    def to_dict(self):
        """JSON-safe description; :meth:`from_dict` rebuilds a map with bit-identical output."""
        self._check_fitted()
        params = self.get_params()
        params["rng"] = params["rng"] if isinstance(params["rng"], (int, type(None))) else None
        return {"class": type(self).__name__, "params": params, "map": self.map_.to_dict(),
                "n_samples_fit": self.n_samples_fit_}

    @classmethod
    def from_dict(cls, d):
        if d.get("class") != cls.__name__:
            raise ValueError(f"The 'd' parameter of {cls.__name__}.from_dict must describe a {cls.__name__}. "
                             f"Got {d.get('class')!r} instead.")
        obj = cls(**d["params"])
        obj.map_ = CalibrationMap.from_dict(d["map"])
        obj.degree_, obj.alpha_ = obj.map_.degree, obj.map_.alpha
        obj.selection_ = None
        obj.n_samples_fit_ = int(d["n_samples_fit"])
        return obj


class SecondOrderPlatt(_PlattBase):
    """Second-order Platt scaling: recalibrate both the mean and the epistemic variance.

    Parameters
    ----------
    ndim : {2, 1}
        2: eta1, eta2 are functions of (mean, var) (the paper's method).  1: functions of the mean only.
    h, degree, alpha, folds, max_degree, rng
        As in :func:`socal.ce2`: bandwidth (caps the degree), degree and relative ridge (None: cross-validated).

    Attributes
    ----------
    map_ : the fitted calibration functions; degree_, alpha_ : what was used; selection_ : the CV report.

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

    def __init__(self, *, ndim=1, h=None, degree=None, alpha=None, folds=5, max_degree=DEFAULT_MAX_DEGREE, rng=None):
        super().__init__(ndim=ndim, h=h, degree=degree, alpha=alpha, folds=folds, max_degree=max_degree, rng=rng)
