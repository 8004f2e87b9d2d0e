"""Second-order reliability diagrams, moment-residual maps and before/after panels.

Computing is split from drawing, as in scikit-learn's ``CalibrationDisplay`` and relplot: :func:`reliability` and
:func:`residual_map` return plain dataclasses of arrays (numpy and scipy only); :func:`plot_reliability`,
:func:`plot_residual_map` and :func:`plot_before_after` draw them with matplotlib (the ``plot`` extra), imported only
when a drawing function is called.

The fitted calibration functions eta1-hat, eta2-hat are those of :func:`socal.ce2` (Eq. (erm1), (erm2)).  Curves
are conditional averages of the fitted functions over bins of the predicted mean (or variance): the first-moment
curve is E[eta1-hat(S) | mean in bin] against the bin's mean, the second-moment curve E[eta2-hat(S) - eta1-hat(S)^2 |
var in bin] against the bin's variance; a calibrated predictor lies on the diagonal.  Bins holding fewer than
``min_count`` items are not drawn (no curve where there are no data), and a histogram under each panel shows where
the data are.  Bands are percentile intervals over bootstrap refits (each item weighted Poisson(1), degree and ridge
fixed at the first fit's), with the weights keyed by the items' content (:mod:`socal.rowkeys`), so the same items
and seed give the same bands in any row order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._typing import ArrayLike, Counts, Degree, Ridge, Seed
from ._validation import (RENAMED, check_aligned, check_bandwidth, check_float, check_int, check_labels, check_rng,
                          check_scores, renamed_ridge, warn_renamed_attribute)
from .estimators import calibration_functions
from .weights import salt
from .rowkeys import item_keys, keyed_uniforms

BAND_REPLICATES = 50  # bootstrap replicates of a figure's bands (fewer than an interval's N_BOOT: a picture's)

__all__ = ["ReliabilityData", "ResidualMap", "reliability", "residual_map", "plot_reliability", "plot_residual_map",
           "plot_before_after", "evaluation_figure", "multiclass_figure", "covariance_figure"]


@dataclass(frozen=True)
class ReliabilityData:
    """Arrays of a second-order reliability diagram (see the module docstring).

    ``mean_centre``, ``eta1``, ``eta1_band`` (2, bins) and ``mean_count`` for the first moment; ``var_centre``,
    ``cond_var``, ``cond_var_band`` and ``var_count`` for the second.  NaN where a bin has fewer than ``min_count``
    items.  ``mean_edges``, ``var_edges``: the bin edges; ``degree``, ``ridge``: the fit; ``level``: of the bands.
    """

    mean_edges: np.ndarray
    mean_centre: np.ndarray
    eta1: np.ndarray
    eta1_band: np.ndarray
    mean_count: np.ndarray
    var_edges: np.ndarray
    var_centre: np.ndarray
    cond_var: np.ndarray
    cond_var_band: np.ndarray
    var_count: np.ndarray
    degree: int
    ridge: float
    level: float
    min_count: int

    @property
    def alpha(self):
        """Deprecated: :attr:`ridge` (its former name)."""
        warn_renamed_attribute("ReliabilityData", "alpha", "ridge")
        return self.ridge


@dataclass(frozen=True)
class ResidualMap:
    """Moment residuals of the fitted calibration functions on a grid of score cells.

    ``mean_residual[i, j]`` = eta1-hat - m and ``var_residual[i, j]`` = (eta2-hat - eta1-hat^2) - var at the centre
    of cell (i, j) (mean bin i, var bin j); NaN in cells holding fewer than ``min_count`` items.  Positive mean
    residual: the labels are more often 1 than the mean says; positive var residual: the variance is understated.
    """

    mean_edges: np.ndarray
    var_edges: np.ndarray
    mean_residual: np.ndarray
    var_residual: np.ndarray
    count: np.ndarray
    min_count: int


def _binned(x, values, edges, min_count):
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    count = np.bincount(idx, minlength=len(edges) - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.bincount(idx, weights=x, minlength=len(edges) - 1) / count
        out = [np.bincount(idx, weights=v, minlength=len(edges) - 1) / count for v in values]
    keep = count >= min_count
    centre = np.where(keep, centre, np.nan)
    return idx, count, centre, [np.where(keep, o, np.nan) for o in out]


def reliability(mean: ArrayLike, var: ArrayLike, labels: ArrayLike | None = None, *, counts: Counts | None = None,
                h: float | None = None, degree: Degree = None, ridge: Ridge = None, bins: int = 20,
                min_count: int | None = None, n_boot: int = BAND_REPLICATES, level: float = 0.9,
                rng: Seed = None, alpha: Any = RENAMED) -> ReliabilityData:
    """Compute a second-order reliability diagram of perturbed scores (mean, var) with k-snapshot labels.

    Parameters
    ----------
    mean, var, labels, counts, h, degree, ridge
        As in :func:`socal.ce2` (perturbed scores; degree and ridge cross-validated unless given).
    bins : int
        Equal-width bins of the mean on [0, 1] and of the variance on [0, 1/4].
    min_count : int, optional
        Bins with fewer items are left empty; default max(20, n / 500).
    n_boot : int
        Bootstrap refits for the bands (0: no bands); item i has weight w_ib ~ Poisson(1) in refit b (the Poisson
        bootstrap), drawn from a uniform keyed by the item's content and b.  A refit needs as many resampled items
        as the fit has coefficients, so the bands need at least twice that many items (n >= 2 (degree + 1)^2); a
        resample that still falls short (a chance below 0.2% per refit at that n) leaves its refit out of the
        percentiles.  Bands need at least 2 / (1 - level) refits (20 at level 0.9): the band's ends are the
        (1 -/+ level)/2 percentiles of the refits, and with fewer refits less than one is expected beyond each end,
        so the ends are the extreme refits or lie between them (one refit gave a band of width 0).
    level : float in (0, 1)
        Level of the percentile bands.
    rng : numpy.random.Generator or int, optional
        The folds of the fit and the bands' weights; omitted, a fixed seed, so the same data give the same diagram
        (as :func:`socal.ce2`'s folds and bootstrap).

    Returns
    -------
    ReliabilityData

    Examples
    --------
    >>> import socal
    >>> m, v, y = socal.synthetic.toy_population().sample(4000, h=1/16, rng=0)
    >>> rd = socal.plot.reliability(m, v, y, h=1/16, n_boot=20, rng=0)
    >>> rd.eta1.shape, bool((rd.mean_count.sum() == 4000))
    ((20,), True)
    """
    func = "plot.reliability"
    m, v = check_scores(mean, var, func)
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    a, k = check_labels(labels, m.shape[0], func, counts=counts)
    bins = check_int(bins, "bins", func, 2, 1000)
    n_boot, level = _check_bands(n_boot, level, func)
    min_count = None if min_count is None else check_int(min_count, "min_count", func, 1, 10**12)
    rng = check_rng(0 if rng is None else rng, func)
    ridge = renamed_ridge(func, ridge, alpha)
    return _reliability(m, v, a, k, h, degree, ridge, bins, min_count, n_boot, level, rng, func)


def _reliability(m, v, a, k, h, degree, ridge, bins, min_count, n_boot, level, rng, func):
    """:func:`reliability` on checked arguments; ``func`` (the function the user called) names the caller in the
    messages."""
    min_count = max(20, m.shape[0] // 500) if min_count is None else min_count
    cnt = (a, k)
    cf = calibration_functions(m, v, counts=cnt, h=h, degree=degree, ridge=ridge, rng=rng)
    medges, vedges = np.linspace(0, 1, bins + 1), np.linspace(0, 0.25, bins + 1)

    def curves(fit, mm, vv):
        e1, e2 = fit(mm, vv)
        _, _, _, (c1,) = _binned(mm, [e1], medges, min_count)
        _, _, _, (c2,) = _binned(vv, [np.maximum(e2 - e1 * e1, 0.0)], vedges, min_count)
        return c1, c2

    _, mcount, mcentre, _ = _binned(m, [], medges, min_count)
    _, vcount, vcentre, _ = _binned(v, [], vedges, min_count)
    eta1, cvar = curves(cf, m, v)
    band1 = band2 = np.full((2, bins), np.nan)
    if n_boot:
        from .weights import poisson_weights

        coefs = (cf.degree + 1) ** 2
        if m.shape[0] < 2 * coefs:
            advice = ("items: pass n_boot=0 for the curves alone, or a smaller 'degree'." if func == "plot.reliability"
                      else "items (the held-out half): pass n_boot=0 for the curves alone, or more items.")
            raise ValueError(f"The 'n_boot' parameter of {func} asks for bootstrap bands, which need at least "
                             f"2 (degree + 1)^2 = {2 * coefs} items at the fitted degree {cf.degree} (each refit's "
                             f"resample must hold its {coefs} coefficients). Got {m.shape[0]} {advice}")
        reps1, reps2 = [], []
        weights = poisson_weights(item_keys(m, v, a, k, rng), 0, n_boot)  # (n, n_boot)
        rows = np.arange(m.shape[0])
        for b in range(n_boot):
            i = np.repeat(rows, weights[:, b])
            if i.size < coefs:  # too few resampled items to fit: this refit is left out
                continue
            fit = calibration_functions(m[i], v[i], counts=(a[i], k[i]), degree=cf.degree, ridge=cf.ridge)
            c1, c2 = curves(fit, m, v)
            reps1.append(c1)
            reps2.append(c2)
        q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
        band1, band2 = np.percentile(reps1, q, axis=0), np.percentile(reps2, q, axis=0)
    return ReliabilityData(medges, mcentre, eta1, band1, mcount, vedges, vcentre, cvar, band2, vcount,
                           cf.degree, cf.ridge, level, min_count)


def residual_map(mean: ArrayLike, var: ArrayLike, labels: ArrayLike | None = None, *, counts: Counts | None = None,
                 h: float | None = None, degree: Degree = None, ridge: Ridge = None,
                 bins: tuple[int, int] = (40, 20), min_count: int | None = None,
                 rng: Seed = None, alpha: Any = RENAMED) -> ResidualMap:
    """Moment residuals (eta1-hat - m, eta2-hat - eta1-hat^2 - var) on a grid over the score rectangle.

    ``bins``: cells along the mean axis [0, 1] and the variance axis [0, V], V just above the largest variance (at
    most 1/4: the axis spans the data, every item in a cell); cells with fewer than ``min_count`` items (default
    max(10, n / 2000)) are NaN.  Other parameters as in :func:`reliability`.
    """
    func = "plot.residual_map"
    m, v = check_scores(mean, var, func)
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    a, k = check_labels(labels, m.shape[0], func, counts=counts)
    if not (isinstance(bins, (tuple, list)) and len(bins) == 2):
        raise ValueError(f"The 'bins' parameter of {func} must be a pair (mean bins, var bins). Got {bins!r} instead.")
    b1, b2 = (check_int(b, "bins", func, 2, 1000) for b in bins)
    min_count = max(10, m.shape[0] // 2000) if min_count is None else check_int(min_count, "min_count", func, 1,
                                                                                 10**12)
    ridge = renamed_ridge(func, ridge, alpha)
    cf = calibration_functions(m, v, counts=(a, k), h=h, degree=degree, ridge=ridge, rng=rng)
    # the variance axis spans the data (an ensemble's variances sit far below the domain's 1/4: on [0, 1/4] every
    # item fell in the lowest row of cells and the maps drew as empty panels)
    top = float(v.max()) if v.size else 0.0
    top = 0.25 if not top > 0 else min(0.25, 1.0001 * top)
    medges, vedges = np.linspace(0, 1, b1 + 1), np.linspace(0, top, b2 + 1)
    count, _, _ = np.histogram2d(m, v, bins=(medges, vedges))
    c1, c2 = np.meshgrid(0.5 * (medges[1:] + medges[:-1]), 0.5 * (vedges[1:] + vedges[:-1]), indexing="ij")
    e1, e2 = cf(c1.ravel(), c2.ravel())
    r1 = (e1 - c1.ravel()).reshape(c1.shape)
    r2 = (np.maximum(e2 - e1 * e1, 0.0) - c2.ravel()).reshape(c1.shape)
    keep = count >= min_count
    return ResidualMap(medges, vedges, np.where(keep, r1, np.nan), np.where(keep, r2, np.nan), count.astype(int),
                       min_count)


def _check_data(data, kind, name, func):
    """``data`` must be what the computing function returned (a TypeError naming the argument otherwise)."""
    if not isinstance(data, kind):
        maker = "reliability" if kind is ReliabilityData else "residual_map"
        raise TypeError(f"The '{name}' parameter of plot.{func} must be a {kind.__name__} (from "
                        f"socal.plot.{maker}). Got {type(data).__name__} instead.")


def _check_bands(n_boot, level, func):
    """(n_boot, level) of a reliability band: 0 replicates (no band) or at least 2 / (1 - level), so that one
    refit is expected beyond each end of the band."""
    n_boot = check_int(n_boot, "n_boot", func, 0, 100_000)
    level = check_float(level, "level", func, 0.0, 1.0, lo_open=True, hi_open=True)
    fewest = math.ceil(2.0 / (1.0 - level) - 1e-9)
    if 0 < n_boot < fewest:
        raise ValueError(f"The 'n_boot' parameter of {func} must be 0 (no bands) or at least 2 / (1 - level) = "
                         f"{fewest} at level {level:g}: with fewer refits the band's ends are the extreme refits "
                         f"or lie between them. Got {n_boot} instead.")
    return n_boot, level


def _two_axes(axes, func, figsize):
    """The pair of matplotlib axes a drawing function draws on: new ones for None, else the caller's two (a
    TypeError naming the argument for anything else, e.g. one Axes)."""
    if axes is None:
        return _pyplot().subplots(1, 2, figsize=figsize)[1]
    try:
        pair = list(axes) if not hasattr(axes, "ravel") else list(axes.ravel())
    except TypeError:
        pair = None
    if pair is None or len(pair) != 2 or not all(hasattr(ax, "plot") for ax in pair):
        raise TypeError(f"The 'axes' parameter of plot.{func} must be two matplotlib Axes (the means' panel and the "
                        f"variances'), e.g. plt.subplots(1, 2)[1]. Got {type(axes).__name__} instead.")
    return axes.ravel() if hasattr(axes, "ravel") else axes  # a (2, 1) array of axes as its two panels


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("socal.plot's drawing functions need matplotlib, which is not installed; install it with: "
                          "pip install 'socal[plot]'") from None
    return plt


def _panel(ax, centre, curve, band, edges, count, label, xlabel, ylabel, color, *, fit_range=False):
    """One reliability panel; ``fit_range`` zooms the x axis onto the bins that hold items (where the user's scores
    are), not the whole domain."""
    lo, hi = edges[0], edges[-1]
    if fit_range and np.any(count > 0):
        occupied = np.flatnonzero(count > 0)
        lo, hi = edges[occupied[0]], edges[occupied[-1] + 1]
    ax.plot([lo, hi], [lo, hi], color="0.6", lw=1, ls="--", label="calibrated")
    if np.any(np.isfinite(band)):
        ax.fill_between(centre, band[0], band[1], color=color, alpha=0.25, lw=0)
    ax.plot(centre, curve, "o-", color=color, ms=3, label=label)
    ax.set_xlim(lo, hi)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    hist = ax.inset_axes([0.0, 0.0, 1.0, 0.15], sharex=ax)
    hist.bar(edges[:-1], count, width=np.diff(edges), align="edge", color="0.75")
    hist.set_axis_off()
    if np.any(count > 0):
        hist.text(0.99, 0.95, f"items per bin (grey; tallest {int(np.max(count)):,})", transform=hist.transAxes,
                  ha="right", va="top", fontsize=7, color="0.4")


def plot_reliability(data: ReliabilityData, *, axes: Any = None, label: str = "fitted", color: str = "C0") -> Any:
    """Draw a :class:`ReliabilityData` on two axes (created if ``axes`` is None); returns the axes."""
    _check_data(data, ReliabilityData, "data", "plot_reliability")
    _pyplot()
    axes = _two_axes(axes, "plot_reliability", (9, 4))
    a1, a2 = axes
    _panel(a1, data.mean_centre, data.eta1, data.eta1_band, data.mean_edges, data.mean_count, label,
           "predicted mean", "E[Y | score]: how often the label is 1", color)
    a1.set_title("means: observed against predicted")
    _panel(a2, data.var_centre, data.cond_var, data.cond_var_band, data.var_edges, data.var_count, label,
           "predicted variance", "Var[f* | score]: spread of the true probability", color, fit_range=True)
    a2.set_title("variances: observed against predicted")
    a1.legend(loc="upper left", fontsize=8)
    return axes


def plot_residual_map(data: ResidualMap, *, axes: Any = None) -> Any:
    """Draw a :class:`ResidualMap` as two heat maps over (mean, var); empty cells are left blank."""
    _check_data(data, ResidualMap, "data", "plot_residual_map")
    _pyplot()
    axes = _two_axes(axes, "plot_residual_map", (10, 4))
    for ax, res, title in zip(axes, (data.mean_residual, data.var_residual),
                              ("E[Y | score] - predicted mean", "Var[f* | score] - predicted variance")):
        lim = np.nanmax(np.abs(res)) if np.any(np.isfinite(res)) else 1.0
        mesh = ax.pcolormesh(data.mean_edges, data.var_edges, res.T, cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.figure.colorbar(mesh, ax=ax, label="residual")
        ax.set_xlabel("predicted mean m")
        ax.set_ylabel("predicted variance")
        ax.set_title(title)
    return axes


def plot_before_after(before: ReliabilityData, after: ReliabilityData, *, axes: Any = None) -> Any:
    """Reliability diagrams before and after recalibration, overlaid on two axes."""
    _check_data(before, ReliabilityData, "before", "plot_before_after")
    _check_data(after, ReliabilityData, "after", "plot_before_after")
    _pyplot()
    axes = _two_axes(axes, "plot_before_after", (9, 4))
    plot_reliability(before, axes=axes, label="before", color="C3")
    for ax, centre, curve, band in ((axes[0], after.mean_centre, after.eta1, after.eta1_band),
                                    (axes[1], after.var_centre, after.cond_var, after.cond_var_band)):
        if np.any(np.isfinite(band)):
            ax.fill_between(centre, band[0], band[1], color="C0", alpha=0.25, lw=0)
        ax.plot(centre, curve, "o-", color="C0", ms=3, label="after")
    axes[0].legend(loc="upper left", fontsize=8)
    return axes


def _fit_half(m, v, a, k, rng):
    """The items :func:`evaluation_figure` fits on (a keyed uniform below 1/2); the others are drawn, held out."""
    return keyed_uniforms(item_keys(m, v, a, k, rng), salt("plot split")) < 0.5


def evaluation_figure(mean: ArrayLike, var: ArrayLike, labels: ArrayLike | None = None, *,
                      counts: Counts | None = None, h: float | None = None, n_boot: int = BAND_REPLICATES,
                      rng: Seed = None) -> Any:
    """The figure of ``socal evaluate --plot``: reliability before and after second-order Platt scaling (fitted
    on half the items, drawn on the other half: held-out), and the moment-residual map of the perturbed scores.
    The halves are drawn from uniforms keyed by the items' content, so the figure does not depend on the row
    order; ``rng`` omitted is a fixed seed, so the same data give the same figure.

    Returns the matplotlib Figure.
    """
    from .recalibrate import SecondOrderPlatt

    plt = _pyplot()
    func = "plot.evaluation_figure"
    m, v = check_scores(mean, var, func)
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    a, k = check_labels(labels, m.shape[0], func, counts=counts)
    h = check_bandwidth(h, func, allow_none=True, per_axis=True)  # checked here, before the fit and the bands
    n_boot, _ = _check_bands(n_boot, 0.9, func)
    rng = check_rng(0 if rng is None else rng, func)
    fit = _fit_half(m, v, a, k, rng)
    test = ~fit
    platt = SecondOrderPlatt(h=h, rng=rng).fit(m[fit], v[fit], counts=(a[fit], k[fit]))
    m2, v2 = platt.transform(m[test], v[test])
    at, kt = a[test], k[test]
    before = _reliability(m[test], v[test], at, kt, h, None, None, 20, None, n_boot, 0.9, rng, func)
    after = _reliability(m2, v2, at, kt, h, None, None, 20, None, n_boot, 0.9, rng, func)
    fig, axes = plt.subplots(2, 2, figsize=(10, 8))
    plot_before_after(before, after, axes=axes[0])
    plot_residual_map(residual_map(m, v, counts=(a, k), h=h, rng=rng), axes=axes[1])
    axes[0, 0].set_title("means: before (red) and after (blue) recalibration", fontsize=10)
    axes[0, 1].set_title("variances: before (red) and after (blue) recalibration", fontsize=10)
    for ax in axes[1]:
        ax.set_title(ax.get_title() + "\n(perturbed scores, before recalibration)", fontsize=9)
    fig.suptitle("before: the perturbed scores; after: socal.SecondOrderPlatt (fitted on other items, drawn on "
                 "held-out items)", fontsize=9)
    fig.tight_layout()
    return fig


def multiclass_figure(evaluation: Any, labels: ArrayLike | None = None, *, counts: Counts | None = None,
                      mean: ArrayLike | None = None, cov: ArrayLike | None = None,
                      n_boot: int = BAND_REPLICATES, rng: Seed = None) -> Any:
    """The multiclass figure: one reliability panel of the means per class (one-vs-rest, the perturbed class
    scores of :func:`socal.multiclass.evaluate_multiclass`), a summary panel: each class's and the top label's CE2
    against its calibrated reference ("not estimated" written where it was not), and, given the raw scores
    (``mean`` (n, C), ``cov`` (n, C, C) or class variances), the covariance's trace panel of
    :func:`covariance_figure`.  ``labels``/``counts``: the votes the evaluation read (class votes (n, k) or counts
    (n, C)).

    Returns the matplotlib Figure.
    """
    from .multiclass import MulticlassEvaluation, class_counts

    func = "plot.multiclass_figure"
    if not isinstance(evaluation, MulticlassEvaluation):
        raise ValueError(f"The 'evaluation' parameter of {func} must be a socal.multiclass.MulticlassEvaluation. Got "
                         f"{type(evaluation).__name__} instead.")
    plt = _pyplot()
    n, C = evaluation.mean.shape
    A = class_counts(labels, counts, n, C, func)
    K = A.sum(axis=1)
    n_boot, _ = _check_bands(n_boot, 0.9, func)
    rng = check_rng(0 if rng is None else rng, func)
    trace = None
    if (mean is None) != (cov is None):
        raise ValueError(f"{func} needs both 'mean' and 'cov' (the raw scores, for the trace panel) or neither.")
    if mean is not None:
        from .multiclass import check_multiclass_scores

        m0, _, v0 = check_multiclass_scores(mean, cov, func)
        if m0.shape != (n, C):
            raise ValueError(f"The 'mean' parameter of {func} must be the evaluation's raw means, shape {(n, C)}. Got "
                             f"{m0.shape}.")
        trace = (m0, v0)
    panels = C + 1 + (trace is not None)
    cols = min(4, panels)
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
    flat = axes.ravel()
    for c, e in enumerate(evaluation.classes):
        data = _reliability(e.mean, e.var, A[:, c], K, e.h, None, None, 20, None, n_boot, 0.9, rng, func)
        ax = flat[c]
        _panel(ax, data.mean_centre, data.eta1, data.eta1_band, data.mean_edges, data.mean_count, "fitted",
               "predicted mean", "E[Y = c | score]", "C0")
        ax.set_title(f"class {evaluation.names[c]}: adjusted p = {evaluation.test.holm[c]:.2g}", fontsize=9)
    ax = flat[C]
    items = list(zip(evaluation.names, evaluation.classes)) + [("top", evaluation.top)]
    est = [e.ce2.estimate if e.ce2 is not None else 0.0 for _, e in items]
    ref = [e.reference.ce2.value for _, e in items]
    x = np.arange(len(items))
    ax.bar(x, est, color="C0")
    for i, (_, e) in enumerate(items):
        if e.ce2 is None:  # CE2 only in this panel: a class without one says so, no CE1 bar in its place
            ax.text(i, 0.0, "not\nestimated", ha="center", va="bottom", fontsize=6, rotation=90, color="C3")
    ax.scatter(x, ref, marker="_", s=200, color="k", zorder=3, label="calibrated reference")
    ax.set_xticks(x, [str(name) for name, _ in items], rotation=60, fontsize=7)
    ax.set_title("CE2 after perturbation", fontsize=8)
    ax.legend(fontsize=7)
    if trace is not None:
        _trace_panel(flat[C + 1], [("the predictor", *trace)], A)
    for extra in flat[C + 1 + (trace is not None):]:
        extra.set_axis_off()
    fig.suptitle(f"{C} classes, n = {n}; verdict p = {evaluation.test.pvalue:.2g}", fontsize=10)
    fig.tight_layout()
    return fig


def _spread_bins(reported, observed, bins=8, min_count=20):
    """(x, y, n) per quantile bin of ``reported``: the bin's mean reported value and mean of ``observed`` (the votes'
    unbiased squared distances); bins of fewer than ``min_count`` items dropped."""
    order = np.argsort(reported, kind="stable")
    out = []
    for part in np.array_split(order, bins):
        if len(part) >= min_count:
            out.append((float(reported[part].mean()), float(observed[part].mean()), len(part)))
    return np.array([o[0] for o in out]), np.array([o[1] for o in out]), np.array([o[2] for o in out])


def _loglog(ax, xs, ys, label, color, marker):
    """Points on log axes; a bin whose votes' average is <= 0 (an unbiased estimate can be) drawn at the axis floor
    as an open marker."""
    floor = 1e-7
    pos = ys > 0
    ax.plot(np.maximum(xs, floor), np.where(pos, ys, np.nan), marker=marker, color=color, label=label, lw=1)
    if (~pos).any():
        ax.scatter(np.maximum(xs[~pos], floor), np.full((~pos).sum(), floor), facecolors="none", edgecolors=color,
                   marker=marker)


def _trace_panel(ax, series, A):
    """The votes' E|f* - m|^2 against the reported tr Sigma, in quantile bins of tr Sigma, for each (label, m, v)."""
    from .simplex import pair_spread

    lo, hi = np.inf, 0.0
    for (label, m, v), color, marker in zip(series, ("C3", "C0"), ("o", "s")):
        x, y, _ = _spread_bins(v.sum(axis=1), pair_spread(m, A))
        ratio = float(pair_spread(m, A).mean() / max(v.sum(axis=1).mean(), 1e-300))
        _loglog(ax, x, y, f"{label} (votes / reported {ratio:.2g}x)", color, marker)
        lo, hi = min(lo, np.min(x[x > 0], initial=1e-6), np.min(y[y > 0], initial=1e-6)), max(hi, x.max(), y.max())
    lo, hi = max(lo / 2, 1e-7), max(hi * 2, 1e-6)
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--", label="calibrated")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("reported tr Sigma (bin mean; 0 at 1e-7)", fontsize=8)
    ax.set_ylabel("votes' E|f* - m|^2", fontsize=8)
    ax.set_title("the covariance's trace", fontsize=9)
    ax.legend(fontsize=6)


def covariance_figure(mean: ArrayLike, cov: ArrayLike, labels: ArrayLike | None = None, *,
                      counts: Counts | None = None, recalibrated: tuple | None = None, names: Any = None,
                      max_classes: int = 11) -> Any:
    """The multiclass covariance, seen from the votes: the reported tr Sigma against the votes' E|f* - m|^2 (every
    pair of an item's votes, unbiased), and one panel per class of the reported Sigma_cc against the votes'
    E(f*_c - m_c)^2, each in quantile bins of the reported value on log axes (a calibrated predictor lies on the
    dashed diagonal).  ``recalibrated=(mean2, cov2)``: the same items after a recalibrator, drawn beside the raw
    (before/after).  ``cov`` (n, C, C) or class variances (n, C); for more than ``max_classes`` classes the panels
    show the classes with the most votes.

    Returns the matplotlib Figure.
    """
    from .multiclass import check_multiclass, check_multiclass_scores
    from .simplex import class_spread

    func = "plot.covariance_figure"
    m, _, v, A = check_multiclass(mean, cov, labels, counts=counts, func=func)
    n, C = m.shape
    series = [("raw", m, v)]
    if recalibrated is not None:
        if not isinstance(recalibrated, tuple) or len(recalibrated) != 2:
            raise ValueError(f"The 'recalibrated' parameter of {func} must be a (mean, cov) pair. Got "
                             f"{type(recalibrated).__name__}.")
        m2, _, v2 = check_multiclass_scores(*recalibrated, func)
        if m2.shape != m.shape:
            raise ValueError(f"The 'recalibrated' means of {func} must have the raw means' shape {m.shape}. Got "
                             f"{m2.shape}.")
        series.append(("recalibrated", m2, v2))
    names = [str(c) for c in range(C)] if names is None else [str(x) for x in names]
    if len(names) != C:
        raise ValueError(f"The 'names' parameter of {func} must name the {C} classes. Got {len(names)}.")
    max_classes = check_int(max_classes, "max_classes", func, 1, 1000)
    shown = np.argsort(-A.sum(axis=0), kind="stable")[:max_classes]
    plt = _pyplot()
    panels = 1 + len(shown)
    cols = min(4, panels)
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 3.0 * rows), squeeze=False)
    flat = axes.ravel()
    _trace_panel(flat[0], series, A)
    for ax, c in zip(flat[1:], shown):
        lo, hi = np.inf, 0.0
        for (label, mm, vv), color, marker in zip(series, ("C3", "C0"), ("o", "s")):
            obs = class_spread(mm, A)[:, c]
            x, y, _ = _spread_bins(vv[:, c], obs)
            ratio = float(obs.mean() / max(vv[:, c].mean(), 1e-300))
            _loglog(ax, x, y, f"{label} ({ratio:.2g}x)", color, marker)
            lo = min(lo, np.min(x[x > 0], initial=1e-6), np.min(y[y > 0], initial=1e-6))
            hi = max(hi, x.max(initial=0), y.max(initial=0))
        lo, hi = max(lo / 2, 1e-7), max(hi * 2, 1e-6)
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"class {names[c]}: variance", fontsize=9)
        ax.set_xlabel("reported Sigma_cc (bin mean; 0 at 1e-7)", fontsize=7)
        ax.set_ylabel("votes' E(f*_c - m_c)^2", fontsize=7)
        ax.legend(fontsize=6)
    for extra in flat[panels:]:
        extra.set_axis_off()
    title = f"{C} classes, n = {n:,} items" + (f" (panels: the {len(shown)} classes with the most votes)"
                                                 if len(shown) < C else "")
    fig.suptitle(title + ("; raw and recalibrated" if recalibrated is not None else ""), fontsize=10)
    fig.tight_layout()
    return fig
