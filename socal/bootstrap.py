"""Bias correction and intervals for the CE estimators: the parametric bootstrap's driver and its interval.

:func:`bootstrap` runs the parametric bootstrap of :func:`socal.ce2` (``ci=``, ``debias=``) from passes that any
source runs (in-memory arrays, a stream of chunks, dask partitions; :mod:`socal.sources`): the bootstrap world's
sums (:mod:`socal.world`, read in the fused deviation pass) give the refits' right-hand sides, drawn Gaussian with
the exact label-redraw covariance, and the refit pass (:mod:`socal.refits`) evaluates the refitted maps under
Poisson(1) item weights.  From the refits' deltas and the shrunken worlds it brackets the plug-in's bias and builds
the bracket interval (:func:`bracket_interval`).  :class:`BootstrapOptions` holds the knobs the benchmarks turn.

Every random number is keyed by row content and replicate (:mod:`socal.weights`), or, for the Gaussian draws, by
the seed alone: arrays, any row order, any chunking and dask partitions give the same interval and bound, up to the
order of float summation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._results import ConfidenceInterval, UpperBound
from .chebyshev import response_vector
from .deviations import CE_RANGE
from .refits import REFIT_ROWS, RefitPass
from .world import WORLD_ROWS, LabelSetsPass, gaussian_right_hand_sides, world_right_hand_sides

__all__ = ["bootstrap", "BootstrapOptions", "BootstrapResult", "bracket_interval", "shrunk_estimate"]

LABEL_DRAW_MODES = ("gaussian", "exact")


@dataclass(frozen=True)
class BootstrapOptions:
    """How the bootstrap draws and where it reads, for the benchmarks that compare its rules (the library's calls
    take the defaults).

    Attributes
    ----------
    label_draws : {'gaussian', 'exact'}
        'gaussian' (the default): the refits' right-hand sides drawn Gaussian with the world's exact covariance;
        'exact': every label set drawn (:class:`socal.world.LabelSetsPass`, n B (l + 1)^2 work), the former method,
        kept to compare (``benchmarks/label_draws.py``), and what the default falls back to where the covariance
        does not factor.
    refit_rows : int
        The refits are evaluated on a keyed subset of about this many rows (all rows below it).
    world_rows : int
        The world's covariance moments are summed over a keyed subset of about this many rows.
    inner : bool
        Also record each refit's analytic one-step bias (``benchmarks/interval_rules.py --inner``).
    """

    label_draws: str = "gaussian"
    refit_rows: int = REFIT_ROWS
    world_rows: int = WORLD_ROWS
    inner: bool = False

    def __post_init__(self):
        if self.label_draws not in LABEL_DRAW_MODES:
            raise ValueError(f"The 'label_draws' parameter of BootstrapOptions must be one of {LABEL_DRAW_MODES}. Got "
                             f"{self.label_draws!r} instead.")
        for name in ("refit_rows", "world_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"The '{name}' parameter of BootstrapOptions must be a positive int. Got {value!r} "
                                 f"instead.")
        if not isinstance(self.inner, bool):
            raise ValueError(f"The 'inner' parameter of BootstrapOptions must be a bool. Got {self.inner!r} instead.")


DEFAULT_OPTIONS = BootstrapOptions()


def shrunk_estimate(est, truth, plug):
    """The truth of the shrunken world whose mean plug-in equals the observed ``est`` (interpolated over tau).

    ``plug`` falls as tau grows (|g + e| has a larger mean the larger |g| is); an observation above the tau = 0
    world's mean plug-in keeps that world's truth shifted by the difference (the one-step correction), one below
    the pure-noise world's gives 0.
    """
    plug = np.minimum.accumulate(plug)  # the Monte Carlo means can wiggle by rounding where they are flat
    if est >= plug[0]:
        return float(est - (plug[0] - truth[0]))
    if est <= plug[-1]:
        return 0.0
    j = int(np.searchsorted(-plug, -est))  # plug[j - 1] > est >= plug[j]
    t = (plug[j - 1] - est) / (plug[j - 1] - plug[j])
    return float(truth[j - 1] + t * (truth[j] - truth[j - 1]))


@dataclass(frozen=True)
class BootstrapResult:
    """What :func:`bootstrap` found: the bias, the bias-corrected estimate, the interval and bound (None unless asked
    for), the refits' deltas (plug-in minus world truth, one per replicate), the shrunken worlds' truth and mean
    plug-in, one per threshold of :data:`socal.refits.THRESHOLDS` (the curve the shrunken-world correction reads),
    and, only with ``BootstrapOptions(inner=True)`` (a measurement hook, off by default), ``inner``: each refit's
    delta less its own one-step bias in closed form (:func:`socal.refits.gaussian_bias`, each row's noise Gaussian
    with the refits' SD), and that closed-form one-step at the fitted map, so that the one-step-corrected estimate's
    own fluctuation can be compared with the plug-in's (``benchmarks/interval_rules.py --inner``)."""

    bias: float
    debiased: float
    ci: ConfidenceInterval | None
    upper: UpperBound | None
    deltas: np.ndarray
    shrunk_truth: np.ndarray | None = None
    shrunk_plugin: np.ndarray | None = None
    inner: tuple | None = None  # with options.inner: (refits' one-step-corrected deltas, the analytic one-step)
    biases: tuple | None = None  # (one-step, shrunken-world): ``bias`` is their mean, the interval's bracket their span


def bootstrap(source, fit, est, *, n_boot, seed, level, world, duplicates, upper=None, progress=False, weights=None,
              name="bootstrap", second=None, options=DEFAULT_OPTIONS):
    """Parametric-bootstrap bias correction, interval and upper bound for a plug-in CE estimate ``est`` from ``fit``.

    With D_b = (refit b's plug-in) - (its world's truth) in the world of the fitted functions, the one-step bias is
    mean D_b; the shrunken worlds (:class:`socal.refits.RefitPass`) give the bias est - T(tau-hat), where tau-hat
    matches the world's mean plug-in to ``est``.  The first sees too little bias (the fitted g-hat is noisier, so
    further from 0, than g), the second too much (it shrinks real structure too); ``bias`` is their mean.

    The interval is the bracket interval.  Write b_lo <= b_hi for the two biases and N = D - mean D for the
    plug-in's fluctuation, with quantiles q_lo = q_{(1-level)/2}(N), q_hi = q_{(1+level)/2}(N).  The interval runs
    from est - b_hi - q_hi to est - b_lo - q_lo.  Why it covers: if the plug-in's bias b lies in [b_lo, b_hi] (the
    bracket the two worlds are built to give), then T < est - b_hi - q_hi needs N = est - b - T > q_hi + (b_hi - b)
    >= q_hi, and T > est - b_lo - q_lo needs N < q_lo - (b - b_lo) <= q_lo; so the interval misses T with
    probability at most 1 - level.  It is the interval that covers the whole identified set [est - b_hi,
    est - b_lo] of a partially identified parameter (Horowitz & Manski, JASA 95, 2000); Imbens & Manski
    (Econometrica 72, 2004) narrow it with one-sided quantiles when the bracket is wide, which under-covered more
    often on the zoo (docs/numbers.md, ``benchmarks/interval_rules.py``).  No margin is added.
    The upper bound is est - b_lo - q_{1-upper}(N), valid on the same condition.  Both are clipped to the
    functional's range (:data:`socal.deviations.CE_RANGE`: [0, 1] for CE1, [0, 9/4] for CE2) and contain the
    bias-corrected estimate.
    ``seed`` fixes every draw: two calls with one seed share their label draws (coupled bootstraps, as the degree
    rule of :func:`socal.ce2` uses).  ``world``: the world's sums from the fused deviation pass
    (:class:`socal.world.DeviationWorldPass`).  ``second``: in 1-D, the world's E[f*^2 | mean]
    (:func:`socal.world.second_moment_fit`), so that items of one score differ in f* as the labels show; None keeps
    f* = p1.  ``duplicates``: the keys more than one row carries under ``seed`` and their counts
    (:meth:`socal.rowkeys.KeyCensus.duplicated`, from the same fused pass), so that the refit pass resamples those
    rows as separate items (:class:`socal.refits.RefitPass`).  ``options``: :class:`BootstrapOptions`.  A replicate in
    which every item drew weight 0 (a chance of e^-n with n items) has no resample and is left out.

    Returns a :class:`BootstrapResult`.
    """
    calmap = fit.calmap
    basis = calmap.basis
    b = None
    if options.label_draws == "gaussian":  # the world's mean right-hand sides and their exact covariance, then draws
        W, S, n = world_right_hand_sides(fit, world)
        b = gaussian_right_hand_sides(W, S, basis, n_boot, seed)  # None: the covariance does not factor
    if b is None:  # every label set drawn and its moments accumulated: n B (l + 1)^2 work
        A = source.map_reduce(LabelSetsPass(calmap, n_boot, seed, second, duplicates), progress=progress,
                              desc=f"{name}: label sets drawn")
        W, (n,) = A["moments"], A["rows"]
        b = np.stack([np.stack([response_vector(W[r, q], basis) for q in range(W.shape[1])], axis=1)
                      for r in range(n_boot)], axis=1)  # (d, B, R)
    R = b.shape[2]
    betas = fit.factor.solve(b.reshape(b.shape[0], -1)).reshape(b.shape)
    fraction = 1.0 if n <= options.refit_rows else options.refit_rows / n
    sums = source.map_reduce(RefitPass(calmap, betas, seed, weights, fraction, options.inner, duplicates),
                             progress=progress, desc=f"{name}: rows under the refits")
    num, den, st_sum, sp_sum, inner_num = (sums[k] for k in ("num", "den", "shrunk_truth", "shrunk_plugin",
                                                                "inner_num"))
    (n_sub, truth_sum), (inner_data,) = sums["read_truth"], sums["inner_data"]
    # the world's truth over the rows the refits were evaluated on (all of them, or the keyed subset)
    resampled = den > 0  # a replicate whose items all drew weight 0 has no resample
    if resampled.sum() < 2:  # the keyed subset holds about refit_rows items (RefitPass): not seen with the census
        raise RuntimeError(f"The refit pass kept {n_sub:.0f} of {n} rows: too few to resample.")
    n_sub = max(n_sub, 1.0)
    if not resampled.all():
        num, den, inner_num = num[resampled], den[resampled], inner_num[resampled]
    deltas = num / den - truth_sum / n_sub
    one_step = float(deltas.mean())
    shrunk_bias = est - shrunk_estimate(est, st_sum / n_sub, sp_sum / n_sub)
    bias = 0.5 * (one_step + shrunk_bias)
    top = CE_RANGE[R]
    debiased = min(max(est - bias, 0.0), top)
    noise = deltas - one_step  # the plug-in's fluctuation about its mean
    ci, bound = bracket_interval(est, (one_step, shrunk_bias), noise, debiased, top, level, upper)
    inner = None
    if options.inner:  # the one-step-corrected plug-in of every refit, less its world's truth; the analytic one-step
        inner = (deltas - inner_num / den, inner_data / n_sub)
    return BootstrapResult(bias=bias, debiased=debiased, ci=ci, upper=bound, deltas=deltas,
                           shrunk_truth=st_sum / n_sub, shrunk_plugin=sp_sum / n_sub, inner=inner,
                           biases=(one_step, shrunk_bias))


def bracket_interval(est, biases, noise, debiased, top, level=None, upper=None):
    """The bracket interval and bound (rule and validity: :func:`bootstrap`): from est - b_hi - q_{(1+level)/2}(N)
    to est - b_lo - q_{(1-level)/2}(N), and est - b_lo - q_{1-upper}(N), with b_lo <= b_hi the two ``biases`` and
    N the bootstrap ``noise``; clipped to [0, ``top``] and holding ``debiased``.  Returns (ConfidenceInterval or
    None, UpperBound or None)."""
    low_bias, high_bias = min(biases), max(biases)
    ci = bound = None
    if level is not None:
        lo_q, hi_q = np.quantile(noise, [(1 - level) / 2, (1 + level) / 2])
        ci = ConfidenceInterval(float(min(max(est - high_bias - hi_q, 0.0), debiased)),
                                float(min(max(est - low_bias - lo_q, debiased), top)), level)
    if upper is not None:
        q = np.quantile(noise, 1 - upper)
        bound = UpperBound(float(min(max(est - low_bias - q, debiased), top)), upper)
    return ci, bound
