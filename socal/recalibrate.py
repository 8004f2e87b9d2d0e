"""Second-order Platt scaling (Section 6, Eq. (recal), (That)) and first-order Platt scaling for comparison.

The fitted map is (m, var) -> (eta1-hat, max(0, eta2-hat - eta1-hat^2)) after projecting (eta1-hat, eta2-hat) onto
the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1, where eta1-hat and eta2-hat are the
tensor-Chebyshev ridge regressions of :func:`socal.ce2` fitted on perturbed scores and k-snapshots.
"""

from __future__ import annotations

import math

import numpy as np

from ._fit import DEFAULT_MAX_DEGREE, CalibrationMap
from ._validation import check_choice, check_mean, check_scores
from .estimators import _fit_from, _settings, _source, _stream_cap
from .sufficient import SufficientStats

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
    def _settings(self, name):
        ndim = check_choice(self.ndim, "ndim", type(self).__name__, (1, 2))
        st = _settings(type(self).__name__, self.h, self.degree, self.alpha, self.folds, None, self.max_degree,
                       self.rng, None, 200)
        return ndim, st

    def _finish_fit(self, fit, n):
        self.map_ = fit.cmap
        self.degree_ = fit.cmap.degree
        self.alpha_ = fit.cmap.alpha
        self.selection_ = fit.selection
        self.n_samples_fit_ = n
        return self

    def fit(self, mean, var=None, labels=None, *, counts=None):
        """Fit on perturbed scores (mean, var) and labels ((n, k) 0/1, or ``counts=(positives, trials)``).

        ``mean`` may instead be a :class:`socal.SufficientStats` (built with the same ``ndim``; for the first-order
        class with ``responses=1`` or from 2-D statistics whose second response is then ignored): the fit needs the
        statistics only.
        """
        name = type(self).__name__ + ".fit"
        ndim, st = self._settings(name)
        R = 2 if self._second_order else 1
        self.__dict__.pop("stats_", None)  # fit starts afresh; partial_fit accumulates from here
        if isinstance(mean, SufficientStats):
            if var is not None or labels is not None or counts is not None:
                raise ValueError(f"With SufficientStats as the first argument of {name}, 'var', 'labels' and "
                                 f"'counts' must be None.")
            stats = _stats_for(mean, ndim, R, name)
            fit, stats = _fit_from(None, stats, st, ndim, name, responses=R)
            return self._finish_fit(fit, stats.n)
        source, _ = _source(name, ndim, mean, var if ndim == 2 else None, labels, counts, None, responses=R)
        fit, stats = _fit_from(source, None, st, ndim, name, responses=R)
        return self._finish_fit(fit, stats.n)

    def partial_fit(self, mean, var=None, labels=None, *, counts=None):
        """Add a chunk to the statistics kept in ``stats_`` and refit from all chunks seen so far.

        The statistics are built at the cap ``max_degree`` (or the fixed ``degree``); each call refits (a
        cross-validated fit costs its selection each time: pass ``degree`` and ``alpha`` to make refits cheap).
        The result equals :meth:`fit` on all chunks at once, up to float summation order.
        """
        name = type(self).__name__ + ".partial_fit"
        ndim, st = self._settings(name)
        R = 2 if self._second_order else 1
        if not hasattr(self, "stats_"):
            self.stats_ = SufficientStats(max_degree=_stream_cap(name, st), ndim=ndim, folds=st.folds,
                                          rng=st.fold_rng, responses=R)
        self.stats_.update(mean, var if ndim == 2 else None, labels, counts=counts)
        fit, _ = _fit_from(None, self.stats_, st, ndim, name, responses=R)
        return self._finish_fit(fit, self.stats_.n)

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
        return {"format": FORMAT, "version": FORMAT_VERSION, "class": type(self).__name__, "params": params,
                "map": self.map_.to_dict(), "n_samples_fit": self.n_samples_fit_}

    @classmethod
    def from_dict(cls, d):
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
                  "h": lambda x: x is None or (_is_real(x) and 0 < x <= 1e6),
                  "degree": lambda x: x is None or x == "paper" or _is_int(x, 0, 200)
                  or (isinstance(x, list) and len(x) > 0 and all(_is_int(e, 0, 200) for e in x)),
                  "alpha": lambda x: x is None or (_is_real(x) and 0 <= x <= 1e6)
                  or (isinstance(x, list) and len(x) > 0 and all(_is_real(e) and 0 <= e <= 1e6 for e in x)),
                  "folds": lambda x: _is_int(x, 2, 100), "max_degree": lambda x: _is_int(x, 0, 200),
                  "rng": lambda x: x is None or _is_int(x, 0, 2**63 - 1)}
        for key, ok in checks.items():
            if not ok(params[key]):
                raise bad(f"params.{key}", "of the type and range the constructor takes", params[key])
        mp = d["map"]
        if not isinstance(mp, dict) or set(mp) != {"degree", "ndim", "alpha", "beta"}:
            raise bad("map", "a dict with keys degree, ndim, alpha, beta", mp if not isinstance(mp, dict) else sorted(mp))
        if not _is_int(mp["degree"], 0, 200):
            raise bad("map.degree", "an int in [0, 200]", mp["degree"])
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


FORMAT = "socal.recalibrator"
FORMAT_VERSION = 1


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
