"""The polynomial estimators of CE2 (Eq. (erm1), (erm2), (cehat)) and CE1 (Remark "First-Order Calibration")."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .sources import ArraySource, ChunkSource, DaskSource, is_dask
from .fitting import (DEFAULT_ALPHAS, DEFAULT_MAX_DEGREE, MIN_DEGREE, SEARCHES, degree_schedule, paper_degree,
                   select_and_fit)
from ._results import CalibrationError, ConfidenceInterval, UpperBound
from ._typing import Alpha, ArrayLike, Chunks, Counts, Degree, Seed
from ._validation import (bandwidth_axes, check_bandwidth, check_choice, check_float, check_int, check_labels,
                          check_mean, check_rng, check_scores)
from .bootstrap import PoissonWeights, bootstrap
from .sufficient import DeviationStats, SufficientStats

__all__ = ["ce2", "ce1", "calibration_functions", "CalibrationFunctions"]

_MAX_DEGREE_LIMIT = 200


def _scalar(x):
    """0-d numpy arrays as their Python scalar (a degree of np.array(4) is the degree 4)."""
    return x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x


def resolve_degrees(func, degree, h, n, n_train, max_degree, ndim, use_h_floor=True):
    """Candidate degrees (largest first) and whether they are to be selected."""
    size = (lambda l: (l + 1) ** ndim)
    degree = _scalar(degree)
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
            # coefficient.  Neither rule is right for every population: pass ``degree`` to choose yourself.  (The
            # floor serves the plug-in alone and the function fits; the bias-corrected CE estimate passes
            # use_h_floor=False and compares finer degrees of the schedule with CV's instead: _choose_degree.)
            floor_h = resolution_degree(h)
            if 50 * size(floor_h) <= n_train:
                floor = min(max(floor, floor_h), lmax)
        return degree_schedule(lmax, floor), True
    if isinstance(degree, (list, tuple, np.ndarray)):
        if np.ndim(degree) != 1 or len(degree) == 0:
            raise ValueError(f"The 'degree' parameter of {func} must be None, 'paper', an int in the range [0, "
                             f"{_MAX_DEGREE_LIMIT}] or a non-empty list of such ints. Got {degree!r} instead.")
        degs = tuple(sorted({check_int(_scalar(d), "degree", func, 0, _MAX_DEGREE_LIMIT) for d in degree},
                            reverse=True))
        select = len(degs) > 1
    else:
        degs = (check_int(degree, "degree", func, 0, _MAX_DEGREE_LIMIT),)
        select = False
    limit = n_train if select else n
    if size(degs[0]) > limit:
        raise ValueError(f"The 'degree' parameter of {func} must satisfy (degree+1)^{ndim} <= {limit} (n too small "
                         f"for the degree: {limit} rows to fit {size(degs[0])} coefficients). Got {degs[0]} instead.")
    return degs, select


def resolution_degree(h):
    """ceil(1/(pi h)): the degree below which a polynomial cannot follow structure of width ~h in the score.

    Per axis (h_mean, h_var): structure of width h_var on [0, 1/4] is as fine as width 4 h_var on [0, 1], so the
    finer of h_mean and 4 h_var decides.
    """
    h_mean, h_var = bandwidth_axes(h)
    return math.ceil(1.0 / (math.pi * min(h_mean, 4.0 * h_var)))


def resolve_alphas(func, alpha):
    alpha = _scalar(alpha)
    if alpha is None:
        return DEFAULT_ALPHAS, True
    if isinstance(alpha, (list, tuple, np.ndarray)):
        if np.ndim(alpha) != 1 or len(alpha) == 0:
            raise ValueError(f"The 'alpha' parameter of {func} must be None, a float in [0, 1e6] or a non-empty list "
                             f"of such floats. Got {alpha!r} instead.")
        al = tuple(sorted({check_float(_scalar(a), "alpha", func, 0.0, 1e6) for a in alpha}))
        return al, len(al) > 1
    return (check_float(alpha, "alpha", func, 0.0, 1e6),), False


@dataclass(frozen=True)
class _Settings:
    """Validated options of an estimator call (everything but the data)."""

    h: float | None
    degree: object
    alpha: object
    folds: int
    holdout: float | None
    max_degree: int
    rng: np.random.Generator
    fold_rng: np.random.Generator | None  # the same generator, or None (deterministic folds) when no rng was given
    ci: float | None
    n_boot: int
    search: str = "greedy"
    upper: float | None = None


def estimator_settings(func, h, degree, alpha, folds, holdout, max_degree, rng, ci, n_boot, search="greedy",
                       upper=None):
    """The validated options of an estimator call (everything but the data), shared by the recalibrators."""
    rng = check_rng(rng) if rng is not None else None
    h = check_bandwidth(h, func, allow_none=True, per_axis=True)
    if func == "ce1" and isinstance(h, tuple):  # the first-order error lives on the mean axis alone
        h = h[0]
    return _Settings(h=h, degree=degree, alpha=alpha,
                     folds=check_int(folds, "folds", func, 2, 100),
                     holdout=check_float(holdout, "holdout", func, 0.0, 1.0, lo_open=True, hi_open=True,
                                         allow_none=True),
                     max_degree=check_int(max_degree, "max_degree", func, 0, _MAX_DEGREE_LIMIT),
                     rng=check_rng(rng), fold_rng=rng,
                     ci=check_float(ci, "ci", func, 0.0, 1.0, lo_open=True, hi_open=True, allow_none=True),
                     n_boot=check_int(n_boot, "n_boot", func, 20, 1_000_000),
                     search=check_choice(search, "search", func, SEARCHES),
                     upper=check_float(upper, "upper", func, 0.0, 1.0, lo_open=True, hi_open=True, allow_none=True))


def data_source(func, ndim, mean, var, labels, counts, chunks, responses=None):
    """(source, prebuilt statistics or None) from arrays, dask collections, SufficientStats or a chunk source."""
    if isinstance(mean, SufficientStats):
        if var is not None or labels is not None or counts is not None:
            raise ValueError(f"With SufficientStats as the first argument of {func}, the data come from 'chunks'; "
                             f"'var', 'labels' and 'counts' must be None.")
        if chunks is None:
            raise ValueError(f"The 'chunks' parameter of {func} is needed with SufficientStats: the CE average is a "
                             f"second pass over the data (the absolute deviations at the fitted functions).")
        stats = mean.view(ndim, responses or ndim)
        return ChunkSource(chunks, func, ndim, responses), stats
    if chunks is not None:
        if mean is not None or var is not None or labels is not None or counts is not None:
            raise ValueError(f"Pass either arrays or 'chunks' to {func}, not both.")
        return ChunkSource(chunks, func, ndim, responses), None
    if mean is None:
        raise ValueError(f"The 'mean' parameter of {func} must be an array of means in [0, 1] or SufficientStats "
                         f"(or pass 'chunks'). Got None instead.")
    if is_dask(mean, var, labels, *(counts if isinstance(counts, (tuple, list)) else ())):
        return DaskSource(mean, var, labels, counts, func, ndim, responses), None
    if ndim == 2:
        m, v = check_scores(mean, var, func)
    else:
        m, v = check_mean(mean, func), None
    a, k = check_labels(labels, m.shape[0], func, counts=counts, min_k=responses or ndim)
    return ArraySource(m, v, a, k), None


class StatsPass:
    """Pass 1: per-chunk sufficient statistics (a template fixes the cap, folds and fold seed)."""

    def __init__(self, template):
        self.template = template

    def __call__(self, index, m, v, a, k):
        return self.template.empty_like()._add_counts(m, v, a, k)


class DeviationPass:
    """Pass 2: absolute deviations at the fitted map."""

    def __init__(self, cmap):
        self.cmap = cmap

    def __call__(self, index, m, v, a, k):
        return DeviationStats(self.cmap).update_validated(m, v)


def _n_train(n, folds, holdout):
    """Nominal training rows of a split (the degree rule's 'n_train'): n (1 - holdout), or n minus one fold."""
    return int(n * (1 - holdout)) if holdout is not None else n - -(-n // folds)


def fit_from(source, stats, st, ndim, func, show=False, responses=None, use_h_floor=True):
    """Statistics (built unless given) -> degree/alpha candidates -> selection and fit."""
    if stats is None:
        if isinstance(source, ArraySource):  # n is known: statistics only up to the degree that will be used
            n = source.chunk[0].shape[0]
            _check_n(func, n, 2 if st.holdout is not None else st.folds)
            cap = resolve_degrees(func, st.degree, st.h, n, _n_train(n, st.folds, st.holdout), st.max_degree,
                                   ndim, use_h_floor)[0][0]
        else:
            cap = stream_cap(func, st)
        template = SufficientStats(max_degree=cap, ndim=ndim, folds=st.folds, holdout=st.holdout,
                                   rng=st.fold_rng, responses=responses)
        stats = source.map_reduce(StatsPass(template), show=show, desc=f"{func}: statistics")
    n = stats.n
    _check_n(func, n, stats.folds)
    n_train = _n_train(n, stats.folds, stats.holdout)
    degs, sel_d = resolve_degrees(func, st.degree, st.h, n, n_train, min(st.max_degree, stats.max_degree)
                                   if st.degree is None else st.max_degree, ndim, use_h_floor)
    alphas, sel_a = resolve_alphas(func, st.alpha)
    return select_and_fit(stats, degrees=degs, alphas=alphas, select=sel_d or sel_a, search=st.search), stats


def _check_n(func, n, folds):
    if n < 2 * folds:
        raise ValueError(f"The 'mean' parameter of {func} must have at least {2 * folds} items (2 per fold). "
                         f"Got {n} instead.")


def stream_cap(func, st):
    """Degree cap of statistics built from a stream (n unknown until the pass is done)."""
    degree = _scalar(st.degree)
    if degree is None or isinstance(degree, str):
        return st.max_degree
    degs = degree if isinstance(degree, (list, tuple, np.ndarray)) else [degree]
    if np.ndim(degs) != 1 or len(degs) == 0:
        return st.max_degree  # resolve_degrees names the error after the pass
    return max(check_int(_scalar(d), "degree", func, 0, _MAX_DEGREE_LIMIT) for d in degs)


def _estimate(kind, ndim, mean, var, labels, *, counts, chunks, h, degree, alpha, folds, holdout, max_degree, ci,
              upper, debias, n_boot, rng, show, search):
    st = estimator_settings(kind, h, degree, alpha, folds, holdout, max_degree, rng, ci, n_boot, search, upper)
    if not isinstance(debias, (bool, np.bool_)):
        raise ValueError(f"The 'debias' parameter of {kind} must be True or False. Got {debias!r} instead.")
    if not debias and (st.ci is not None or st.upper is not None):
        raise ValueError(f"The 'ci' and 'upper' parameters of {kind} need debias=True: the interval and the bound "
                         f"are built around the bias-corrected estimate. Got debias=False with "
                         f"ci={st.ci!r}, upper={st.upper!r}.")
    source, stats = data_source(kind, ndim, mean, var, labels, counts, chunks)
    # the headline: CV, checked against finer degrees by Lepski's rule; the plug-in alone keeps the former default
    fit, stats = fit_from(source, stats, st, ndim, kind, show, use_h_floor=not debias)
    fits = [fit]
    if debias:
        fits += _finer_fits(stats, fit, st, kind)
    # one seed, so the candidates' bootstraps are coupled; none drawn without them (a caller's generator stays put)
    seed = int(st.rng.integers(0, 2**63 - 1, dtype=np.int64)) if debias else None
    cands, weights = [], PoissonWeights()  # the candidates' bootstraps share their item weights
    for f in fits:
        dev = source.map_reduce(DeviationPass(f.cmap), show=show,
                                desc=f"{kind}: deviations at degree {f.cmap.degree}")
        plugin = dev.mean_term + dev.moment_term
        boot = (bootstrap(source, f, plugin, n_boot=st.n_boot, seed=seed, level=st.ci, upper=st.upper, show=show,
                          weights=weights, name=f"{kind} bootstrap at degree {f.cmap.degree}") if debias else None)
        cands.append(_Candidate(f, dev, plugin, boot))
    k, rule = _choose_degree(cands)
    chosen = cands[k]
    boot, interval, bound = chosen.boot, None, None
    if boot is not None:
        # the interval and bound cover every candidate's: the choice between them is data-driven (a switch to a
        # finer degree is likelier where noise lifted the finer estimate), and a finer degree has less smoothing bias
        if boot.ci is not None:
            interval = ConfidenceInterval(min(c.boot.ci.low for c in cands), max(c.boot.ci.high for c in cands),
                                          boot.ci.level)
        if boot.upper is not None:
            bound = UpperBound(max(c.boot.upper.value for c in cands), boot.upper.level)
    fit, dev = chosen.fit, chosen.dev
    return CalibrationError(estimate=boot.debiased if debias else chosen.plugin, mean_term=dev.mean_term,
                            moment_term=dev.moment_term, degree=fit.cmap.degree, alpha=fit.cmap.alpha, n=dev.n,
                            h=st.h, ci=interval, debiased=None if boot is None else boot.debiased,
                            bias=None if boot is None else boot.bias,
                            selection=dataclasses.replace(fit.selection, rule=rule), kind=kind,
                            plugin=chosen.plugin, upper=bound)


@dataclass(frozen=True)
class _Candidate:
    """A fitted degree with its CE average (pass 2) and, with ``debias``, its bootstrap."""

    fit: Any
    dev: DeviationStats
    plugin: float
    boot: Any  # intervals.BootstrapResult or None


# a finer degree is a candidate only with this many training rows per coefficient: below it the bootstrap's bias
# correction, of order (coefficients / rows), is itself too uncertain to be worth the smoothing bias it removes
_MIN_ROWS_PER_COEF = 50
_LEPSKI_Z = 2.0


def _finer_fits(stats, fit, st, func):
    """Fits at finer degrees than the cross-validated one (the ridge cross-validated at each), smallest first: the
    schedule's degrees with at least _MIN_ROWS_PER_COEF training rows per coefficient, and, when ``h`` is given, the
    resolution degree ceil(1/(pi h)) if the schedule reaches it (unless a schedule degree within 10% above it is
    already there)."""
    if st.degree is not None or fit.selection.method not in ("cv", "holdout") or not fit.selection.degrees:
        return []
    lc, top = fit.cmap.degree, max(fit.selection.degrees)
    n_train = _n_train(stats.n, stats.folds, stats.holdout)
    finer = {d for d in fit.selection.degrees if d > lc and _MIN_ROWS_PER_COEF * (d + 1) ** stats.ndim <= n_train}
    if st.h is not None:
        res = resolution_degree(st.h)
        if lc < res <= top and not any(res <= d <= 1.1 * res for d in finer):
            finer.add(res)
    alphas, sel_a = resolve_alphas(func, st.alpha)
    return [select_and_fit(stats, degrees=(d,), alphas=alphas, select=sel_a, search=st.search) for d in sorted(finer)]


def _choose_degree(cands):
    """Lepski's rule over the candidates (the cross-validated fit first, then finer degrees): the smallest degree
    whose bias-corrected estimate is within _LEPSKI_Z standard errors of every finer one's.  The bootstraps share
    their draws, so the spread of the difference of two candidates' bootstrap deviations is the standard error of
    the difference of their estimates.  A coarser fit is kept unless the data show that it smoothed away some of
    the error.

    Returns (the chosen candidate's index, what was decided and why)."""
    lc = cands[0].fit.cmap.degree
    if len(cands) == 1:
        return 0, "cv"
    for k, c in enumerate(cands):
        for f in cands[k + 1:]:
            diff = f.boot.debiased - c.boot.debiased
            se = float(np.std(f.boot.deltas - c.boot.deltas))
            if abs(diff) > _LEPSKI_Z * se:
                break
        else:
            lk = c.fit.cmap.degree
            finer = ", ".join(str(f.fit.cmap.degree) for f in cands[1:])
            if k == 0:
                return 0, (f"cv: degree {lc}; the finer degrees {finer} agree within {_LEPSKI_Z:g} standard errors")
            return k, (f"lepski: degree {lk}; cv's degree {lc} and the others below {lk} differ from a finer degree "
                       f"by more than {_LEPSKI_Z:g} standard errors (finer degrees tried: {finer})")
    raise AssertionError("the finest candidate always agrees with itself")  # pragma: no cover


_ESTIMATOR_NOTES = """
    The headline is bias-corrected.  The plug-in (Eq. (cehat); ``plugin`` of the result, and the estimate itself
    with ``debias=False``) is biased upwards where the truth is small: noise in eta-hat can only add to
    |eta-hat - score| on average (on the validation zoo at n = 5,000, h = 1/64: +0.032 to +0.041 on the members
    with CE2^pert < 0.03).  A parametric bootstrap prices that noise.  Labels are redrawn ``n_boot`` times from the
    fitted, projected calibration functions (Binomial(k, f*), f* with the fitted moments; for k = 2 the law of the
    counts depends on those moments alone and is drawn exactly, other k take f* ~ Beta), the polynomial is refitted
    at the selected degree and ridge, and each refit's plug-in is compared with its world's truth.  Two worlds
    bracket the bias:

    * the fitted functions themselves (the one-step correction).  Their own noise already moves
      |eta-hat - score| away from 0, so this world sees too little of the bias;
    * the fitted miscalibration g-hat = eta-hat - score soft-thresholded at tau times its pointwise bootstrap
      spread, with tau chosen so that this world's mean plug-in equals the observed plug-in.  It shrinks real
      structure too, so it sees too much.

    The estimate subtracts the mean of the two corrections, clipped at 0 (``bias`` of the result).

    Degree.  Cross-validated squared error picks the degree that best predicts labels.  The CE functional can need
    more: structure of width ~h in the score costs little squared error and is exactly the error (a calibrated
    predictor with 6 score atoms at h = 1/64: CV picks degree 5 and the estimate is 0.019 low at n = 50,000; CE1 of
    the underconfident member of the zoo at h = 1/64: CV picks ~5, the estimate ran 0.0045 low at n = 50,000 and its
    interval covered the truth in 30% of replicates).  So the estimate is also computed at finer degrees, each with
    its ridge cross-validated: the degrees of the schedule above CV's with at least 50 training rows per coefficient
    (below that the bias correction, of order coefficients / rows, is itself too uncertain: with 10 rows the rule
    chased noise on the zoo's calibrated-many member, CE1^pert 0.0014, at n = 1,000), and, when ``h`` is given, the
    resolution degree ceil(1/(pi h)) below which a polynomial cannot follow structure of width h.  Lepski's rule
    chooses among them: the smallest degree whose bias-corrected estimate is within 2 standard errors of every finer
    one's.  The bootstraps of all candidates share their draws, so the spread of the difference of two candidates'
    bootstrap deviations is the standard error of the difference of their estimates.  A smoother fit is kept unless
    the data show that it smoothed away some of the error; the result's ``selection.rule`` says which degree was
    used and why.  With ``debias=False`` (the plug-in alone) the degree is chosen as before this rule: CV over the
    schedule, floored at ceil(1/(pi h)) when there are >= 50 training rows per coefficient.  That keeps the audit's
    Monte Carlo claims and the experiments' tables as they were; with CV alone, ``rate-table``'s polynomial slope on
    the toy population at h = 1/16 fell from -0.77 to -0.68, behind the kernel baseline's -0.70.

    ``ci=level`` and ``upper=level`` come from the same bootstrap.  The interval takes the plug-in's bootstrap
    fluctuation around both corrected values (from the larger correction's lower end to the smaller's upper end),
    widened on each side by one bootstrap standard deviation plus half the distance between the two corrections, for
    the smoothing bias that neither world sees.  With finer candidates it is the union of every candidate's interval,
    so it accounts for the choice between them (a switch to a finer degree is likelier in replicates where noise
    lifted the finer estimate; on that calibrated-many member the union over the chosen and finer degrees alone
    covered 87% of 200 replicates, the union over all 94%).  The upper bound is the same construction, one-sided.  Both
    always contain the estimate.  They cover label noise (with the refit), the sampling of scores in the final
    average (Poisson(1) weights per item, the mergeable form of resampling items), the bias correction's uncertainty
    and the degree choice.  They do not model how the fitted polynomial moves with a fresh draw of scores; the
    coverage measured on the zoo includes it (each replicate draws new scores and selects anew).  ``python
    benchmarks/coverage.py`` measures all of this on :func:`socal.synthetic.validation_zoo`; docs/numbers.md
    ("Trustworthy numbers") has the table, cell by cell (coverage, bias, RMSE and width against RMSE).
"""


def ce2(mean: ArrayLike | SufficientStats | None = None, var: ArrayLike | None = None, labels: ArrayLike | None = None,
        *, counts: Counts | None = None, chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
        alpha: Alpha = None, folds: int = 5, holdout: float | None = None, max_degree: int = DEFAULT_MAX_DEGREE,
        ci: float | None = None, upper: float | None = None, debias: bool = True, n_boot: int = 200,
        rng: Seed = None,
        progress: bool = False, search: str = "greedy") -> CalibrationError:
    """Estimate the second-order calibration error CE2 of a sech-perturbed predictor.

    .. math::

        \\widehat{CE}_2 = \\frac1n\\sum_i |\\hat\\eta_1(S_i) - \\tilde m_i|
                        + \\frac1n\\sum_i |\\hat\\eta_2(S_i) - (\\tilde m_i^2 + \\tilde\\sigma^2_i)|

    (Eq. (cehat)), where eta1-hat and eta2-hat are tensor-Chebyshev ridge regressions of the targets
    a/k and a(a-1)/(k(k-1)) on the score (Eq. (erm1), (erm2); for k = 2 these are (y1 + y2)/2 and y1 y2, unbiased
    for f* and f*^2), clipped to [0, 1].

    Parameters
    ----------
    mean, var : array_like, shape (n,), or dask arrays / Series
        The *perturbed* scores the deployed predictor outputs (see :func:`socal.perturb`): mean in [0, 1],
        var in [0, 1/4].  The estimate is of CE2 of that perturbed predictor, CE2^pert.  Dask collections are
        reduced partition by partition (a tree of merged :class:`socal.SufficientStats`).  ``mean`` may instead be
        a :class:`socal.SufficientStats`, with the data for the second pass in ``chunks``.
    labels : array_like, shape (n, k), k >= 2
        k-snapshot labels in {0, 1}, k i.i.d. draws from Bernoulli(f*(x)) per item.
    counts : tuple (positives, trials), optional
        Instead of ``labels``: per-item counts of positive labels and of labels (trials >= 2, may vary by item).
    chunks : re-iterable source of chunks, optional
        Data larger than memory: a list of chunks, a callable returning an iterator of chunks, or a reader of
        :mod:`socal.io` (CSV, Parquet).  A chunk is a mapping with 'mean', 'var' and 'labels' or 'counts', or a
        tuple (mean, var, labels).  The data are read once for the statistics, once for the CE average and twice
        for the bootstrap (``debias=True``), and three times more for each finer degree Lepski's rule compares.  The
        fit and the plug-in equal the in-memory ones (coefficients to 1e-10 relative); the bootstrap draws per
        chunk, so another chunking gives a statistically equivalent correction and interval.
    h : float or (float, float), optional
        The perturbation bandwidth, or one per axis (h_mean, h_var).  With it the degree is capped by the paper's
        rule l = ceil(2 log n / log theta(h)) (per axis: :func:`socal.paper_degree`).
    degree : None, 'paper', int or list of ints
        None: cross-validated over a halving schedule from min(max_degree, paper rule, sqrt(n_train) - 1) down to
        4; with ``debias=True``, checked against finer degrees by Lepski's rule (Notes; with ``debias=False`` and
        ``h``, floored at ceil(1/(pi h)) when n allows, the former default).
        'paper': exactly the paper's rule (needs ``h``).  An int: that degree.  A list: chosen from it.
    alpha : None, float or list of floats
        Relative ridge: lambda = alpha tr(G)/d.  None: chosen from 1e-6, 1e-5, ..., 1.
    folds : int
        K of K-fold cross-validation (the paper's "ERM, CV").  Ignored when nothing is to be selected.
    holdout : float, optional
        Select on one random hold-out split of this fraction instead of K-fold CV (the paper's "val" variant).
    max_degree : int
        Cap of the automatic schedule (44, the paper's cap at h = 1/16; it used 88 at h = 1/64).
    ci : float, optional
        Confidence level of a two-sided interval (e.g. 0.9; see Notes for what it covers).
    upper : float, optional
        Confidence level of a one-sided upper bound (e.g. 0.95: "CE2 <= U with 95% confidence").
    debias : bool
        True (default): the estimate is bias-corrected (Notes).  False: the paper's plug-in alone, with no bootstrap
        (``ci`` and ``upper`` need the bootstrap).
    n_boot : int
        Bootstrap replicates for the bias correction, ``ci`` and ``upper``.
    rng : numpy.random.Generator or int, optional
        Fold assignment and bootstrap.  Same seed, same numbers.
    progress : bool
        Show a progress bar during the bootstrap (needs tqdm).
    search : {'greedy', 'exhaustive'}
        How cross-validation searches the (degree, alpha) grid.  'greedy' (default): degrees from the smallest up,
        a local walk over the ridge at each, stopping at the first degree that validates worse; it factorises the
        top degree's fold systems only when that degree is in contention, and chose the same (degree, alpha) as
        'exhaustive' on every grid measured but one (docs/numbers.md "Speed").  'exhaustive': every degree x alpha.

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
    return _estimate("ce2", 2, mean, var, labels, counts=counts, chunks=chunks, h=h, degree=degree, alpha=alpha,
                     folds=folds, holdout=holdout, max_degree=max_degree, ci=ci, upper=upper, debias=debias,
                     n_boot=n_boot,
                     rng=rng, show=progress, search=search)


def ce1(mean: ArrayLike | SufficientStats | None = None, labels: ArrayLike | None = None, *,
        counts: Counts | None = None, chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
        alpha: Alpha = None, folds: int = 5, holdout: float | None = None, max_degree: int = DEFAULT_MAX_DEGREE,
        ci: float | None = None, upper: float | None = None, debias: bool = True, n_boot: int = 200,
        rng: Seed = None,
        progress: bool = False, search: str = "greedy") -> CalibrationError:
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
    return _estimate("ce1", 1, mean, None, labels, counts=counts, chunks=chunks, h=h, degree=degree, alpha=alpha,
                     folds=folds, holdout=holdout, max_degree=max_degree, ci=ci, upper=upper, debias=debias,
                     n_boot=n_boot,
                     rng=rng, show=progress, search=search)


class CalibrationFunctions:
    """Fitted calibration functions eta1, eta2 as callables of (mean, var).

    Returned by :func:`calibration_functions`.  ``eta1(mean, var)`` and ``eta2(mean, var)`` evaluate at perturbed
    scores; calling the object returns both.  With ``project=True`` the pair is projected onto the feasible moment
    region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1; otherwise each is clipped to [0, 1].
    """

    def __init__(self, cmap: Any, project: bool) -> None:
        self.map = cmap
        self.project = project

    @property
    def degree(self):
        return self.map.degree

    @property
    def alpha(self):
        return self.map.alpha

    def __call__(self, mean: ArrayLike, var: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        m, v = check_scores(mean, var, "CalibrationFunctions")
        out = self.map.predict(m, v, project=self.project)
        return out[:, 0], out[:, 1]

    def eta1(self, mean: ArrayLike, var: ArrayLike) -> np.ndarray:
        return self(mean, var)[0]

    def eta2(self, mean: ArrayLike, var: ArrayLike) -> np.ndarray:
        return self(mean, var)[1]

    def __repr__(self):
        return f"CalibrationFunctions(degree={self.degree}, alpha={self.alpha:g}, project={self.project})"


def calibration_functions(mean: ArrayLike | SufficientStats | None = None, var: ArrayLike | None = None,
                          labels: ArrayLike | None = None, *, counts: Counts | None = None,
                          chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
                          alpha: Alpha = None, folds: int = 5, holdout: float | None = None,
                          max_degree: int = DEFAULT_MAX_DEGREE, project: bool = True,
                          rng: Seed = None, search: str = "greedy") -> CalibrationFunctions:
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
    if not isinstance(project, (bool, np.bool_)):
        raise ValueError(f"The 'project' parameter of calibration_functions must be True or False. Got {project!r} "
                         f"instead.")
    st = estimator_settings("calibration_functions", h, degree, alpha, folds, holdout, max_degree, rng, None, 200,
                            search)
    source, stats = data_source("calibration_functions", 2, mean, var, labels, counts, chunks)
    fit, _ = fit_from(source, stats, st, 2, "calibration_functions")
    return CalibrationFunctions(fit.cmap, bool(project))
