"""Many classes: a C-class predictor's mean vector and covariance judged and sized in one call (fixed by
:mod:`socal.simplex`).

For C classes the true probability vector is f*(x) in the simplex; the predictor reports a mean m(x) (a probability
vector) and a covariance Sigma(x) (C x C, positive semidefinite, rows summing to 0: an ensemble's members' mean and
covariance, :func:`socal.from_members` with (n, M, C) probabilities).  Its conditions, on the level sets
S = (m, Sigma) (docs/multiclass.md derives each):

- **canonical** second order: E[f* | S] = m and E[f* f*^T | S] = m m^T + Sigma;
- **class-wise**: for each class c, the binary conditions of the event Y = c on (m_c, Sigma_cc) (one-vs-rest);
- **top-label**: the binary conditions of the event Y = t, t = argmax m, on (m_t, Sigma_tt) (t is a function of S,
  so conditioning on S fixes it);
- **trace**: ``E[1{Y1 = Y2} - m_{Y1} - m_{Y2} + |m|^2 | S]`` = ``E[|f* - m|^2 | S]`` = tr Sigma (one scalar condition).

The verdict (:func:`multiclass_test`) combines three kinds of part, each a valid test of a condition above and each
reading every vote of every item:

- **class c**: :func:`socal.calibration_test` of the event Y = c on (m_c, Sigma_cc), its reference simulated where
  the votes are sparse (the binary test's tail rule, docs/calibration_test.md);
- **top label**: the same for the event Y = argmax m;
- **trace**: ``E[|f* - m|^2 | S]`` = tr Sigma, with ``|f* - m|^2`` estimated without bias from every pair of an item's votes
  (:class:`TraceStats`).

The verdict's p-value is the smallest weighted-Holm-adjusted p-value of the parts (the trace and the top label 1/4 of
the level each, the C classes 1/2 shared): at its first step a weighted Bonferroni, so its size is at most the level
given each part's, whatever their dependence (docs/multiclass.md).  Only the class variances and their sum are read,
so C = 1,000 runs on (n, C) arrays; the off-diagonal covariances beyond the trace are not tested.

All statistics are sums over items (:class:`socal.CalibrationTestStats`, :class:`TraceStats`, mergeable), so they are
the same in any order or chunking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .tables import Tabular
from ._validation import check_array, check_parameters, check_rng, level_rule
from .pipeline import N_BOOT

__all__ = ["multiclass_input", "check_multiclass", "check_multiclass_scores", "class_counts", "holm",
           "weighted_holm", "MulticlassTest", "TraceStats", "TraceRegion", "TraceCheck", "trace_check",
           "multiclass_test", "MulticlassEvaluation", "evaluate_multiclass",
           "MISSING_VOTE", "ce2", "ce1"]

MISSING_VOTE = -1  # the marker of a missing vote in an (n, k) array of class votes
_TOL = 1e-6  # the rows of a mean must sum to 1, and a covariance's to 0, within this
MEMORY_BUDGET = 2**32  # bytes (4 GiB): inputs whose working arrays would exceed this are refused before work
_BLOCK = 4096  # rows per block where (n, C) temporaries would otherwise be made
_WORK_ARRAYS = 6  # n x C float arrays the verdict holds at once: the caller's mean, variances and counts, and ours
_FULL_COV_ENTRIES = 2**27  # an (n, C, C) covariance with more entries (1 GiB) is refused: pass the class variances


# -- input --------------------------------------------------------------------------------------------------------
def multiclass_input(mean, var):
    """(mean (n, C), cov) when the scores are multiclass, else None (binary scores): members' probabilities
    (n, M, C) with ``var`` None (:func:`socal.from_members` with ``diagonal=True``: the class variances), or a mean (n, C) with a covariance (n, C, C) or class
    variances (n, C).  What :func:`socal.evaluate` and :func:`socal.calibration_test` dispatch on."""
    from ._validation import ndim_of

    nd = ndim_of(mean)
    if nd == 3 and var is None:  # the class variances only: all the verdict and the per-class estimates read
        from .members import from_members

        return from_members(mean, diagonal=True)
    if nd == 2 and var is not None and ndim_of(var) in (2, 3):
        return mean, var
    return None


def check_multiclass(mean, cov, labels=None, *, counts=None, func="multiclass_test"):
    """Validated multiclass input: (m (n, C), Sigma (n, C, C) or None, v (n, C), A (n, C) vote counts).

    ``mean``: rows in [0, 1] summing to 1 (within 1e-6), C >= 3.  ``cov``: (n, C, C), symmetric, PSD, rows summing
    to 0, its diagonal at most m (1 - m), every pair law m_c m_d + cov_cd >= 0; or (n, C), the class variances alone
    (all the verdict reads).  ``labels``: (n, k) class indices in 0..C-1, with :data:`MISSING_VOTE`
    (-1) for a missing vote; or ``counts``: (n, C) votes per class.  Every item needs at least 2 votes.
    """
    m, Sigma, v = check_multiclass_scores(mean, cov, func)
    return m, Sigma, v, class_counts(labels, counts, m.shape[0], m.shape[1], func)


def check_multiclass_scores(mean, cov, func):
    """The scores' half of :func:`check_multiclass`: (m, Sigma or None, v), without votes (what a recalibrator's
    ``transform`` reads)."""
    m = check_array(mean, "mean", func, ndim=2, lo=0.0, hi=1.0, rule="in [0, 1] (class probabilities)",
                    clip_edges=True)
    n, C = m.shape
    if C < 3:
        raise ValueError(f"The 'mean' parameter of {func} must have C >= 3 class columns. Got shape {m.shape} "
                         f"instead: for two classes pass the probability of class 1 and its variance to the binary "
                         f"functions (socal.evaluate, socal.calibration_test).")
    off = np.abs(m.sum(axis=1) - 1.0)
    if off.max() > _TOL:
        i = int(off.argmax())
        raise ValueError(f"The 'mean' parameter of {func} must have rows summing to 1 (a probability vector per "
                         f"item). Got {int((off > _TOL).sum())} row(s) that do not, e.g. row {i} sums to "
                         f"{m[i].sum():.6g} instead.")
    if cov is not None and np.asarray(cov).dtype.kind not in "iufb":  # strings parsed as numbers tested another null
        raise ValueError(f"The 'cov' parameter of {func} must be an array of real numbers. Got an array of dtype "
                         f"{np.asarray(cov).dtype} instead.")
    if cov is None:
        raise ValueError(f"The 'cov' parameter of {func} must be an (n, C, C) covariance or (n, C) class variances. "
                         f"Got None instead.")
    need = 8 * n * C * _WORK_ARRAYS
    if need > MEMORY_BUDGET:
        raise ValueError(f"{func} would need about {need / 2**30:.1f} GiB for n = {n:,} items and C = {C:,} classes "
                         f"({_WORK_ARRAYS} arrays of n x C floats), above the {MEMORY_BUDGET / 2**30:.0f} GiB it "
                         f"allows itself. Pass the rows in chunks (chunks=[{{'mean': ..., 'cov': ..., 'counts': ...}}, "
                         f"...], or dask arrays): every part is a sum over items.")
    if np.ndim(cov) == 3 and n * C * C > _FULL_COV_ENTRIES:
        raise ValueError(f"The 'cov' parameter of {func} is an (n, C, C) covariance of {n * C * C * 8 / 2**30:.1f} "
                         f"GiB (n = {n:,}, C = {C:,}); its checks (symmetric, PSD, every pair law >= 0) cost n C^3 "
                         f"and are refused above {_FULL_COV_ENTRIES * 8 / 2**30:.0f} GiB. Pass the class variances "
                         f"(n, C) instead (np.diagonal(cov, axis1=1, axis2=2), or socal.from_members(probs, "
                         f"diagonal=True)): the verdict reads the diagonal only.")
    c = np.asarray(cov, dtype=float)
    if c.ndim == 2:
        v = check_array(c, "cov", func, ndim=2, lo=0.0, rule=">= 0 (class variances)")
        if v.shape != m.shape:
            raise ValueError(f"The 'cov' parameter of {func} must have the shape of 'mean' {m.shape} (class "
                             f"variances) or (n, C, C). Got shape {v.shape} instead.")
        Sigma = None
    else:
        if c.shape != (n, C, C):
            raise ValueError(f"The 'cov' parameter of {func} must have shape (n, C, C) = {(n, C, C)} or (n, C). Got "
                             f"shape {c.shape} instead.")
        if not np.all(np.isfinite(c)):
            raise ValueError(f"The 'cov' parameter of {func} must be finite. Got {int((~np.isfinite(c)).sum())} "
                             f"non-finite value(s) instead.")
        scale = max(1e-300, float(np.abs(c).max()))
        if np.abs(c - np.swapaxes(c, 1, 2)).max() > 1e-9 * scale + 1e-15:
            raise ValueError(f"The 'cov' parameter of {func} must be symmetric in its last two axes. Got an "
                             f"asymmetric matrix (largest difference {np.abs(c - np.swapaxes(c, 1, 2)).max():.3g}).")
        rows = np.abs(c.sum(axis=2)).max(axis=1)
        if rows.max() > _TOL:
            raise ValueError(f"The 'cov' parameter of {func} must have rows summing to 0 (the covariance of a "
                             f"probability vector). Got {int((rows > _TOL).sum())} item(s) whose rows do not, e.g. "
                             f"item {int(rows.argmax())} (largest row sum {rows.max():.3g}).")
        Sigma = 0.5 * (c + np.swapaxes(c, 1, 2))
        low = np.linalg.eigvalsh(Sigma)[:, 0]
        if low.min() < -1e-10:
            raise ValueError(f"The 'cov' parameter of {func} must be positive semidefinite. Got "
                             f"{int((low < -1e-10).sum())} item(s) with a negative eigenvalue, e.g. item "
                             f"{int(low.argmin())} ({low.min():.3g}).")
        v = np.clip(np.diagonal(Sigma, axis1=1, axis2=2).copy(), 0.0, None)
        # the pair law: two votes of one item are classes (c, d) with probability m_c m_d + Sigma_cd, so the null
        # can describe the votes only where that is >= 0 (from_members keeps it so)
        pair = m[:, :, None] * m[:, None, :] + Sigma
        neg = pair < -1e-12
        if neg.any():
            i, a, b = map(int, np.argwhere(neg)[0])
            raise ValueError(f"The 'cov' parameter of {func} must give every pair of classes a probability m_c m_d "
                             f"+ cov_cd >= 0 (the law of two votes of one item under calibration). Got "
                             f"{int(neg.any(axis=(1, 2)).sum())} item(s) where it is negative, e.g. item {i}, classes "
                             f"({a}, {b}): m_c m_d + cov_cd = {pair[i, a, b]:.3g}.")
    copied = c.ndim == 3  # v is ours (the diagonal's copy); a caller's (n, C) array is copied before it is clipped
    for lo in range(0, n, _BLOCK):  # in row blocks: no (n, C) temporaries
        mb, vb = m[lo:lo + _BLOCK], v[lo:lo + _BLOCK]
        cap = mb * (1 - mb)
        over = vb > cap + 1e-12
        if over.any():
            i, j = map(int, np.argwhere(over)[0])
            raise ValueError(f"The 'cov' parameter of {func} must have class variances at most m (1 - m) (f* is a "
                             f"probability). Got {int(over.sum())} above it in rows {lo}-{lo + len(mb) - 1}, e.g. "
                             f"item {lo + i}, class {j}: var {vb[i, j]:.6g} at m {mb[i, j]:.6g}.")
        if np.any(vb > cap):  # above m (1 - m) by round-off only (checked above): clipped to it
            if not copied:
                v, copied = v.copy(), True
                vb = v[lo:lo + _BLOCK]
            np.minimum(vb, cap, out=vb)
    return m, Sigma, v


def class_counts(labels, counts, n, C, func):
    """(n, C) votes per class from class votes (n, k) (-1 missing) or counts (n, C), checked (at least 2 votes per
    item)."""
    if (labels is None) == (counts is None):
        raise ValueError(f"{func} needs exactly one of 'labels' (an (n, k) array of class votes, {MISSING_VOTE} for a "
                         f"missing vote) and 'counts' (an (n, C) array of votes per class).")
    if counts is not None:
        A = check_array(counts, "counts", func, ndim=2, lo=0.0, rule=">= 0 (votes per class)")
        if A.shape != (n, C):
            raise ValueError(f"The 'counts' parameter of {func} must have shape (n, C) = {(n, C)}. Got shape "
                             f"{A.shape} instead.")
        if np.any(A != np.round(A)):
            raise ValueError(f"The 'counts' parameter of {func} must hold whole numbers of votes.")
    else:
        y = check_array(labels, "labels", func, ndim=2)
        if y.shape[0] != n:
            raise ValueError(f"The 'labels' parameter of {func} must have one row per item ({n}). Got shape {y.shape} "
                             f"instead.")
        bad = ((y < 0) | (y >= C) | (y != np.round(y))) & (y != MISSING_VOTE)
        if bad.any():
            raise ValueError(f"The 'labels' parameter of {func} must hold class indices 0..{C - 1}, or {MISSING_VOTE} "
                             f"for a missing vote. Got {y[bad][0]!r} instead.")
        rows = np.broadcast_to(np.arange(n)[:, None], y.shape)[y != MISSING_VOTE]
        A = np.bincount(rows * C + y[y != MISSING_VOTE].astype(np.int64), minlength=n * C).reshape(n, C)
        A = A.astype(float)
    k = A.sum(axis=1)
    if np.any(k < 2):
        raise ValueError(f"Every item needs at least 2 votes ({func}: the second-order conditions are seen through "
                         f"pairs of votes). Got {int((k < 2).sum())} item(s) with fewer.")
    return A


# -- the verdict: class-wise, top-label and trace parts, weighted Holm ----------------------------------------------
WEIGHTS = {"trace": 0.25, "top": 0.25, "classes": 0.5}  # the verdict's share of the level per part (classes: split)
TRACE_EDGES = (0.0, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0)  # bins of tr Sigma: where the trace sentence looks
_TRACE_MIN_ROWS = 30  # a bin with fewer items names no region


def weighted_holm(pvalues, weights):
    """Holm's step-down with weights (Holm 1979, sec. 5): the part with the smallest p / w goes first; at each step
    the adjusted p-value is p times the weight still in play over the part's weight, kept non-decreasing.  The chance
    of any false rejection stays at the level whatever the parts' dependence (a weighted Bonferroni at every step);
    equal weights give :func:`holm`.  Returns the adjusted p-values in the input's order."""
    p = np.asarray(pvalues, dtype=float)
    w = np.asarray(weights, dtype=float)
    if p.shape != w.shape or np.any(w <= 0):
        raise ValueError("weighted_holm needs one positive weight per p-value.")
    order = np.argsort(p / w, kind="stable")
    adj = np.empty_like(p)
    left, running = float(w.sum()), 0.0
    for j in order:
        running = max(running, min(1.0, p[j] * left / w[j]))
        adj[j] = running
        left -= w[j]
    return adj


def holm(pvalues):
    """Holm's step-down adjustment of ``pvalues`` (in their order): the chance of any false rejection among them
    stays at the level, whatever their dependence."""
    p = np.asarray(pvalues, dtype=float)
    return weighted_holm(p, np.ones_like(p))


def _pair_moments(m, v, A):
    """Per item: K votes, the unbiased pair estimate of ``|f* - m|^2`` (d2), and per class its estimate of
    (f*_c - m_c)^2 (dc, (n, C)).  With a the counts, a_c (a_c - 1) / (K (K - 1)) is unbiased for f*_c^2 and a_c / K
    for f*_c (the votes are independent given f*), so dc = a_c (a_c - 1) / (K (K - 1)) - 2 m_c a_c / K + m_c^2 has
    E[dc | f*] = (f*_c - m_c)^2 and d2 = sum_c dc."""
    K = A.sum(axis=1)
    dc = A * (A - 1.0)
    dc /= (K * (K - 1.0))[:, None]
    dc -= 2.0 * m * A / K[:, None]
    dc += m * m
    return K, dc.sum(axis=1), dc


class TraceStats:
    """Mergeable sums of the trace part: add items with :meth:`update`, combine chunks with :meth:`merge`.

    Per item u = d2 - tr Sigma, d2 the votes' unbiased estimate of ``|f* - m|^2`` (every pair of the item's votes:
    :func:`_pair_moments`).  Canonical calibration gives ``E[|f* - m|^2 | S]`` = tr Sigma, so E[u | S] = 0 for every S
    and E[u psi(S)] = 0 for the basis psi = (1, tr Sigma, max m).  The score test reads g = sum u psi with the
    variance sum u^2 psi psi^T (the null fixes E u = 0 but not E u^2 without the full law: a robust variance, valid
    whatever the law of f*).  Also per bin of tr Sigma (:data:`TRACE_EDGES`): the items, the sums of d2, tr Sigma
    and u^2 (the sentence), and per class the sums of dc and var_c (which classes).  Sums, so any order or chunking
    gives the same numbers to round-off."""

    def __init__(self, C: int) -> None:
        self.C = int(C)
        nb = len(TRACE_EDGES) - 1
        self.g, self.V = np.zeros(3), np.zeros((3, 3))
        self.bin_n, self.bin_d2, self.bin_tr, self.bin_u2 = (np.zeros(nb) for _ in range(4))
        self.class_d, self.class_v = np.zeros(self.C), np.zeros(self.C)
        self.n = 0

    def update(self, m: np.ndarray, v: np.ndarray, A: np.ndarray) -> TraceStats:
        """Add validated items: means (n, C), class variances (n, C), counts (n, C)."""
        if m.shape[0] == 0:
            return self
        nb = len(TRACE_EDGES) - 1
        edges = np.asarray(TRACE_EDGES[1:-1])
        for lo in range(0, m.shape[0], _BLOCK):  # row blocks: no (n, C) temporaries
            mb, vb, Ab = m[lo:lo + _BLOCK], v[lo:lo + _BLOCK], A[lo:lo + _BLOCK]
            _, d2, dc = _pair_moments(mb, vb, Ab)
            tr = vb.sum(axis=1)
            u = d2 - tr
            psi = np.column_stack([np.ones_like(u), tr, mb.max(axis=1)])
            self.g += psi.T @ u
            self.V += (psi * (u * u)[:, None]).T @ psi
            b = np.clip(np.searchsorted(edges, tr, side="right"), 0, nb - 1)
            self.bin_n += np.bincount(b, minlength=nb)
            self.bin_d2 += np.bincount(b, d2, minlength=nb)
            self.bin_tr += np.bincount(b, tr, minlength=nb)
            self.bin_u2 += np.bincount(b, u * u, minlength=nb)
            self.class_d += dc.sum(axis=0)
            self.class_v += vb.sum(axis=0)
        self.n += m.shape[0]
        return self

    def merge(self, other: TraceStats) -> TraceStats:
        """The statistics of both chunks."""
        if not isinstance(other, TraceStats) or other.C != self.C:
            raise ValueError("Only TraceStats of the same number of classes can be merged.")
        out = TraceStats(self.C)
        for name in ("g", "V", "bin_n", "bin_d2", "bin_tr", "bin_u2", "class_d", "class_v"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        out.n = self.n + other.n
        return out

    def test(self):
        """The trace part as a TestPart (statistic, df, chi-square p-value)."""
        from .testing import TestPart, chi2_sf, pinv_parts, quad_form

        E, lam = pinv_parts(self.V)
        T, df = quad_form(self.g, E, lam), int(lam.size)
        return TestPart(T, df, chi2_sf(T, df) if df else 1.0)

    def regions(self) -> tuple:
        """Per bin of tr Sigma with items: (lo, hi, items, votes' mean ``|f* - m|^2``, mean tr Sigma, z)."""
        out = []
        for j in np.flatnonzero(self.bin_n):
            n = self.bin_n[j]
            z = (self.bin_d2[j] - self.bin_tr[j]) / np.sqrt(self.bin_u2[j]) if self.bin_u2[j] > 0 else 0.0
            out.append(TraceRegion(TRACE_EDGES[j], TRACE_EDGES[j + 1], int(n), self.bin_d2[j] / n,
                                   self.bin_tr[j] / n, float(z)))
        return tuple(out)


@dataclass(frozen=True)
class TraceRegion:
    """A bin of tr Sigma: its items, the votes' mean ``|f* - m|^2`` there (every pair of votes) against the mean
    reported tr Sigma, and their difference in robust standard errors (z > 0: the votes spread more)."""

    lo: float
    hi: float
    n: int
    observed: float
    reported: float
    z: float

    @property
    def factor(self) -> float:
        """observed / reported (inf where the reported trace is 0 and the votes spread)."""
        return _ratio(self.observed, self.reported)

    def words(self) -> str:
        """The bin in words: where, how many items, the votes against the report, the factor and z."""
        return (f"at tr Sigma {_num(self.lo)}-{_num(self.hi)} ({self.n:,} items): the votes' E|f* - m|^2 = "
                f"{_num(self.observed)} against E tr Sigma = {_num(self.reported)} ({_times(self.factor)}; "
                f"z = {self.z:+.1f})")


def _ratio(a, b):
    if b > 0:
        return float(a / b)
    return float("inf") if a > 0 else float("nan")


def _num(x):
    return "0" if x == 0 else f"{x:.2g}"


def _times(f):
    if not np.isfinite(f):
        return "the reported trace is 0" if f > 0 else "no spread either way"
    if f <= 0:
        return "the votes show no spread beyond the means' own error"
    return f"{f:.3g}x the reported: too small" if f >= 1 else f"{1 / f:.3g}x smaller than reported: too large"


@dataclass(frozen=True)
class TraceCheck(Tabular):
    """What :func:`trace_check` counts from the votes: per bin of tr Sigma and per class, the votes' spread of f*
    about the means against the reported one (the direct check of the covariance sentence)."""

    bins: tuple
    classes: tuple
    observed: float
    reported: float

    @property
    def factor(self) -> float:
        """observed / reported over all items (above 1: the reported covariance too small)."""
        return _ratio(self.observed, self.reported)

    def _rows(self):
        rows = [{"where": f"tr Sigma {_num(r.lo)}-{_num(r.hi)}", "items": r.n, "observed": r.observed,
                 "reported": r.reported, "factor": r.factor} for r in self.bins]
        rows += [{"where": f"class {name}", "items": None, "observed": o, "reported": r, "factor": _ratio(o, r)}
                 for name, o, r in self.classes]
        return rows

    def __str__(self):
        from .tables import table

        return (f"Votes' E|f* - m|^2 = {_num(self.observed)} against E tr Sigma = {_num(self.reported)} "
                f"({_times(self.factor)})\n" + str(table(self._rows())))


def trace_check(mean, cov, labels=None, *, counts=None, names=None) -> TraceCheck:
    """Recount the covariance sentence of :func:`multiclass_test` from the votes, by hand.

    For the items in each bin of tr Sigma (:data:`TRACE_EDGES`) and over all items, the average over items of
    sum_c [a_c (a_c - 1) / (K (K - 1)) - 2 m_c a_c / K + m_c^2] (unbiased for ``|f* - m|^2`` from every pair of an
    item's K votes) against the average tr Sigma; per class, the same sum's class-c term against the average
    Sigma_cc.  A ratio above 1: the votes spread more than the covariance says (too small).  The computation is a
    plain loop over the bins, kept apart from the test's mergeable sums so that the two can be compared.
    """
    m, _, v, A = check_multiclass(mean, cov, labels, counts=counts, func="trace_check")
    n, C = m.shape
    names = [str(c) for c in range(C)] if names is None else [str(x) for x in names]
    K = A.sum(axis=1)
    obs = np.zeros(n)
    cls_obs = np.zeros(C)
    for i in range(n):  # the direct count: item by item
        f_pairs = A[i] * (A[i] - 1) / (K[i] * (K[i] - 1))
        term = f_pairs - 2 * m[i] * A[i] / K[i] + m[i] ** 2
        obs[i] = term.sum()
        cls_obs += term
    tr = v.sum(axis=1)
    bins = []
    for lo, hi in zip(TRACE_EDGES[:-1], TRACE_EDGES[1:]):
        inside = (tr >= lo) & ((tr < hi) if hi < TRACE_EDGES[-1] else (tr <= hi))
        if inside.any():
            bins.append(TraceRegion(lo, hi, int(inside.sum()), float(obs[inside].mean()), float(tr[inside].mean()),
                                    float("nan")))
    classes = tuple((names[c], float(cls_obs[c] / n), float(v[:, c].mean())) for c in range(C))
    return TraceCheck(bins=tuple(bins), classes=classes, observed=float(obs.mean()), reported=float(tr.mean()))


@dataclass(frozen=True)
class MulticlassTest(Tabular):
    """What :func:`multiclass_test` found: one verdict, and the parts it combines.

    Attributes
    ----------
    pvalue : float (property)
        The verdict's p-value: the smallest adjusted p-value of the parts (weighted Holm, :func:`weighted_holm`).
    trace : socal.testing.TestPart
        The trace part (``E|f* - m|^2 = tr Sigma``, every pair of every item's votes).
    classes : tuple of socal.CalibrationTest
        The class-wise tests (one-vs-rest, every vote), in class order.
    holm : ndarray, shape (C,)
        The class-wise parts' adjusted p-values (weighted Holm over all parts).
    top : socal.CalibrationTest
        The top-label test (the event Y = argmax m).
    trace_adjusted, top_adjusted : float
        Those parts' adjusted p-values.
    trace_stats : TraceStats
        The trace part's sums: its regions by tr Sigma and the per-class spreads (the covariance sentence).
    n, C : int
    alpha : float
        The level the parts' simulated references resolve by counts (``multiclass_test(alpha=)``), and the level
        :meth:`summary`, :meth:`rejected` and :meth:`covariance_words` read at unless given another.
    """

    trace: Any
    classes: tuple = field(repr=False)
    holm: np.ndarray = field(repr=False)
    top: Any = field(repr=False)
    trace_adjusted: float = 1.0
    top_adjusted: float = 1.0
    trace_stats: Any = field(default=None, repr=False)
    n: int = 0
    C: int = 0
    k_range: tuple = (2, 2)
    alpha: float = 0.05

    __test__ = False

    @property
    def pvalue(self) -> float:
        """The verdict: the smallest adjusted p-value of the parts (trace, top label, each class)."""
        return float(min(self.trace_adjusted, self.top_adjusted, float(np.min(self.holm))))

    def rejected(self, alpha: float | None = None) -> bool:
        """Whether the verdict rejects at ``alpha`` (p <= alpha; default :attr:`alpha`)."""
        return self.pvalue <= self._level(alpha)

    def _level(self, alpha):
        if alpha is None:
            return self.alpha
        check_parameters({"alpha": level_rule()}, "MulticlassTest", {"alpha": alpha})
        return float(alpha)

    def __format__(self, spec):
        return format(self.pvalue, spec) if spec else str(self)

    @property
    def impossible(self) -> int:
        """Items with a vote the null calls impossible in some class (a vote for a class with m_c = var_c = 0)."""
        return int(max([t.impossible for t in self.classes] + [0]))

    def covariance_words(self, alpha: float | None = None, names=None) -> str:
        """Which way the covariance's trace is off, by what factor, where (by range of tr Sigma), and for which
        classes: the trace part's sums, read as :func:`trace_check` recounts them."""
        alpha = self._level(alpha)
        s = self.trace_stats
        names = names or [str(c) for c in range(self.C)]
        if s is None or s.n == 0:
            return ""
        obs, rep = float(s.bin_d2.sum() / s.n), float(s.bin_tr.sum() / s.n)
        f = _ratio(obs, rep)
        if self.trace_adjusted > alpha:  # no claim that the trace is off: the numbers, read as noise
            head = (f"The covariance: no evidence that its trace is off (trace part adjusted p = "
                    f"{_fmt(self.trace_adjusted)} > {alpha:g}); over all {s.n:,} items the votes' E|f* - m|^2 = "
                    f"{_num(obs)} against E tr Sigma = {_num(rep)} (ratio {f:.3g}, within the noise).")
        else:
            head = (f"The covariance: its trace is off (trace part adjusted {_pfmt(self.trace_adjusted)}): over "
                    f"all {s.n:,} items the votes' E|f* - m|^2 = {_num(obs)} against E tr Sigma = {_num(rep)} "
                    f"({_times(f)}).")
            regs = [r for r in s.regions() if r.n >= _TRACE_MIN_ROWS]
            if regs:
                worst = max(regs, key=lambda r: abs(r.z))
                head += f"\n  Strongest {worst.words()}."
        off = [c for c in np.argsort(self.holm, kind="stable") if self.holm[c] <= alpha and
               self.classes[c].variance_part is not None]
        if off:
            words = [f"{names[c]} ({_times(_ratio(s.class_d[c], s.class_v[c]))})" for c in off[:5]]
            more = f" and {len(off) - 5} more" if len(off) > 5 else ""
            head += ("\n  Classes whose own test rejects, with the votes' E(f*_c - m_c)^2 against E Sigma_cc: "
                     + "; ".join(words) + more + ".")
        return head

    def summary(self, alpha: float | None = None, names=None) -> str:
        """The verdict first, then the parts it combines, then the covariance in words (at ``alpha``, default
        :attr:`alpha`)."""
        alpha = self._level(alpha)
        names = names or [str(c) for c in range(self.C)]
        k = f"{self.k_range[0]}" if self.k_range[0] == self.k_range[1] else f"{self.k_range[0]}-{self.k_range[1]}"
        verdict = "Rejected" if self.pvalue <= alpha else "No evidence against calibration"
        lines = [f"Multiclass calibration test ({self.C} classes, n = {self.n:,} items, {k} votes per item)",
                 f"{verdict} at level {alpha:g}: {_pfmt(self.pvalue)} (the smallest adjusted p-value of the parts "
                 f"below; weighted Holm: the trace and the top label 1/4 of the level each, the {self.C} classes "
                 f"1/2 shared)."]
        if alpha < self.alpha:
            lines.append(f"  Note: the parts' simulated references resolve levels down to {self.alpha:g} (the "
                         f"'alpha' multiclass_test was given); below it a part beyond all its replicates reads its "
                         f"count's floor and cannot reject. Pass alpha={alpha:g} to multiclass_test to read at "
                         f"{alpha:g}.")
        imp = [(names[c], t) for c, t in enumerate(self.classes) if t.impossible]
        if imp:
            lines.append("  Items the null calls impossible (a vote for a class with m_c = var_c = 0): "
                         + "; ".join(f"class {nm}: {t.impossible} item(s), e.g. item(s) "
                                     f"{', '.join(map(str, t.impossible_items[:3]))}" for nm, t in imp[:5])
                         + ". Each such class's p-value is 0 for that reason alone.")
        lines.append(f"  trace (E|f* - m|^2 = tr Sigma, every vote pair): {_pfmt(self.trace.pvalue)}, adjusted "
                     f"{_fmt(self.trace_adjusted)} (T = {self.trace.statistic:.1f} on {self.trace.df} df)")
        lines.append(f"  top label (Y = argmax m): {_pfmt(self.top.pvalue, self.top)}, adjusted "
                     f"{_fmt(self.top_adjusted)}; "
                     f"means {_fmt(self.top.mean_part.pvalue)}, variances {_fmt(self.top.variance_part.pvalue)}")
        shown = range(self.C) if self.C <= 20 else [c for c in np.argsort(self.holm, kind="stable")[:10]]
        for c in shown:
            t, h = self.classes[c], self.holm[c]
            where = ""
            if h <= alpha and t.where() is not None:
                where = "; " + t.where().describe()
            lines.append(f"  class {names[c]}: {_pfmt(t.pvalue, t)}, adjusted {_fmt(h)}{where}")
        if self.C > 20:
            lines.append(f"  ({self.C - 10} more classes, adjusted p >= {_fmt(np.sort(self.holm)[10])}: "
                         f"frame() lists every class)")
        words = self.covariance_words(alpha, names)
        if words:
            lines.append(words)
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def frame(self, names: list | None = None) -> Any:
        """The parts as a table (:mod:`socal.tables`), the classes named by ``names`` (default 0..C-1)."""
        from .tables import table

        return table(self._rows(names))

    def _rows(self, names=None):
        """One row per part: trace, top label, each class (one-vs-rest), each with its adjusted p-value."""
        names = names or [str(c) for c in range(self.C)]
        tr = self.trace
        out = [{"part": "trace", "class": "", "statistic": tr.statistic, "df": tr.df, "pvalue": tr.pvalue,
                "adjusted": self.trace_adjusted, "means_p": None, "variances_p": None}]
        t = self.top
        out.append({"part": "top label", "class": "", "statistic": t.statistic, "df": t.df, "pvalue": t.pvalue,
                    "adjusted": self.top_adjusted, "means_p": t.mean_part.pvalue,
                    "variances_p": None if t.variance_part is None else t.variance_part.pvalue})
        for c, t in enumerate(self.classes):
            out.append({"part": "class", "class": names[c], "statistic": t.statistic, "df": t.df,
                        "pvalue": t.pvalue, "adjusted": float(self.holm[c]), "means_p": t.mean_part.pvalue,
                        "variances_p": None if t.variance_part is None else t.variance_part.pvalue})
        return out

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        tr = self.trace
        return {"n": self.n, "C": self.C, "pvalue": self.pvalue,
                "trace": {"statistic": tr.statistic, "df": tr.df, "pvalue": tr.pvalue,
                          "adjusted": self.trace_adjusted},
                "top": dict(self.top.to_dict(), adjusted=self.top_adjusted),
                "classes": [t.to_dict() for t in self.classes], "adjusted": [float(x) for x in self.holm],
                "weights": dict(WEIGHTS), "k_range": list(self.k_range)}


def _fmt(p):
    from .testing import p_value_words

    return p_value_words(p)


def _pfmt(p, test=None):
    """'p = 0.03' or 'p < 1e-300'; for a binary part with a simulated reference, 'p <= 0.00025' at the floor of its
    count (beyond every replicate: a bound, not a value)."""
    from .testing import fmt_p

    return fmt_p(p, 1.0 / (1 + test.n_sim) if test is not None and test.n_sim else 0.0)


def multiclass_test(mean=None, cov=None, labels=None, *, counts=None, chunks=None, rng=None,
                    alpha: float = 0.05) -> MulticlassTest:
    """Test a C-class predictor's (mean, covariance) for second-order calibration: one verdict, and its parts.

    The parts, each a valid test of a condition canonical calibration implies (docs/multiclass.md derives each):

    - **class c** (one-vs-rest): :func:`socal.calibration_test` of the event Y = c on (m_c, Sigma_cc), every vote
      of every item, its reference simulated where the votes are sparse (the binary test's tail rule);
    - **top label**: the same for the event Y = argmax m;
    - **trace**: ``E|f* - m|^2 = tr Sigma``, read from every pair of every item's votes (:class:`TraceStats`).

    The verdict is the smallest weighted-Holm-adjusted p-value (:func:`weighted_holm`; the trace and the top label
    get 1/4 of the level each, the C classes 1/2 shared): a weighted Bonferroni at its first step, so its size is
    at most the level whatever the parts' dependence, given each part's own size.  Every part the printout shows is
    adjusted in the same family.  Only the class variances (the diagonal) and their sum are read: pass (n, C) class
    variances where the full covariance would not fit (C = 1,000 at n = 5e4 is 400 GB as (n, C, C)).

    Parameters
    ----------
    mean : array_like, shape (n, C)
        The predicted class probabilities (rows sum to 1), C >= 3.
    cov : array_like, shape (n, C, C) or (n, C)
        The predicted covariance (PSD, rows summing to 0: :func:`socal.from_members` of (n, M, C) probabilities),
        or the class variances alone.
    labels : array_like, shape (n, k), optional
        Class votes 0..C-1, :data:`MISSING_VOTE` (-1) for a missing one.
    counts : array_like, shape (n, C), optional
        Instead of ``labels``: votes per class.
    chunks : iterable of mappings, optional
        Instead of arrays: chunks with keys 'mean', 'cov' and 'labels' or 'counts' (a list, or a callable returning
        an iterator), read once; every part is a sum of mergeable statistics (the binary
        :class:`socal.CalibrationTestStats` and :class:`TraceStats`), so the result is the arrays' in any chunking.
        Dask arrays as ``mean``, ``cov``, ``labels``/``counts`` are reduced the same way, partition by partition.
    rng : int, Generator or None
        Seeds the simulated references of the class-wise and top-label parts (None: seed 0, so that the same data
        give the same p-values), as in :func:`socal.calibration_test`.
    alpha : float, default 0.05
        The smallest level the verdict will be read at.  Weighted Holm reads a part of weight w at w alpha first
        (2.5e-4 per class at C = 100), below the 1 / 1,000 a simulated reference resolves by default; each part's
        simulation draws until its share of ``alpha`` is decided by a count of replicates
        (``CalibrationTestStats.test(resolution=)``), so the verdict's size is at most ``alpha`` at any level from
        ``alpha`` up.  A smaller ``alpha`` costs more replicates only where a part lies beyond its first 999.

    Returns
    -------
    MulticlassTest

    Examples
    --------
    >>> import numpy as np, socal
    >>> from socal.multiclass import multiclass_test
    >>> pop = socal.synthetic.DirichletEnsemble(C=3)
    >>> m, S, y = pop.sample(3000, rng=0)
    >>> res = multiclass_test(m, S, y)
    >>> res.trace.df, res.pvalue > 0.001
    (3, True)
    """
    func = "multiclass_test"
    check_rng(rng, func, "rng")  # validated before any pass; the parts read it as the binary test does
    alpha = check_parameters({"alpha": level_rule(allow_none=False)}, func, {"alpha": alpha})["alpha"]
    from .sources import input_kind

    kind = input_kind(func, (mean, cov, labels, counts), chunks)
    if kind == "chunks":
        return _chunked_test(chunks, rng, func, alpha)
    if kind == "dask":
        return _dask_test(mean, cov, labels, counts, rng, func, alpha)
    m, _, v, A = check_multiclass(mean, cov, labels, counts=counts, func=func)
    return _in_memory(m, v, A, rng, alpha)


def _in_memory(m, v, A, rng, alpha=0.05):
    """Arrays in memory: each class's statistics made, read and dropped in turn (a binary test's grid sums are
    13 MB, so holding C = 1,000 of them at once, as chunks must, would take 13 GB); the same statistics and the
    same tests as the chunked path's (:func:`_read`)."""
    from .testing import CalibrationTestStats

    n, C = m.shape
    K = A.sum(axis=1)
    # the rows were validated once, as a whole (check_multiclass): each class's are added as they are
    classes = (CalibrationTestStats().add_validated(m[:, c], v[:, c], A[:, c], K) for c in range(C))
    top, trace = _top_and_trace(m, v, A, K)
    return _read(classes, C, top, trace, n, (int(K.min()), int(K.max())), rng, alpha)


def _read(classes, C, top, trace, n, k_range, rng, alpha):
    """Every part's test from its statistics (``classes`` an iterable of C, read one at a time), each simulated
    reference gated and resolved at the part's share of ``alpha`` (:func:`_gate`), and the verdict over them."""
    w = WEIGHTS["classes"] / C
    tests = [s.test(rng=rng, gate=_gate(w), resolution=w * alpha) for s in classes]
    top_test = top.test(rng=rng, gate=_gate(WEIGHTS["top"]), resolution=WEIGHTS["top"] * alpha)
    return combine(trace.test(), top_test, tests, n, k_range, trace, alpha)


def _top_and_trace(m, v, A, K):
    """The top label's binary statistics (the event Y = argmax m) and the trace part's sums."""
    from .testing import CalibrationTestStats

    t = np.argmax(m, axis=1)
    rows = np.arange(m.shape[0])
    top = CalibrationTestStats().add_validated(m[rows, t], v[rows, t], A[rows, t], K)
    return top, TraceStats(m.shape[1]).update(m, v, A)


def _chunk_part(m, v, A):
    """One chunk's mergeable statistics: (class-wise CalibrationTestStats, the top label's, TraceStats, items, the
    fewest and most votes per item)."""
    from .testing import CalibrationTestStats

    C = m.shape[1]
    need = (C + 1) * CalibrationTestStats().sums.nbytes
    if need > MEMORY_BUDGET:
        raise ValueError(f"multiclass_test with chunks or dask keeps every class's statistics until the last chunk: "
                         f"{need / 2**30:.1f} GiB for C = {C:,} classes, above the {MEMORY_BUDGET / 2**30:.0f} GiB it "
                         f"allows itself. Pass in-memory arrays (their classes are read one at a time) or fewer "
                         f"classes.")
    K = A.sum(axis=1)
    classes = [CalibrationTestStats().add_validated(m[:, c], v[:, c], A[:, c], K) for c in range(C)]  # validated
    top, trace = _top_and_trace(m, v, A, K)
    return classes, top, trace, m.shape[0], (int(K.min()), int(K.max()))


def _merge_parts(a, b, func="multiclass_test"):
    if len(a[0]) != len(b[0]):
        raise ValueError(f"The chunks of {func} must all have the same classes.")
    return ([x.merge(y) for x, y in zip(a[0], b[0])], a[1].merge(b[1]), a[2].merge(b[2]), a[3] + b[3],
            (min(a[4][0], b[4][0]), max(a[4][1], b[4][1])))


def combine(trace, top, classes, n, k_range, trace_stats=None, alpha=0.05) -> MulticlassTest:
    """The verdict from its parts' tests: weighted Holm (:data:`WEIGHTS`) over the trace, the top label and the C
    classes."""
    C = len(classes)
    p = np.array([trace.pvalue, top.pvalue] + [t.pvalue for t in classes], dtype=float)
    w = np.array([WEIGHTS["trace"], WEIGHTS["top"]] + [WEIGHTS["classes"] / C] * C)
    adj = weighted_holm(p, w)
    return MulticlassTest(trace=trace, classes=tuple(classes), holm=adj[2:], top=top, trace_adjusted=float(adj[0]),
                          top_adjusted=float(adj[1]), trace_stats=trace_stats, n=n, C=C, k_range=k_range,
                          alpha=alpha)


def _gate(weight):
    """The chi-square p-value below which a part's reference is simulated (``reference='auto'``): the binary test's
    SIM_GATE, lowered to 20 times the part's share of a level of 0.1.  A part whose chi-square p-value is above that
    has an adjusted p-value of at least 2 (p / w >= 2 at level 0.1), so its simulated p-value could change the
    verdict at a level up to 0.1 only by being 20 times smaller than the chi-square's, which the sparse tail, where
    the chi-square is too light (docs/calibration_test.md), does not do.  At C = 100 a class simulates below
    p = 0.01 instead of 0.2: a twentieth of the simulations."""
    from .testing import SIM_GATE

    return min(SIM_GATE, 20 * 0.1 * weight)


def _finish(part, rng, alpha):
    classes, top, trace, n, k_range = part
    return _read(classes, len(classes), top, trace, n, k_range, rng, alpha)


def _validated_chunks(chunks, func):
    """(chunk number, m, v, A) of each chunk of a 'chunks' source (a list, or a callable returning an iterator),
    each validated by :func:`check_multiclass` as it comes."""
    source = chunks() if callable(chunks) else chunks
    for i, chunk in enumerate(source):
        if not isinstance(chunk, dict):
            raise TypeError(f"A chunk of {func} must be a mapping with keys 'mean', 'cov' and 'labels' or 'counts'. "
                            f"Got {type(chunk).__name__} (chunk {i}).")
        m, _, v, A = check_multiclass(chunk.get("mean"), chunk.get("cov"), chunk.get("labels"),
                                      counts=chunk.get("counts"), func=f"{func} (chunk {i})")
        yield i, m, v, A


def _chunked_test(chunks, rng, func, alpha=0.05):
    acc = None
    for _, m, v, A in _validated_chunks(chunks, func):
        part = _chunk_part(m, v, A)
        acc = part if acc is None else _merge_parts(acc, part, func)
    if acc is None:
        raise ValueError(f"The 'chunks' source of {func} gave no chunks.")
    return _finish(acc, rng, alpha)


def _validated_part(m, cov, labels, counts, func):
    rows = check_multiclass(m, cov, labels, counts=counts, func=func)
    return _chunk_part(rows[0], rows[2], rows[3])


def _dask_test(mean, cov, labels, counts, rng, func, alpha=0.05):
    """The same statistics per dask partition (rows), validated there, tree-merged on the active scheduler."""
    import dask
    import dask.array as da

    votes = labels if labels is not None else counts
    arrays = [mean, cov, votes]
    if not all(isinstance(x, da.Array) for x in arrays):
        raise ValueError(f"With dask input {func} needs dask arrays for 'mean', 'cov' and 'labels' or 'counts'.")
    rows = mean.chunks[0]
    blocks = [x.rechunk((rows,) + tuple(-1 for _ in range(x.ndim - 1))).to_delayed().ravel() for x in arrays]
    key = "labels" if labels is not None else "counts"
    parts = [dask.delayed(_validated_part)(m, c, v if key == "labels" else None, v if key == "counts" else None,
                                           func) for m, c, v in zip(*blocks)]
    while len(parts) > 1:  # a pairwise tree, as the binary sources reduce
        parts = [dask.delayed(_merge_parts)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return _finish(dask.compute(parts[0])[0], rng, alpha)


# -- the evaluation: per-class CE2 and CE1, top-label CE2 ------------------------------------------------------------
@dataclass(frozen=True)
class MulticlassEvaluation(Tabular):
    """What :func:`evaluate_multiclass` found: the multiclass test, then each class's (one-vs-rest) and the top
    label's :class:`socal.Evaluation` (CE2, CE1, their references, the perturbed scores).

    Attributes
    ----------
    test : MulticlassTest
    classes : tuple of socal.Evaluation
    top : socal.Evaluation
    names : tuple of str
    """

    test: MulticlassTest
    classes: tuple = field(repr=False)
    top: Any = field(repr=False)
    names: tuple = ()

    @property
    def mean(self) -> np.ndarray:
        """(n, C): each class's perturbed mean (what :class:`socal.simplex.ClasswisePlatt` is fitted on)."""
        return np.column_stack([e.mean for e in self.classes])

    @property
    def var(self) -> np.ndarray:
        """(n, C): each class's perturbed variance."""
        return np.column_stack([e.var for e in self.classes])

    @property
    def ce2_mean(self) -> float | None:
        """The mean over classes of the class-wise CE2 (None where a class's CE2 was not estimated)."""
        vals = [e.ce2.estimate for e in self.classes if e.ce2 is not None]
        return float(np.mean(vals)) if len(vals) == len(self.classes) else None

    def summary(self, alpha: float = 0.05) -> str:
        """One table: the verdict and its parts, then each class's and the top label's CE2 and CE1."""
        head = self.test.summary(alpha, list(self.names))
        rows = ["", "Size of the error after perturbation (90% intervals; read against the calibrated reference):",
                f"  {'':<10}{'CE2':>9} {'interval':<18}{'reference':>10}   {'CE1':>8} {'interval':<18}{'reference':>10}"]
        width = max(10, max(len(str(x)) for x in self.names) + 1)
        rows[-1] = (f"  {'':<{width}}{'CE2':>9} {'interval':<18}{'reference':>10}   {'CE1':>8} {'interval':<18}"
                    f"{'reference':>10}")
        for name, e in list(zip(self.names, self.classes)) + [("top label", self.top)]:
            if e.ce2 is None:
                c2 = f"{'not estimated':>29}{'':>10}"
            else:
                c2 = (f"{e.ce2.estimate:>9.4f} [{e.ce2.ci.low:.4f}, {e.ce2.ci.high:.4f}]"
                      f"{e.reference.ce2.value:>10.4f}")
            c1 = (f"{'not estimated':>27}{e.reference.ce1.value:>10.4f}" if e.ce1 is None else
                  f"{e.ce1.estimate:>8.4f} [{e.ce1.ci.low:.4f}, {e.ce1.ci.high:.4f}]{e.reference.ce1.value:>10.4f}")
            rows.append(f"  {str(name):<{width}}{c2}   {c1}")
        ce1s = [e.ce1.estimate for e in self.classes if e.ce1 is not None]
        if self.ce2_mean is not None and len(ce1s) == len(self.classes):
            rows.append(f"  mean over classes: CE2 {self.ce2_mean:.4f}, CE1 {np.mean(ce1s):.4f}")
        if self.ce2_mean is None:
            rows.append("  (a CE2 not estimated: the class's variances spread too little for a supported h; see "
                        "socal.bandwidth)")
        if len(ce1s) < len(self.classes) or self.top.ce1 is None:
            rows.append("  (a CE1 not estimated: the class's means spread too little for a supported h, or its "
                        "blurred CE1 fell below the reference where the test rejects the means; Evaluation.ce1_note)")
        return head + "\n" + "\n".join(rows)

    def __str__(self):
        return self.summary()

    def _rows(self):
        """One row per class and the top label: the class-wise test, CE2 and CE1 with intervals and references."""
        test_rows = {r["class"] if r["part"] == "class" else r["part"]: r
                     for r in self.test._rows([str(x) for x in self.names])}
        out = []
        for name, e in list(zip(self.names, self.classes)) + [("top label", self.top)]:
            t = test_rows.get(str(name), {})
            out.append({"class": str(name), "test_p": e.test.pvalue, "adjusted_p": t.get("adjusted"),
                        "means_p": e.test.mean_part.pvalue,
                        "variances_p": None if e.test.variance_part is None else e.test.variance_part.pvalue,
                        "ce2": None if e.ce2 is None else e.ce2.estimate,
                        "ce2_low": None if e.ce2 is None else e.ce2.ci.low,
                        "ce2_high": None if e.ce2 is None else e.ce2.ci.high, "ce2_reference": e.reference.ce2.value,
                        "ce1": None if e.ce1 is None else e.ce1.estimate,
                        "ce1_low": None if e.ce1 is None else e.ce1.ci.low,
                        "ce1_high": None if e.ce1 is None else e.ce1.ci.high,
                        "ce1_reference": e.reference.ce1.value, "verdict": e.verdict})
        return out

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        return {"test": self.test.to_dict(), "names": list(self.names),
                "classes": [e.to_dict() for e in self.classes], "top": self.top.to_dict()}


def evaluate_multiclass(mean=None, cov=None, labels=None, *, counts=None, chunks=None, names=None, h="auto", ci=0.9,
                        n_boot=N_BOOT, rng=0, progress=False, checkpoint=None) -> MulticlassEvaluation:
    """Evaluate a C-class predictor in one call: the multiclass test, each class's CE2 and CE1 (one-vs-rest,
    :func:`socal.evaluate` with its bandwidth rule), their mean, and the top label's.

    Parameters as in :func:`multiclass_test` (arrays, dask arrays or ``chunks``); ``names`` labels the classes in
    the table; ``h``, ``ci``, ``n_boot``, ``progress`` as in :func:`socal.evaluate`, per class; ``rng`` seeds every
    class's perturbation and bootstrap (class c and the top label get their own child streams).

    The result holds every item's perturbed class scores (:attr:`MulticlassEvaluation.mean`, (n, C)), so the rows
    are held in memory whatever the input: ``chunks`` are validated one by one and joined, dask arrays computed
    (the class variances only: a dask (n, C, C) covariance is reduced to its diagonal first), each refused before
    work above the memory budget (:func:`check_multiclass`).  The numbers are the arrays' in any chunking, and in
    any row order (each class's evaluation is, :func:`socal.evaluate`; so is the verdict).

    ``checkpoint`` (a path or a :class:`socal.Checkpoint`): each class's evaluation and the top label's get their
    own checkpoint file beside it (``<path>.class<c>``, ``<path>.top``, with the given ``every`` and ``rows``), so
    a killed run resumes at the class it was in and prints the same numbers bit for bit; needs a seeded ``rng``.

    Examples
    --------
    >>> import socal
    >>> from socal.multiclass import evaluate_multiclass
    >>> m, S, y = socal.synthetic.DirichletEnsemble(C=3).sample(3000, rng=1)
    >>> ev = evaluate_multiclass(m, S, y, n_boot=20, h=1/16)
    >>> len(ev.classes), ev.mean.shape
    (3, (3000, 3))
    """
    from ._evaluate import evaluate
    from .checkpoint import Checkpoint, as_checkpoint
    from .sources import Rows

    func = "evaluate_multiclass"
    cp = as_checkpoint(checkpoint, func)
    m, v, A = _gathered(mean, cov, labels, counts, chunks, func)
    n, C = m.shape
    names = tuple(str(x) for x in (names if names is not None else range(C)))
    if len(names) != C:
        raise ValueError(f"The 'names' parameter of {func} must name the {C} classes. Got {len(names)} names.")
    K = A.sum(axis=1)
    streams = check_rng(rng, func).spawn(C + 1)
    kw = dict(h=h, ci=ci, n_boot=n_boot, progress=progress)

    def part(tag):
        if cp is None:
            return None
        return Checkpoint(f"{os.fspath(cp.path)}.{tag}", every=cp.every, rows=cp.rows)

    # the rows were validated once, as a whole (_gathered): each class's are handed on as they are
    classes = tuple(evaluate(Rows(m[:, c], v[:, c], A[:, c], K), None, rng=streams[c], checkpoint=part(f"class{c}"),
                             **kw) for c in range(C))
    t = np.argmax(m, axis=1)
    rows = np.arange(n)
    top = evaluate(Rows(m[rows, t], v[rows, t], A[rows, t], K), None, rng=streams[C], checkpoint=part("top"), **kw)
    # the verdict is multiclass_test's on the same rows (its parts' simulation gates are the verdict's, not the
    # evaluations' own: a class's Evaluation.test keeps the binary test's default)
    test = _in_memory(m, v, A, None)
    return MulticlassEvaluation(test=test, classes=classes, top=top, names=names)


def _gathered(mean, cov, labels, counts, chunks, func):
    """(m, v, A) in memory from arrays, dask arrays or chunks, each piece validated by :func:`check_multiclass`."""
    from .sources import input_kind

    kind = input_kind(func, (mean, cov, labels, counts), chunks)
    if kind == "chunks":
        parts = []
        for i, m, v, A in _validated_chunks(chunks, func):
            if parts and m.shape[1] != parts[0][0].shape[1]:
                raise ValueError(f"The chunks of {func} must all have the same classes. Got {m.shape[1]} in chunk "
                                 f"{i} after {parts[0][0].shape[1]}.")
            parts.append((m, v, A))
        if not parts:
            raise ValueError(f"The 'chunks' source of {func} gave no chunks.")
        mean, cov, counts = (np.concatenate([p[j] for p in parts]) for j in range(3))
        labels = None
    elif kind == "dask":
        import dask
        import dask.array as da

        if cov is not None and getattr(cov, "ndim", 0) == 3:
            cov = da.diagonal(cov, axis1=1, axis2=2)
        n, C = mean.shape
        if 8 * n * C * _WORK_ARRAYS > MEMORY_BUDGET:  # refused before computing
            raise ValueError(f"{func} would need about {8 * n * C * _WORK_ARRAYS / 2**30:.1f} GiB for n = {n:,} "
                             f"items and C = {C:,} classes, above the {MEMORY_BUDGET / 2**30:.0f} GiB it allows "
                             f"itself.")
        mean, cov, labels, counts = dask.compute(mean, cov, labels, counts)
    m, _, v, A = check_multiclass(mean, cov, labels, counts=counts, func=func)
    return m, v, A


def _per_class(kind, multi, labels, counts, kw):
    """CE2 or CE1 of each class, one-vs-rest, in class order (``multi``: the mean (n, C) and the covariance or the
    class variances; ``rng`` gives each class its own child stream)."""
    from .estimators import ce1 as binary_ce1, ce2 as binary_ce2

    func = f"multiclass.{kind}"
    if kw.pop("checkpoint", None) is not None:
        raise ValueError(f"The 'checkpoint' parameter of {func} is for binary scores; got multiclass input.")
    m, _, v, A = check_multiclass(*multi, labels, counts=counts, func=func)
    K = A.sum(axis=1)
    rng = kw.pop("rng", None)
    streams = check_rng(0 if rng is None else rng, func).spawn(m.shape[1])  # None: a fixed seed, as for one class
    if kind == "ce2":
        return tuple(binary_ce2(m[:, c], v[:, c], counts=(A[:, c], K), rng=streams[c], **kw)
                     for c in range(m.shape[1]))
    return tuple(binary_ce1(m[:, c], counts=(A[:, c], K), rng=streams[c], **kw) for c in range(m.shape[1]))


def ce2(mean, cov, labels=None, *, counts=None, **kwargs) -> tuple:
    """CE2 of each class of a C-class predictor, one against the rest: a tuple of :class:`socal.CalibrationError` in
    class order.  ``mean`` (n, C) with ``cov`` (n, C, C) or class variances (n, C) (or members' probabilities
    (n, M, C) with ``cov`` None, :func:`socal.from_members`); ``labels`` class votes (n, k) or ``counts`` (n, C);
    the other parameters as in :func:`socal.ce2`, per class (``rng`` gives each class its own child stream)."""
    multi = multiclass_input(mean, cov)
    if multi is None:
        raise ValueError("The 'mean' parameter of multiclass.ce2 must be (n, C) class probabilities with 'cov' (n, C, "
                         "C) or (n, C), or members' probabilities (n, M, C) with 'cov' None; binary scores go to "
                         "socal.ce2.")
    return _per_class("ce2", multi, labels, counts, dict(kwargs))


def ce1(mean, labels=None, *, counts=None, **kwargs) -> tuple:
    """CE1 of each class of a C-class predictor, one against the rest: a tuple of :class:`socal.CalibrationError` in
    class order.  ``mean`` (n, C) class probabilities; ``labels`` or ``counts`` as in :func:`ce2`; the other
    parameters as in :func:`socal.ce1`, per class."""
    from ._validation import ndim_of

    if ndim_of(mean) != 2:
        raise ValueError("The 'mean' parameter of multiclass.ce1 must be (n, C) class probabilities; binary means go "
                         "to socal.ce1.")
    m = np.asarray(mean, dtype=float)  # validated with the rest by check_multiclass
    return _per_class("ce1", (m, np.zeros_like(m)), labels, counts, dict(kwargs))
