"""The polynomial estimators of CE2 (Eq. (erm1), (erm2), (cehat)) and CE1 (Remark "First-Order Calibration")."""

from __future__ import annotations

import math

import numpy as np

from ._fit import (DEFAULT_ALPHAS, DEFAULT_MAX_DEGREE, MIN_DEGREE, CalibrationMap, degree_schedule, fit_calibration,
                   paper_degree, response_moments, target_classes, targets)
from ._progress import progress
from ._results import CalibrationError, ConfidenceInterval
from ._validation import (check_bandwidth, check_float, check_int, check_labels, check_mean, check_rng,
                          check_scores)
from .chebyshev import response_vector

__all__ = ["ce2", "ce1", "calibration_functions", "CalibrationFunctions"]

_MAX_DEGREE_LIMIT = 200


def _resolve_degrees(func, degree, h, n, n_train, max_degree, ndim, use_h_floor=True):
    """Candidate degrees (largest first) and whether they are to be selected."""
    size = (lambda l: (l + 1) ** ndim)
    if isinstance(degree, str):
        if degree != "paper":
            raise ValueError(f"The 'degree' parameter of {func} must be None, 'paper', an int in the range [0, "
                             f"{_MAX_DEGREE_LIMIT}] or a list of such ints. Got {degree!r} instead.")
        if h is None:
            raise ValueError(f"The 'h' parameter of {func} must be given when degree='paper' (the rule "
                             f"l = ceil(2 log n / log theta(h)) needs it). Got None instead.")
        degree = paper_degree(n, h)
        if degree > _MAX_DEGREE_LIMIT:
            raise ValueError(f"The paper's degree rule gives l = {degree} at n = {n}, h = {h}, above the limit "
                             f"{_MAX_DEGREE_LIMIT}; pass degree=None (cross-validated, capped) instead.")
    if degree is None:
        lmax = max_degree
        if h is not None:
            lmax = min(lmax, paper_degree(n, h))
        while lmax > 0 and size(lmax) > n_train:  # primal ridge: no more features than training rows
            lmax -= 1
        floor = min(MIN_DEGREE, lmax)
        if h is not None and use_h_floor:
            # Calibration functions at bandwidth h can have structure of width ~h (populations with atoms do); below
            # l ~ 1/(pi h) the polynomial cannot follow it, and cross-validated squared error, nearly flat there,
            # picks fits that bias CE2 downwards.  Measured at h = 1/64, n = 5e4, CV alone (3 seeds): atoms of
            # socal.synthetic.calibrated_population -0.017, -0.017, -0.006; with the floor +0.007, +0.007, +0.008.
            # On the smooth scores of Experiment 1's ensemble the floor costs instead (h = 1/64: n = 2e4, +0.02
            # against +-0.003; n = 5e4, +0.01 against +-0.002), so it applies only with >= 50 training rows per
            # coefficient.  Neither rule is right for every population: pass ``degree`` to choose yourself.
            floor_h = math.ceil(1.0 / (math.pi * h))
            if 50 * size(floor_h) <= n_train:
                floor = min(max(floor, floor_h), lmax)
        return degree_schedule(lmax, floor), True
    if isinstance(degree, (list, tuple, np.ndarray)):
        degs = tuple(sorted({check_int(d, "degree", func, 0, _MAX_DEGREE_LIMIT) for d in degree}, reverse=True))
        if not degs:
            raise ValueError(f"The 'degree' parameter of {func} must not be an empty list. Got [] instead.")
        select = len(degs) > 1
    else:
        degs = (check_int(degree, "degree", func, 0, _MAX_DEGREE_LIMIT),)
        select = False
    limit = n_train if select else n
    if size(degs[0]) > limit:
        raise ValueError(f"The 'degree' parameter of {func} must satisfy (degree+1)^{ndim} <= {limit} (n too small "
                         f"for the degree: {limit} rows to fit {size(degs[0])} coefficients). Got {degs[0]} instead.")
    return degs, select


def _resolve_alphas(func, alpha):
    if alpha is None:
        return DEFAULT_ALPHAS, True
    if isinstance(alpha, (list, tuple, np.ndarray)):
        al = tuple(sorted({check_float(a, "alpha", func, 0.0, 1e6) for a in alpha}))
        return al, len(al) > 1
    return (check_float(alpha, "alpha", func, 0.0, 1e6),), False


def _common(func, mean, var, labels, counts, h, degree, alpha, folds, holdout, max_degree, rng, ci, n_boot):
    if var is None:
        m = check_mean(mean, func)
        v = None
    else:
        m, v = check_scores(mean, var, func)
    n = m.shape[0]
    a, k = check_labels(labels, n, func, counts=counts, min_k=1 if var is None else 2)
    h = check_bandwidth(h, func, allow_none=True)
    folds = check_int(folds, "folds", func, 2, 100)
    holdout = check_float(holdout, "holdout", func, 0.0, 1.0, lo_open=True, hi_open=True, allow_none=True)
    max_degree = check_int(max_degree, "max_degree", func, 0, _MAX_DEGREE_LIMIT)
    ci = check_float(ci, "ci", func, 0.0, 1.0, lo_open=True, hi_open=True, allow_none=True)
    n_boot = check_int(n_boot, "n_boot", func, 20, 1_000_000)
    if n < 2 * folds:
        raise ValueError(f"The 'mean' parameter of {func} must have at least {2 * folds} items (2 per fold). "
                         f"Got {n} instead.")
    n_train = int(n * (1 - holdout)) if holdout is not None else n - -(-n // folds)
    ndim = 1 if v is None else 2
    degs, sel_d = _resolve_degrees(func, degree, h, n, n_train, max_degree, ndim)
    alphas, sel_a = _resolve_alphas(func, alpha)
    return m, v, a, k, h, degs, alphas, sel_d or sel_a, folds, holdout, check_rng(rng), ci, n_boot, n


def _terms(pred, m, v):
    t1 = np.abs(pred[:, 0] - m)
    if v is None:
        return t1, np.zeros_like(t1)
    return t1, np.abs(pred[:, 1] - (m * m + v))


def _beta_sample(p1, p2, rng):
    """f ~ a distribution on [0, 1] with mean p1 and second moment p2 (Beta; point mass or Bernoulli at the ends)."""
    var = np.clip(p2 - p1 * p1, 0.0, None)
    top = p1 * (1.0 - p1)
    f = p1.copy()
    bern = var >= top * (1 - 1e-9)
    f[bern] = (rng.random(int(bern.sum())) < p1[bern]).astype(float)
    mid = (var > 1e-12) & ~bern
    if np.any(mid):
        s = top[mid] / var[mid] - 1.0  # Beta(a, b) with a + b = s matches mean and variance
        f[mid] = rng.beta(p1[mid] * s, (1.0 - p1[mid]) * s)
    return f


def _bootstrap(fit, m, v, k, est, n_boot, rng, level, show):
    """Parametric bootstrap from the fitted calibration functions (degree and alpha held fixed).

    The world: scores as observed, f* ~ Beta with the fitted (projected) moments, labels ~ Binomial(k, f*).  Each
    replicate refits through the stored Cholesky factor (the Gram depends on the scores only) and averages the
    absolute errors with multinomial weights over items (the sampling of scores in the outer average).
    """
    cmap = fit.cmap
    basis = cmap.basis
    p = cmap.predict(m, v, project=True)
    t1, t2 = _terms(p, m, v)
    truth_world = float(t1.mean() + t2.mean())
    p1 = p[:, 0]
    p2 = p[:, 1] if v is not None else p1 * p1  # first order: f* = p1 exactly
    n = m.shape[0]
    deltas = np.empty(n_boot)
    batch = 16
    for start in progress(range(0, n_boot, batch), show, desc="bootstrap", total=-(-n_boot // batch)):
        reps = range(start, min(start + batch, n_boot))
        Z = []
        for _ in reps:
            f = _beta_sample(p1, p2, rng)
            a = rng.binomial(k.astype(np.int64), f).astype(float)
            z1, z2 = targets(a, k)
            Z.extend([z1, z2] if v is not None else [z1])
        Z = np.column_stack(Z)
        W = response_moments(fit.u, fit.w, Z, basis.degree, basis.deg_w)
        R = 2 if v is not None else 1
        for j, r in enumerate(reps):
            b = np.stack([response_vector(W[j * R + q], basis) for q in range(R)], axis=1)
            beta = fit.factor.solve(b)
            pred = CalibrationMap(cmap.degree, cmap.ndim, beta, cmap.alpha).predict(m, v)
            s1, s2 = _terms(pred, m, v)
            wts = rng.multinomial(n, np.full(n, 1.0 / n))
            deltas[r] = float(wts @ (s1 + s2)) / n - truth_world
    bias = float(deltas.mean())
    debiased = max(est - bias, 0.0)
    ci = None
    if level is not None:
        lo_q, hi_q = np.quantile(deltas, [(1 - level) / 2, (1 + level) / 2])
        ci = ConfidenceInterval(max(est - hi_q, 0.0), max(est - lo_q, 0.0), level)
    return bias, debiased, ci


_ESTIMATOR_NOTES = """
    Bias at small n.  The plug-in L1 error is biased upwards when the truth is small, since noise in eta-hat
    can only add to |eta-hat - score| on average.  Measured by benchmarks/bias_small_n.py on the raw-calibrated
    population of :func:`socal.synthetic.calibrated_population` (h = 1/16, CE2^pert = 0.0965, 20 replicates per
    n, default CV): mean plug-in bias +0.052 at n = 500, +0.017 at n = 2000, +0.004 at n = 10000; after
    ``debias=True`` +0.016, -0.0005 and -0.0004.  The 90% interval covered the truth in 65%, 90% and 80% of the
    replicates (it undercovers at n = 500; see README "Bias at small n").  ``debias=True``
    subtracts a parametric-bootstrap estimate of that bias: labels are redrawn from the fitted, projected
    calibration functions (f* ~ Beta with the fitted moments; Binomial(k, f*) labels), the polynomial is refitted
    at the selected degree and alpha, and the mean excess of the refitted estimates over the bootstrap world's
    truth is the bias.

    ``ci=level`` returns the basic bootstrap interval from the same replicates.  It covers label noise (with the
    refit) and the sampling of scores in the final average (multinomial weights over items); it does not cover
    the randomness of the degree/alpha selection, nor how the fitted polynomial would move with a fresh draw of
    scores, and it inherits any bias of the fitted calibration functions themselves.
"""


def ce2(mean, var, labels=None, *, counts=None, h=None, degree=None, alpha=None, folds=5, holdout=None,
        max_degree=DEFAULT_MAX_DEGREE, ci=None, debias=False, n_boot=200, rng=None, progress=False):
    """Estimate the second-order calibration error CE2 of a sech-perturbed predictor.

    .. math::

        \\widehat{CE}_2 = \\frac1n\\sum_i |\\hat\\eta_1(S_i) - \\tilde m_i|
                        + \\frac1n\\sum_i |\\hat\\eta_2(S_i) - (\\tilde m_i^2 + \\tilde\\sigma^2_i)|

    (Eq. (cehat)), where eta1-hat and eta2-hat are tensor-Chebyshev ridge regressions of the targets
    a/k and a(a-1)/(k(k-1)) on the score (Eq. (erm1), (erm2); for k = 2 these are (y1 + y2)/2 and y1 y2, unbiased
    for f* and f*^2), clipped to [0, 1].

    Parameters
    ----------
    mean, var : array_like, shape (n,)
        The *perturbed* scores the deployed predictor outputs (see :func:`socal.perturb`): mean in [0, 1],
        var in [0, 1/4].  The estimate is of CE2 of that perturbed predictor, CE2^pert.
    labels : array_like, shape (n, k), k >= 2
        k-snapshot labels in {0, 1}, k i.i.d. draws from Bernoulli(f*(x)) per item.
    counts : tuple (positives, trials), optional
        Instead of ``labels``: per-item counts of positive labels and of labels (trials >= 2, may vary by item).
    h : float, optional
        The perturbation bandwidth.  With it the degree is capped by the paper's rule l = ceil(2 log n / log theta(h)).
    degree : None, 'paper', int or list of ints
        None: cross-validated over a halving schedule from min(max_degree, paper rule, sqrt(n_train) - 1) down to
        4, or, when ``h`` is given and there are at least 50 training rows per coefficient, down to
        ceil(1/(pi h)) (a heuristic: see the comment in ``_resolve_degrees`` for what it gains and costs).  'paper': exactly the paper's rule (needs ``h``).  An int: that degree.  A list: chosen from it.
    alpha : None, float or list of floats
        Relative ridge: lambda = alpha tr(G)/d.  None: chosen from 1e-6, 1e-5, ..., 1.
    folds : int
        K of K-fold cross-validation (the paper's "ERM, CV").  Ignored when nothing is to be selected.
    holdout : float, optional
        Select on one random hold-out split of this fraction instead of K-fold CV (the paper's "val" variant).
    max_degree : int
        Cap of the automatic schedule (44, the paper's cap at h = 1/16; it used 88 at h = 1/64).
    ci : float, optional
        Confidence level of a bootstrap interval (e.g. 0.9).
    debias : bool
        Also compute the bias-corrected estimate (see Notes).
    n_boot : int
        Bootstrap replicates for ``ci`` and ``debias``.
    rng : numpy.random.Generator or int, optional
        Fold assignment and bootstrap.  Same seed, same numbers.
    progress : bool
        Show a progress bar during the bootstrap (needs tqdm).

    Returns
    -------
    CalibrationError

    Notes
    -----""" + _ESTIMATOR_NOTES + """
    Examples
    --------
    >>> import numpy as np, socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(5000, h=1/16, rng=0)
    >>> res = socal.ce2(m, v, y, h=1/16, rng=0)
    >>> abs(res.estimate - pop.ce2(h=1/16)) < 0.05
    True
    """
    (m, v, a, k, h, degs, alphas, select, folds, holdout, rng, ci, n_boot, n) = _common(
        "ce2", mean, var, labels, counts, h, degree, alpha, folds, holdout, max_degree, rng, ci, n_boot)
    z1, z2 = targets(a, k)
    fit = fit_calibration(m, v, np.column_stack([z1, z2]), degrees=degs, alphas=alphas, folds=folds,
                          holdout=holdout, rng=rng, select=select, classes=target_classes(a, k, 2))
    return _finish("ce2", fit, m, v, k, h, n, ci, debias, n_boot, rng, progress)


def ce1(mean, labels=None, *, counts=None, h=None, degree=None, alpha=None, folds=5, holdout=None,
        max_degree=DEFAULT_MAX_DEGREE, ci=None, debias=False, n_boot=200, rng=None, progress=False):
    """Estimate the first-order calibration error CE1 = E|E[Y | m~] - m~| of a sech-perturbed predictor.

    The one-dimensional version of :func:`ce2` (Remark "First-Order Calibration"): a Chebyshev ridge regression of
    a/k on the perturbed mean, clipped to [0, 1], then (1/n) sum_i |eta-hat(m_i) - m_i|.  ``labels`` may have
    k >= 1 columns.  Parameters as in :func:`ce2`; ``moment_term`` of the result is 0.

    Notes
    -----""" + _ESTIMATOR_NOTES + """
    For CE1 the bootstrap world draws labels with f* equal to the fitted eta1 (no spread of f* given the score).

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(5000, h=1/16, rng=0)
    >>> abs(socal.ce1(m, y, h=1/16, rng=0).estimate - pop.ce1(h=1/16)) < 0.05
    True
    """
    (m, _, a, k, h, degs, alphas, select, folds, holdout, rng, ci, n_boot, n) = _common(
        "ce1", mean, None, labels, counts, h, degree, alpha, folds, holdout, max_degree, rng, ci, n_boot)
    z1, _ = targets(a, k)
    fit = fit_calibration(m, None, z1[:, None], degrees=degs, alphas=alphas, folds=folds, holdout=holdout,
                          rng=rng, select=select, classes=target_classes(a, k, 1))
    return _finish("ce1", fit, m, None, k, h, n, ci, debias, n_boot, rng, progress)


def _finish(kind, fit, m, v, k, h, n, ci, debias, n_boot, rng, show):
    pred = fit.cmap.predict(m, v)
    t1, t2 = _terms(pred, m, v)
    mean_term, moment_term = float(t1.mean()), float(t2.mean())
    est = mean_term + moment_term
    bias = debiased = interval = None
    if ci is not None or debias:
        bias, debiased, interval = _bootstrap(fit, m, v, k, est, n_boot, rng, ci, show)
    return CalibrationError(estimate=est, mean_term=mean_term, moment_term=moment_term, degree=fit.cmap.degree,
                            alpha=fit.cmap.alpha, n=n, h=h, ci=interval, debiased=debiased, bias=bias,
                            selection=fit.selection, kind=kind)


class CalibrationFunctions:
    """Fitted calibration functions eta1, eta2 as callables of (mean, var).

    Returned by :func:`calibration_functions`.  ``eta1(mean, var)`` and ``eta2(mean, var)`` evaluate at perturbed
    scores; calling the object returns both.  With ``project=True`` the pair is projected onto the feasible moment
    region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1; otherwise each is clipped to [0, 1].
    """

    def __init__(self, cmap, project):
        self.map = cmap
        self.project = project

    @property
    def degree(self):
        return self.map.degree

    @property
    def alpha(self):
        return self.map.alpha

    def __call__(self, mean, var):
        m, v = check_scores(mean, var, "CalibrationFunctions")
        out = self.map.predict(m, v, project=self.project)
        return out[:, 0], out[:, 1]

    def eta1(self, mean, var):
        return self(mean, var)[0]

    def eta2(self, mean, var):
        return self(mean, var)[1]

    def __repr__(self):
        return f"CalibrationFunctions(degree={self.degree}, alpha={self.alpha:g}, project={self.project})"


def calibration_functions(mean, var, labels=None, *, counts=None, h=None, degree=None, alpha=None, folds=5,
                          holdout=None, max_degree=DEFAULT_MAX_DEGREE, project=True, rng=None):
    """Fit eta1(s) = E[Y | S = s] and eta2(s) = E[f*(X)^2 | S = s] of a sech-perturbed predictor.

    The regressions of :func:`ce2` (Eq. (erm1), (erm2)), returned as callables.  ``mean``, ``var`` are the
    perturbed scores the deployed predictor outputs.  Parameters as in :func:`ce2`.

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(4000, h=1/16, rng=1)
    >>> cf = socal.calibration_functions(m, v, y, h=1/16, rng=0)
    >>> e1, e2 = cf(m[:3], v[:3])
    >>> bool(((e1**2 <= e2 + 1e-12) & (e2 <= e1 + 1e-12)).all())
    True
    """
    (m, v, a, k, h, degs, alphas, select, folds, holdout, rng, _, _, _) = _common(
        "calibration_functions", mean, var, labels, counts, h, degree, alpha, folds, holdout, max_degree, rng,
        None, 200)
    z1, z2 = targets(a, k)
    fit = fit_calibration(m, v, np.column_stack([z1, z2]), degrees=degs, alphas=alphas, folds=folds,
                          holdout=holdout, rng=rng, select=select, classes=target_classes(a, k, 2))
    return CalibrationFunctions(fit.cmap, bool(project))

