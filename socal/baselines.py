"""Baseline estimators of CE2 (Appendix "Experiment 1", "Baselines"): 2-D bucketing and Nadaraya-Watson.

Both regress the same targets as :func:`socal.ce2` (a/k and a(a-1)/(k(k-1))) on the perturbed score, with a
constant c chosen from {0.25, 0.5, 1, 2, 4, 8} on a hold-out split by squared error, and return the same result type.

* Bucketing: K x K axis-aligned cells on R with K = clip(ceil(c (n/h^2)^{1/4}), 2, 200), the 2-D histogram MSE
  balance for an O(1/h)-Lipschitz target; the c grid is extended dyadically while the best c is on its boundary.
  Computed with ``np.bincount`` on cell indices.
* Nadaraya-Watson: isotropic Gaussian kernel truncated at 5b, b = c h^{1/2} n^{-1/4}, on the rectangle with var
  multiplied by 4 (both axes of unit length).  Computed on a binned grid (spacing <= b/4) by FFT convolution; the
  binning error is O((spacing/b)^2) relative.
"""

from __future__ import annotations

import math

import numpy as np

from .weights import salt
from .rowkeys import item_keys, keyed_uniforms
from .snapshots import targets
from .deviations import ce_terms
from ._results import CalibrationError, SelectionReport
from ._validation import (check_aligned, check_array, check_bandwidth, check_float, check_int, check_labels, check_rng,
                          check_scores)

__all__ = ["bucketing_ce2", "kernel_ce2", "BucketingFit", "KernelFit", "C_GRID"]

C_GRID = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def _fit_inputs(func, mean, var, zs):
    """Scores in their domain and targets (n, R) in [0, 1], one row per score."""
    m, v = check_scores(mean, var, func)
    z = check_array(zs, "zs", func, ndim=2, lo=0.0, hi=1.0, rule="in [0, 1] (the targets z1, z2)")
    if z.shape[0] != m.shape[0]:
        raise ValueError(f"The 'zs' parameter of {func} must have one row per score ({m.shape[0]}). Got "
                         f"{z.shape[0]} rows instead.")
    return m, v, z


class BucketingFit:
    """Cell means of (z1, z2) on a K x K grid of R; empty cells fall back to the overall mean."""

    def __init__(self, mean, var, zs, K):
        self.K = check_int(K, "K", "BucketingFit", 1, 10_000)
        mean, var, zs = _fit_inputs("BucketingFit", mean, var, zs)
        idx = self._cells(mean, var)
        cnt = np.bincount(idx, minlength=K * K)
        glob = zs.mean(axis=0)
        self.table = np.empty((K * K, zs.shape[1]))
        for r in range(zs.shape[1]):
            s = np.bincount(idx, weights=zs[:, r], minlength=K * K)
            with np.errstate(invalid="ignore", divide="ignore"):
                self.table[:, r] = np.where(cnt > 0, s / cnt, glob[r])

    def _cells(self, mean, var):
        i = np.minimum((mean * self.K).astype(np.intp), self.K - 1)
        j = np.minimum((var * 4 * self.K).astype(np.intp), self.K - 1)
        return i * self.K + j

    def predict(self, mean, var):
        """(eta1, eta2) at the scores: each score's bucket average (the global average where the bucket is empty)."""
        return self.table[self._cells(mean, var)]


class KernelFit:
    """Nadaraya-Watson with an isotropic Gaussian kernel (truncated at 5b) on (m, 4 var), binned + FFT."""

    def __init__(self, mean, var, zs, b):
        self.b = check_float(b, "b", "KernelFit", 0.0, 1e6, lo_open=True)
        mean, var, zs = _fit_inputs("KernelFit", mean, var, zs)
        G = int(min(2048, max(64, math.ceil(4.0 / b))))  # grid spacing <= b/4
        self.G = G
        x, y = mean * (G - 1), var * 4 * (G - 1)
        i, j = np.minimum(x.astype(np.intp), G - 2), np.minimum(y.astype(np.intp), G - 2)
        fx, fy = x - i, y - j
        vals = [np.ones_like(mean)] + [zs[:, r] for r in range(zs.shape[1])]
        grids = np.zeros((len(vals), G * G))
        for di, dj, w in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy),
                          (1, 1, fx * fy)):
            idx = (i + di) * G + (j + dj)
            for r, v in enumerate(vals):
                grids[r] += np.bincount(idx, weights=w * v, minlength=G * G)
        grids = grids.reshape(len(vals), G, G)
        half = int(math.ceil(5 * b * (G - 1)))
        t = np.arange(-half, half + 1) / (G - 1)
        k1 = np.exp(-0.5 * (t / b) ** 2)
        kern = np.outer(k1, k1)
        from scipy.signal import fftconvolve  # on first use: scipy.signal is slow to import

        sm = [fftconvolve(g, kern, mode="same") for g in grids]
        dens = sm[0]
        glob = zs.mean(axis=0)
        floor = 1e-12 * dens.max()
        self.surf = np.stack([np.where(dens > floor, s / np.maximum(dens, floor), glob[r])
                              for r, s in enumerate(sm[1:])])

    def predict(self, mean, var):
        """(eta1, eta2) at the scores: the Nadaraya-Watson averages of the training targets."""
        G = self.G
        x, y = mean * (G - 1), var * 4 * (G - 1)
        i, j = np.minimum(x.astype(np.intp), G - 2), np.minimum(y.astype(np.intp), G - 2)
        fx, fy = x - i, y - j
        S = self.surf
        out = ((1 - fx) * (1 - fy) * S[:, i, j] + fx * (1 - fy) * S[:, i + 1, j] + (1 - fx) * fy * S[:, i, j + 1]
               + fx * fy * S[:, i + 1, j + 1])
        return out.T


def bucket_count(c, n, h):
    return int(np.clip(math.ceil(c * (n / h**2) ** 0.25), 2, 200))


def nw_bandwidth(c, n, h):
    return c * math.sqrt(h) * n ** -0.25


def _make(kind, mean, var, zs, c, n, h):
    return BucketingFit(mean, var, zs, bucket_count(c, n, h)) if kind == "bucketing" \
        else KernelFit(mean, var, zs, nw_bandwidth(c, n, h))


def select_baseline(kind, train, valid, *, h, c_grid=C_GRID):
    """Choose c on ``valid`` (squared error, both responses) for a fit on ``train``; returns (fit, c, errors).

    ``train`` and ``valid`` are (mean, var, zs) triples.  Bucketing extends the grid dyadically while the best c is
    on its boundary (and K is not yet clipped at 2 or 200).
    """
    n = len(train[0])
    grid = list(c_grid)
    errs = {}
    while True:
        for c in grid:
            if c not in errs:
                pred = _make(kind, *train, c, n, h).predict(valid[0], valid[1])
                errs[c] = float(((pred - valid[2]) ** 2).sum(axis=1).mean())
        best = min(errs, key=errs.get)
        if kind != "bucketing":
            break
        K = bucket_count(best, n, h)
        if best == min(grid) and K > 2:
            grid = [best / 2] + grid
        elif best == max(grid) and K < 200:
            grid = grid + [best * 2]
        else:
            break
    return _make(kind, *train, best, n, h), best, errs


def _baseline(kind, func, mean, var, labels, counts, h, holdout, rng):
    m, v = check_scores(mean, var, func)
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    n = m.shape[0]
    a, k = check_labels(labels, n, func, counts=counts)
    h = check_bandwidth(h, func)
    holdout = check_float(holdout, "holdout", func, 0.0, 1.0, lo_open=True, hi_open=True)
    rng = check_rng(0 if rng is None else rng, func)  # omitted: a fixed seed, as for the estimators (README)
    if n < 20:
        raise ValueError(f"The 'mean' parameter of {func} must have at least 20 items. Got {n} instead.")
    zs = np.column_stack(targets(a, k))
    # the hold-out split from uniforms keyed by the items' content (distinct within a content): the same items and
    # seed give the same split, and the same estimate, in any row order
    va = keyed_uniforms(item_keys(m, v, a, k, rng), salt("baseline holdout")) < holdout
    held = int(va.sum())
    if min(held, n - held) < 10:  # a split of a few items selects the constant on noise (holdout=0.999: 3 to fit)
        raise ValueError(f"The 'holdout' parameter of {func} ({holdout:g}) leaves {n - held} item(s) to fit and "
                         f"{held} to validate on; each split needs at least 10.")
    _, c, errs = select_baseline(kind, (m[~va], v[~va], zs[~va]), (m[va], v[va], zs[va]), h=h)
    fit = _make(kind, m, v, zs, c, n, h)  # refit on all items at the chosen constant
    pred = np.clip(fit.predict(m, v), 0.0, 1.0)
    t1, t2 = ce_terms(pred, m, v)
    cs = tuple(sorted(errs))
    report = SelectionReport("holdout", cs, (), np.array([[errs[c]] for c in cs]), 1)
    size = fit.K if kind == "bucketing" else fit.b
    return CalibrationError(float(t1.mean() + t2.mean()), float(t1.mean()), float(t2.mean()), size, c, n, h,
                            None, None, None, report, kind)


def bucketing_ce2(mean, var, labels=None, *, counts=None, h, holdout=0.3, rng=None):
    """CE2 by K x K bucketing of the perturbed score (baseline; see the module docstring).

    ``rng`` seeds the hold-out split that chooses c (omitted: the seed 0, so that the same data give the same
    estimate, as for :func:`socal.ce2`).  Returns a :class:`socal.CalibrationError` whose ``degree`` holds K and
    ``alpha`` the chosen constant c.
    """
    return _baseline("bucketing", "bucketing_ce2", mean, var, labels, counts, h, holdout, rng)


def kernel_ce2(mean, var, labels=None, *, counts=None, h, holdout=0.3, rng=None):
    """CE2 by Nadaraya-Watson regression on the perturbed score (baseline; see the module docstring).

    ``rng`` seeds the hold-out split as in :func:`bucketing_ce2` (omitted: the seed 0).  Returns a
    :class:`socal.CalibrationError` whose ``degree`` holds the bandwidth b and ``alpha`` the constant c.
    """
    return _baseline("kernel", "kernel_ce2", mean, var, labels, counts, h, holdout, rng)
