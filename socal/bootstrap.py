"""Bias correction and intervals for the CE estimators, as mergeable passes over the data.

The parametric bootstrap of :func:`socal.ce2` (``ci=``, ``debias=``), written as two passes that any source runs
(in-memory arrays, a stream of chunks, dask partitions; see :mod:`socal.sources`):

* the world pass (:class:`WorldPass`): in the bootstrap world (scores as observed, f* with the fitted, projected
  moments, labels ~ Binomial(k, f*); in 1-D, E f*^2 from :class:`SecondMomentPass`, so that items of one score differ
  as their label pairs show) the refits are linear in the labels, beta_b = G^-1 Phi' z_b, so their law is
  fixed by the mean and covariance of Phi' z_b.  One pass accumulates both: sum_i phi_i p_i exactly, and the moments
  sum_i C_i T_a(u_i) T_b(w_i) (up to twice the degree) of the targets' per-row covariance C_i
  (:func:`target_covariances`), from which the covariance of Phi' z is assembled as a Gram matrix; above
  ``WORLD_ROWS`` rows those moments are summed over a keyed subset, without bias (:func:`world_sums`).  The B
  right-hand sides are then drawn Gaussian with that mean and covariance (a sum of n independent rows), and the
  refits come from the stored Cholesky factor of the final fit.  (``LABEL_DRAWS = 'exact'`` draws every label set
  instead, :class:`LabelSetsPass`: the former method, n B (l + 1)^2 work, kept to compare, and drawn wherever the
  covariance does not factor: scores packed into a sliver, :func:`_gaussian_right_hand_sides`.)  The estimators run it
  fused with the deviation pass of the same map (:class:`DeviationWorldPass`), which evaluates the map once per row
  for both and reads the source once.
* the refit pass (:class:`RefitPass`): the deviations of each refitted map, with Poisson(1) weights per row (the
  mergeable form of resampling items, for the sampling of scores in the outer average), and the truth and mean
  plug-in of the shrunken worlds that bracket the bias from the other side.  Above ``REFIT_ROWS`` rows it runs on a
  keyed subset of about that many rows, with weights of mean 1 and variance (subset / n), so that the weighted mean
  over the subset fluctuates as the full resample's would; the world's truth is taken over the same rows.

Every random number is keyed by row content and replicate (:mod:`socal.rowkeys`), or, for the Gaussian draws, by the
seed alone: arrays, any row order, any chunking and dask partitions give the same interval and bound, up to the order
of float summation.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ._results import ConfidenceInterval, UpperBound
from .deviations import CE_RANGE, DeviationStats, score_moments
from .rowkeys import (CensusPass, KeyCensus, exact_hash, keyed_uniforms, mix64, mix64_inplace, row_keys, stream_salt,
                      to_unit_interval)
from .chebyshev import (MomentOperator, ScoreAngles, TensorBasis, cholesky_lower, evaluate_series, response_vector,
                        ridge_factor, tensor_features, tensor_gram, to_unit)
from .fitting import feasible
from .sufficient import beta_law, beta_moments, response_moments, target_covariance, targets

__all__ = ["bootstrap", "BootstrapResult", "bracket_interval", "shrunk_estimate", "DeviationWorldPass",
           "SecondMomentPass", "second_moment_fit", "THRESHOLDS", "KeyCensus", "KeyCensusPass"]

_BLOCK_FLOATS = 2**22  # the refit pass holds B x R x (l + 1) floats per row: rows per block keep that near 32 MB
_REP_FLOATS = 2**25  # label sets are drawn in blocks of at most this many targets (256 MB), up to 64 sets


_TABLE_K = 64  # rows with other k up to this many labels draw from a per-row table of their count's law


class _Snapshots:
    """The bootstrap world's label counts a ~ Binomial(k, f*), f* with E f* = p1 and E f*^2 = p2, as a law per row
    prepared once and drawn by inverse CDF from one uniform per row (:meth:`draw`), so that keyed uniforms
    (:func:`socal.rowkeys.keyed_uniforms`) give every row the same counts in any chunk or order.

    For k = 2 the law of a depends on f* only through p1 and p2: (1 - 2 p1 + p2, 2 (p1 - p2), p2), whatever the
    spread of f*.  Other k take f* ~ Beta with those moments (a point mass when the spread is 0, Bernoulli(p1) at the
    largest spread p1 (1 - p1)), so a is Beta-binomial: its pmf is tabulated per row for k <= _TABLE_K; beyond, f* is
    drawn by the inverse Beta CDF and a by the inverse Binomial CDF, from a second uniform.
    """

    def __init__(self, p1, p2, k):
        from scipy import stats

        k = np.asarray(k)
        self.n = k.shape[0]
        self.two = k == 2
        self.q0 = np.clip(1.0 - 2.0 * p1[self.two] + p2[self.two], 0.0, 1.0)
        self.q2c = 1.0 - np.clip(p2[self.two], 0.0, 1.0)
        other = np.flatnonzero(~self.two)
        k_o, p1_o = k[other].astype(np.int64), p1[other]
        bern, point, s = beta_law(p1_o, p2[other])
        alpha, beta = p1_o * s, (1.0 - p1_o) * s
        small = k_o <= _TABLE_K
        # the tabulated rows: cumulative probabilities of a = 0..k, offset by the row's position (so one sorted array)
        rows = other[small]
        self.table_rows, self.table = rows, None
        if rows.size:
            kk = k_o[small]
            width = int(kk.max()) + 1
            j = np.arange(width)[None, :]
            valid = j <= kk[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                pmf = np.where(valid, stats.betabinom.pmf(j, kk[:, None], np.maximum(alpha[small], 1e-300)[:, None],
                                                           np.maximum(beta[small], 1e-300)[:, None]), 0.0)
                pmf_point = np.where(valid, stats.binom.pmf(j, kk[:, None], p1_o[small][:, None]), 0.0)
            pmf = np.where(point[small][:, None], pmf_point, pmf)
            b = bern[small]
            pmf[b] = 0.0
            pmf[b, 0] = 1.0 - p1_o[small][b]
            pmf[b, kk[b]] = p1_o[small][b]
            cdf = np.cumsum(pmf, axis=1)
            cdf /= cdf[np.arange(kk.size), kk][:, None]  # exact 1 at a = k whatever the rounding
            cdf = np.where(valid, cdf, 2.0)  # past a = k: never below a uniform
            self.width = width
            self.table = (cdf + 2.0 * np.arange(kk.size)[:, None]).ravel()  # rows' tables in disjoint ranges
        big = other[~small]
        self.big_rows = big
        if big.size:
            self.big = (k_o[~small], p1_o[~small], alpha[~small], beta[~small], bern[~small], point[~small])

    @property
    def needs_second(self):
        """Whether :meth:`draw` reads a second uniform (rows with more than _TABLE_K labels)."""
        return self.big_rows.size > 0

    def draw(self, u, u2=None):
        """One draw of every row's count from uniforms ``u`` (and ``u2`` for rows with many labels)."""
        from scipy import special, stats

        a = np.empty(self.n)
        r = u[self.two]
        a[self.two] = (r >= self.q0).astype(float) + (r >= self.q2c)
        if self.table is not None:
            t = self.table_rows
            pos = np.searchsorted(self.table, u[t] + 2.0 * np.arange(t.size), side="right")
            a[t] = pos - self.width * np.arange(t.size)
        if self.big_rows.size:
            k, p1, alpha, beta, bern, point = self.big
            ub = u[self.big_rows]
            f = np.where(point, p1, 0.0)
            f = np.where(bern, (ub < p1).astype(float), f)
            mid = ~(bern | point)
            if mid.any():
                f[mid] = special.betaincinv(alpha[mid], beta[mid], ub[mid])
            a[self.big_rows] = stats.binom.ppf(u2[self.big_rows], k, f)
        return a


@dataclass
class _Sums:
    """A mergeable bag of arrays that add."""

    arrays: tuple

    def merge(self, other):
        return _Sums(tuple(a + b for a, b in zip(self.arrays, other.arrays)))


class LabelSetsPass:
    """Response moments of B bootstrap label sets, and the row count.  Every label draw is keyed by row content;
    rows that share their key with others (``duplicates``, as :class:`RefitPass` takes them) are c separate items
    of one content, each drawn from its own item key (key, j), j < c, and the key's rows in this chunk stand for
    their share of the c items' summed targets (the rows are identical, so which row stands for which item changes
    nothing).  Without ``duplicates`` rows of one content would draw the same labels, moving together."""

    unit = "label sets"

    def __init__(self, calmap, n_boot, seed, second=None, duplicates=None):
        self.calmap, self.n_boot, self.seed, self.second = calmap, n_boot, seed, second
        self.duplicates = duplicates  # (keys, counts) of the keys more than one row carries, or None
        self.bar = None  # set by the source: counts the label sets drawn

    def work(self, rows):
        return self.n_boot

    def __call__(self, index, m, v, a, k):
        calmap, B = self.calmap, self.n_boot
        basis = calmap.basis
        R = 2 if calmap.ndim == 2 else 1
        vv = v if calmap.ndim == 2 else None
        keys = row_keys(m, vv, a, k, self.seed)
        p = calmap.predict(m, vv, project=True)
        p1 = p[:, 0]
        if R == 2:
            p2 = p[:, 1]
        else:  # first order: f* = p1 exactly, or with the fitted second moment's spread
            p2 = second_moment_values(self.second, m, p1)
            p2 = p1 * p1 if p2 is None else p2
        u, w = to_unit(m, vv)
        kk = k.astype(np.int64)
        # the draws' keys and laws: one per row of a key of its own, one per item (key, j) of a shared key
        share = starts = None
        if self.duplicates is not None and self.duplicates[0].size:
            dup_keys, dup_counts = self.duplicates
            at = np.minimum(np.searchsorted(dup_keys, keys), dup_keys.size - 1)
            many = dup_keys[at] == keys
            if many.any():
                one = np.flatnonzero(~many)
                shared = np.flatnonzero(many)
                shared_keys, key_of = np.unique(keys[many], return_inverse=True)
                # a key's rows agree in their scores to the key's rounding (socal.rowkeys._bits): each is
                # evaluated at its own exact scores, the identical ones once per group
                exact, first, here = np.unique(exact_hash(m[many], vv[many] if vv is not None else None, a[many],
                                                          k[many]), return_index=True, return_counts=True)
                group_key = key_of[first]
                # the row standing for each key's items (their labels' law): its group of least exact hash, so the
                # same row in any order
                by_key = np.lexsort((exact, group_key))
                lead = by_key[np.r_[True, group_key[by_key][1:] != group_key[by_key][:-1]]]
                rep = shared[first[lead]]
                c = dup_counts[at[rep]]
                starts = np.cumsum(c) - c
                j = np.arange(int(c.sum()), dtype=np.uint64) - np.repeat(starts, c).astype(np.uint64)
                items = mix64(mix64(np.repeat(shared_keys, c) ^ stream_salt(5, 0)) ^ j)
                share = here / c[group_key]  # of its key's items, those each group's rows stand for
                rows = np.concatenate([one, shared[first]])
                draw_keys = np.concatenate([keys[one], items])
                item_rows = np.concatenate([one, np.repeat(rep, c)])
                u, w = u[rows], (w[rows] if w is not None else None)
        if share is None:
            rows = item_rows = np.arange(m.size)
            draw_keys = keys
        law = _Snapshots(p1[item_rows], p2[item_rows], kk[item_rows])
        k_items = k[item_rows]
        n_one = rows.size - (0 if share is None else share.size)
        W = np.zeros((B, R, basis.degree + 1, basis.deg_w + 1))
        block = int(max(1, min(64, _REP_FLOATS // max(1, rows.size * R))))
        Zt = np.empty((block * R, rows.size))  # the response table, one row per (label set, response)
        for start in range(0, B, block):
            reps = min(block, B - start)
            for jb in range(reps):
                b = start + jb  # replicate b's counts: keyed by content (stream 0, b; stream 2, b for large k)
                a_b = law.draw(keyed_uniforms(draw_keys, stream_salt(0, b)),
                               keyed_uniforms(draw_keys, stream_salt(2, b)) if law.needs_second else None)
                zs = [a_b / k_items] if R == 1 else list(targets(a_b, k_items))
                for r, z in enumerate(zs):
                    out = Zt[R * jb + r]
                    out[:n_one] = z[:n_one]
                    if share is not None:  # a shared key's items' summed targets, each group's share of them
                        out[n_one:] = np.add.reduceat(z[n_one:], starts)[group_key] * share
            Wb = response_moments(u, w, Zt[: R * reps].T, basis.degree, basis.deg_w)
            W[start: start + reps] = Wb.reshape(reps, R, basis.degree + 1, basis.deg_w + 1)
            if self.bar is not None:
                self.bar.update(reps)
        return _Sums((W, np.array([m.size])))


def target_covariances(p1, p2, k, R):
    """Per row, the covariance of the targets (z1 = a/k, z2 = a(a-1)/(k(k-1))) when a ~ Binomial(k, f*) and f* has
    the bootstrap world's law (:func:`socal.sufficient.beta_law`): columns Var z1, and for R = 2 also Cov(z1, z2),
    Var z2 (:func:`socal.sufficient.target_covariance`).  For k = 2 they depend on (p1, p2) alone, as the law of a does:
    Var z1 = (p1 + p2)/2 - p1^2, Cov = p2 (1 - p1), Var z2 = p2 (1 - p2), computed so when every row has k = 2.
    First order (R = 1): Var z1 = E z1^2 - p1^2 = p1/k + (k - 1)/k p2 - p1^2, which is p1 (1 - p1)/k when ``p2`` is
    None (f* = p1 on every item: the world of one label per item, where the spread of f* does not show) and adds
    (1 - 1/k) Var f* when items of one score differ (:func:`second_moment_fit`).  Returned as an (n, R') view of an
    (R', n) array, so each column is contiguous.
    """
    if R == 1:
        if p2 is None:
            return (p1 * (1.0 - p1) / k)[:, None]
        return np.maximum(p1 / k + (k - 1.0) / k * p2 - p1 * p1, 0.0)[:, None]
    out = np.empty((3, p1.shape[0]))
    if np.all(k == 2):
        np.subtract(0.5 * (p1 + p2), p1 * p1, out=out[0])
        np.multiply(p2, 1.0 - p1, out=out[1])
        np.multiply(p2, 1.0 - p2, out=out[2])
        return out.T
    out[0], out[1], out[2] = target_covariance(*beta_moments(p1, p2), k)
    return out.T


class SecondMomentPass:
    """The sums that fit the first-order world's E[f*^2 | mean] (:func:`second_moment_fit`): over the rows with
    k >= 2 labels, the 1-D moments sum_i T_j(u_i), j <= 2 ``degree``, and sum_i z2_i T_p(u_i), p <= ``degree``, with
    z2 = a (a - 1) / (k (k - 1)) the share of agreeing label pairs (E z2 = f*^2), and the count of those rows.

    Why: with k labels per item, an item's label share z1 = a/k has variance p1 (1 - p1)/k + (1 - 1/k) Var f*, and
    items of one mean score can differ in f* (that spread is what the second-order error is about).  A first-order
    world with f* = p1 on every item leaves the second term out, and its refits then fluctuate less than the real fit
    (by up to 1/sqrt(2) at k = 2; what that did to the intervals: docs/numbers.md).  One label per item gives no such
    rows, and then no term is missing."""

    def __init__(self, degree):
        self.degree = int(degree)

    def __call__(self, index, m, v, a, k):
        two = np.flatnonzero(k >= 2)
        L = self.degree
        wt = np.empty((two.size, 2))  # columns: 1 and z2, whose moments are sum_i T_j(u_i), sum_i z2_i T_j(u_i)
        wt[:, 0] = 1.0
        kk, aa = k[two], a[two]
        np.divide(aa * (aa - 1.0), kk * (kk - 1.0), out=wt[:, 1])
        u = 2.0 * m[two] - 1.0
        out = response_moments(u, np.ones_like(u), wt, 2 * L, 0)[:, :, 0].T  # (2 L + 1, 2), by NUFFT where it pays
        return _Sums((out[:, 0].copy(), out[: L + 1, 1].copy(), np.array([float(two.size)])))


def second_moment_fit(sums, degree, alpha):
    """Chebyshev coefficients (degree + 1) of the first-order world's E[f*^2 | mean]: the ridge regression of z2 on
    the mean at the fit's ``degree`` and ``alpha`` (the same penalty as the fit of E[Y | mean]), from a
    :class:`SecondMomentPass`'s sums; None without rows of k >= 2 labels (then f* = p1 in the world)."""
    M, b, (rows,) = sums.arrays
    if rows < 1:
        return None
    G = tensor_gram(M[: 2 * degree + 1, None], degree, 0)
    return ridge_factor(G, 0.0 if alpha is None else alpha, warn=False).solve(b[: degree + 1])


def second_moment_values(gamma, m, p1):
    """The world's E f*^2 per row from :func:`second_moment_fit`'s coefficients, in its feasible range [p1^2, p1]
    (p1 the world's mean); None when ``gamma`` is None."""
    if gamma is None:
        return None
    # chunked (evaluate_series): the whole (degree + 1) x n table cost twice as much at n = 2e5, degree 44
    raw = evaluate_series(TensorBasis(gamma.shape[0] - 1, ndim=1), gamma, np.asarray(m, dtype=float))
    return np.clip(raw, p1 * p1, p1)


WORLD_ROWS = 200_000  # the world's covariance moments are summed over a keyed subset of about this many rows
_WORLD_SALT = stream_salt(8, 0)  # the stream the subset's uniforms come from


def world_fraction(n):
    """The share of rows whose target covariances the world pass sums (:func:`world_sums`): 1 up to WORLD_ROWS
    rows, WORLD_ROWS / n above."""
    return 1.0 if n <= WORLD_ROWS else WORLD_ROWS / float(n)


def world_subset(keys, fraction):
    """The rows the world's covariance moments are summed over: each row with probability ``fraction``, from its
    key's own uniform (stream 8), so the same rows in any order or chunking.  (Callers ask only when ``fraction``
    < 1: the keys cost a hash of every row.)"""
    return np.flatnonzero(keyed_uniforms(keys, _WORLD_SALT) < fraction)


def world_sums(calmap, raw, p, m, v, k, p2=None, angles=None, subset=None, fraction=1.0):
    """One chunk's sums of the bootstrap world (:class:`WorldPass`): ``raw``, the map's polynomial at its rows, and
    ``p``, the same projected onto the feasible set (the world's truth), both (n, R); ``p2``, in 1-D, the world's
    E f*^2 per row (:func:`second_moment_values`; None: f* = p1); ``angles``, the rows' :class:`ScoreAngles` when
    the map's evaluation made them (the covariance moments' NUFFT reads them).

    The world's mean right-hand sides are W = sum_i phi_i p_i = G beta + sum_i phi_i (p_i - raw_i), since
    raw_i = phi_i' beta: the pass sums the correction over the rows the projection moved (1-6% of them on the toy
    population), and :func:`world_right_hand_sides` adds G beta from the statistics' moments.  The pass also sums
    raw_i, which G beta reproduces in its constant coordinate: the check that the statistics hold these rows.

    The covariance moments S = sum_i C_i T_a(u_i) T_b(w_i), up to twice the degree, are the pass's costliest sums
    (0.25-0.27 s of the default call at n = 1e6, l = 12 and 44: docs/numbers.md).  Given ``subset``
    (:func:`world_subset`: rows kept independently with probability ``fraction``), they are summed over those rows
    and divided by ``fraction``: the Horvitz-Thompson estimate, unbiased for every entry.  The mean W stays exact over every row:
    the refits are centred on it, and the refit pass measures their deviations from the world's truth at each row,
    so an error in W would enter every replicate as a bias.  An error in S only scales the draws' spread, by a
    relative error of order 1 / sqrt(rows kept per coefficient) in any one direction (about 100 at the largest
    degree, 2,025 coefficients per response, with WORLD_ROWS rows), and less in the average over rows that the
    interval reads."""
    basis = calmap.basis
    R = 2 if calmap.ndim == 2 else 1
    p1 = p[:, 0]
    if R == 2:
        p2 = p[:, 1]
    u, w = to_unit(m, v)
    moved = np.flatnonzero(np.any(p[:, :R] != raw[:, :R], axis=1))
    W = response_moments(u[moved], w[moved], p[moved, :R] - raw[moved, :R], basis.degree, basis.deg_w)
    if subset is None:
        C = target_covariances(p1, p2, k, R)
        S = response_moments(u, w, C, 2 * basis.degree, 2 * basis.deg_w, angles=angles)
    else:
        C = target_covariances(p1[subset], None if p2 is None else p2[subset], k[subset], R)
        S = response_moments(u[subset], w[subset], C, 2 * basis.degree, 2 * basis.deg_w)
        S /= fraction
    return _Sums((W, S, np.array([m.size]), raw[:, :R].sum(axis=0), np.abs(raw[:, :R]).sum(axis=0)))


def world_right_hand_sides(fit, world):
    """(W, S, n): the bootstrap world's mean right-hand sides W[r, a, b] = sum_i p_ir T_a(u_i) T_b(w_i), its
    covariance moments S and its row count, from a world pass's sums (:func:`world_sums`) and the fit's moments.

    G beta (the Gram of every row times the fitted coefficients, by FFT from the moments) is the sum of phi_i raw_i;
    the pass's correction makes it the sum of phi_i p_i.  Its constant coordinate must equal the pass's sum of raw_i
    (to rounding): otherwise the statistics the fit came from do not describe the rows the pass read (a
    :class:`socal.SufficientStats` built from other data than ``chunks``), and a ValueError says so."""
    calmap = fit.calmap
    basis = calmap.basis
    W_corr, S, (n,), raw_sum, raw_abs = world.arrays
    R = W_corr.shape[0]
    l, lw = basis.degree, basis.deg_w
    beta = basis.to_tensor(calmap.beta)[:R].reshape(R, -1).T  # (d, R), tensor layout
    GB = MomentOperator(fit.moments, l, lw)(beta).T.reshape(R, l + 1, lw + 1)
    rows = float(fit.moments[0, 0])  # the row count, to rounding (the moments may come from a NUFFT)
    tol = 1e-9 * (raw_abs + 1.0)
    if abs(rows - n) > 0.5 or np.any(np.abs(GB[:, 0, 0] - raw_sum) > tol):
        raise ValueError(f"The statistics the fit came from do not hold the rows of the data pass ({rows:.0f} rows "
                         f"in the statistics, {n} read; the sums of the fitted map differ by "
                         f"{float(np.max(np.abs(GB[:, 0, 0] - raw_sum))):.3g}): build the SufficientStats from the "
                         f"same rows as 'chunks'.")
    return GB + W_corr, S, n


class WorldPass:
    """The bootstrap world in one pass (:func:`world_sums`): what the right-hand sides its labels have on average
    (sum_i phi_i p_i) adds to G beta (:func:`world_right_hand_sides`), the moments of the targets' covariance
    (sum_i C_i T_a(u_i) T_b(w_i) up to twice the degree, from which the covariance of the right-hand sides is
    assembled; with ``fraction`` < 1, over the keyed subset of :func:`world_subset` under ``seed``), the row count
    and the sums of the raw map that check the statistics."""

    def __init__(self, calmap, second=None, fraction=1.0, seed=None, weights=None):
        self.calmap, self.second, self.fraction, self.seed = calmap, second, fraction, seed
        self.weights = weights if weights is not None else PoissonWeights(0)  # keeps the keys for the refit pass

    def __call__(self, index, m, v, a, k):
        vv = v if self.calmap.ndim == 2 else None
        raw = self.calmap.raw(m, vv)
        p = feasible(raw.copy(), project=True)
        subset = None
        if self.fraction < 1.0:  # the keys, and so the subset, only where rows are left out
            subset = world_subset(self.weights.row_keys(self.seed, index, m, vv, a, k), self.fraction)
        return world_sums(self.calmap, raw, p, m, vv, k, second_moment_values(self.second, m, p[:, 0]),
                          subset=subset, fraction=self.fraction)


class KeyCensusPass(CensusPass):
    """The :class:`KeyCensus` of the rows' keys under ``seed`` (as :class:`RefitPass` computes them)."""

    def __init__(self, seed, ndim):
        super().__init__()
        self.seed, self.ndim = seed, ndim

    def keys(self, m, v, a, k):
        """The keys of a chunk's rows, whose census this pass counts."""
        return row_keys(m, v if self.ndim == 2 else None, a, k, self.seed)


@dataclass
class _DeviationsAndWorld:
    dev: DeviationStats
    world: _Sums
    census: KeyCensus | None = None

    def merge(self, other):
        census = None if self.census is None else self.census.merge(other.census)
        return _DeviationsAndWorld(self.dev.merge(other.dev), self.world.merge(other.world), census)


class DeviationWorldPass(CensusPass):
    """The deviation pass (:class:`socal.deviations.DeviationPass`) and the world pass (:class:`WorldPass`) of one
    fitted map in one pass over the data: the map is evaluated once per row (its clipped prediction for the CE
    average, the same values projected for the world), the costliest step of either at large n.  Returns
    (DeviationStats, the world's sums for :func:`bootstrap`'s ``world``) after ``map_reduce``; with
    ``census_seed``, also the rows' :class:`KeyCensus` under that seed (for :func:`bootstrap`'s ``duplicates``).
    ``fraction`` < 1 (:func:`world_fraction`) sums the world's covariance moments over the keyed subset of the rows
    (:func:`world_subset`, keyed under ``seed``)."""

    def __init__(self, calmap, second=None, census_seed=None, weights=None, fraction=1.0, seed=None):
        super().__init__()
        self.calmap, self.second, self.census_seed = calmap, second, census_seed
        self.fraction, self.seed = fraction, seed
        self.weights = weights if weights is not None else PoissonWeights(0)  # keeps the keys for the refit pass

    def __call__(self, index, m, v, a, k):
        calmap = self.calmap
        vv = v if calmap.ndim == 2 else None
        angles = ScoreAngles(m, vv)  # the NUFFTs of the evaluation and of the covariance moments share them
        raw = calmap.raw(m, vv, angles=angles)
        eta = feasible(raw.copy())  # clipped to [0, 1], as DeviationStats predicts
        dev = DeviationStats(calmap).add_predictions(eta, m, vv)
        p = feasible(eta.copy(), project=True)
        keyed = {}  # the rows' keys under a seed, hashed once per chunk for the subset and the census

        def keys(seed):
            if seed not in keyed:
                keyed[seed] = self.weights.row_keys(seed, index, m, vv, a, k)
            return keyed[seed]

        subset = world_subset(keys(self.seed), self.fraction) if self.fraction < 1.0 else None
        world = world_sums(calmap, raw, p, m, vv, k, second_moment_values(self.second, m, p[:, 0]), angles,
                           subset, self.fraction)
        census = None
        if self.census_seed is not None:
            census = self.census(lambda: keys(self.census_seed), m.shape[0])
        return _DeviationsAndWorld(dev, world, census)


_JITTERS = (1e-6, 1e-5, 1e-4, 1e-3)  # tried in turn, relative to each variance, on the covariance's diagonal


def _fill_covariance(cov, S, basis, pairs):
    """Write the lower blocks of 4 Cov(Phi' z) into ``cov`` (Fortran order, tensor layout) and return its diagonal.

    Block (q, r), q >= r, is 4 times the Gram matrix of the moments S[j] (:func:`socal.chebyshev.tensor_gram` with
    ``factor=1``; the factor 1/2 goes into the draws), which is symmetric: its transpose is a row-major view of the
    Fortran-ordered matrix, and it is written straight into it (no copy of the block, no permutation).  Nothing is
    rescaled: the jitter is relative to each coordinate's variance, which is the jitter a unit diagonal would take
    after Jacobi scaling, and Cholesky's accuracy does not depend on the diagonal scaling (van der Sluis, Numer.
    Math. 14, 1969), so the scaling's two passes over the matrix bought nothing."""
    d = (basis.degree + 1) * (basis.deg_w + 1)
    for (r, q), j in pairs.items():
        view = cov[q * d:(q + 1) * d, r * d:(r + 1) * d].T  # view[a, b] = cov[q d + b, r d + a]
        tensor_gram(S[j], basis.degree, basis.deg_w, out=view, factor=1.0)
    return np.diagonal(cov).copy()


def _gaussian_right_hand_sides(W, S, basis, n_boot, seed):
    """(d, B, R) right-hand sides b_b = E b + L xi_b, L L' the exact covariance of Phi' z in the world (blocks
    assembled from the covariance moments S), xi_b standard normal from ``SeedSequence([seed, 3])``: the refits are
    linear in the labels, so their noise has the exact label-redraw covariance, with a Gaussian shape (the sum of n
    independent rows).  None when the computed covariance does not factor at any jitter: scores packed into a
    sliver of the square (a predictor whose outputs barely vary) leave most coordinates' variances below the
    moments' rounding (the NUFFT's relative 1e-13 of the whole sum), so the covariance assembled from them is not
    positive definite; :func:`bootstrap` then draws every label set (:class:`LabelSetsPass`), which needs no
    factorisation.  A jitter large enough to factor it, a share of the largest variance on every coordinate, is not
    the remedy: it puts noise where the fit's Gram is nearly singular, which the Gram's inverse amplifies into the
    refits (docs/numbers.md, "Why each rule of the estimator is there").

    The covariance is factorised in the tensor layout of the Chebyshev coefficients and the draws are permuted to
    the basis' order after (the same law: P L xi has covariance P L L' P').  Everything is float64: the moments S
    differ between chunkings of the same rows in their last bits (float summation order), and a float32 copy of the
    covariance rounds a few entries the other way, which the factorisation amplifies (at n = 60,000,
    l = 32: 4 entries of 1.2 million, the interval moved by 1.8e-7); in float64 the same rows in any chunking give
    the interval to about 1e-13 (tests/test_bootstrap.py)."""
    R = W.shape[0]
    mean = np.stack([response_vector(W[r], basis) for r in range(R)], axis=1)  # (d, R)
    d = mean.shape[0]
    pairs = {(0, 0): 0} if R == 1 else {(0, 0): 0, (0, 1): 1, (1, 1): 2}
    # the smallest jitter on the diagonal that factors the covariance, from 1e-6 of each coordinate's variance (a
    # 1e-6 share of added noise, far below what the draws resolve) to 1e-3 at most; a failed attempt costs about a
    # whole factorisation.  A coordinate of variance 0 (every row's target covariance 0 where its basis function
    # lives) gets a unit diagonal, and no noise after
    root = None
    for jitter in _JITTERS:
        # lower triangle only (what the factorisation reads), in Fortran order, which LAPACK takes without a copy;
        # built afresh for each attempt (LAPACK overwrites it)
        cov = np.zeros((R * d, R * d), order="F")
        var = _fill_covariance(cov, S, basis, pairs)
        silent = ~(var > 0)
        cov[np.diag_indices(R * d)] = np.where(silent, 1.0, var * (1.0 + jitter))
        root, info = cholesky_lower(cov)  # the product reads the lower part
        if info == 0:
            break
        root = None
    if root is None:  # rounding beyond every jitter: the caller draws the label sets instead
        return None
    xi = np.random.default_rng([seed & (2**63 - 1), 3]).standard_normal((R * d, n_boot))
    # (1/2) L xi (L L' is 4 times the covariance) as a triangular product: half the flops of a full one; xi in
    # Fortran order, which BLAS takes as is
    root = linalg.blas.dtrmm(0.5, root, np.asfortranarray(xi), lower=1, overwrite_b=1)
    root[silent] = 0.0
    noise = root.reshape(R, d, n_boot)[:, basis.tensor_index, :]  # response-major, basis order
    return mean[:, None, :] + noise.transpose(1, 2, 0)  # (d, B, R)


THRESHOLDS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, np.inf)  # of the shrunken worlds, in refit SDs
_N_SHRINK = 50  # refits whose deviations price each shrunken world (its mean plug-in only)


def _part(buffer, shape):
    """The leading part of a flat ``buffer`` as a contiguous array of ``shape``."""
    return buffer[: int(np.prod(shape))].reshape(shape)


def _std_over_refits(e, scratch):
    """``e.std(axis=1)`` (the refits' axis of an (R, B, rows) array) computed as numpy computes it (the mean, the
    squared deviations from it, their mean, its root), with the deviations written into ``scratch``: the same bits
    without a temporary of e's size."""
    mean = np.add.reduce(e, axis=1, keepdims=True)
    np.true_divide(mean, e.shape[1], out=mean)
    dev = np.subtract(e, mean, out=scratch)
    np.multiply(dev, dev, out=dev)
    var = np.add.reduce(dev, axis=1)
    return np.sqrt(var / e.shape[1])


def _gaussian_bias(x, sigma):
    """E|x + sigma Z| - |x|, Z standard normal (the folded normal's mean less |x|): the plug-in's bias at a row whose
    truth is x and whose fitted value has Gaussian noise of SD sigma (0 where sigma is 0)."""
    from scipy import special

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sigma > 0, x / (sigma * np.sqrt(2.0)), 0.0)
        out = sigma * np.sqrt(2.0 / np.pi) * np.exp(-t * t) + x * special.erf(t) - np.abs(x)
    return np.where(sigma > 0, out, 0.0)


def _soft(g, t):
    """Soft-thresholding: sign(g) max(|g| - t, 0)."""
    return np.sign(g) * np.maximum(np.abs(g) - t, 0.0)


class RefitPass:
    """Poisson-weighted deviation sums of the B refitted maps, and the plug-in of the shrunken worlds.

    Per row i and response r, e_bir = (refit b's prediction) - (the world's truth p_ir) is the fit's noise at the
    row and sigma_ir its spread over the refits.  The world with threshold tau has truth g_tau = soft(g, tau sigma),
    g = p - score: it keeps what stands out of the noise.  Its truth sums |g_tau| and its mean plug-in sums
    |g_tau + e_b| over the first _N_SHRINK refits, per tau in THRESHOLDS (all sums, so chunks merge).

    Arrays are laid out (response, refit, row), so the sums over refits add whole contiguous rows.  ``weights`` (a
    :class:`PoissonWeights`) hands out the Poisson(1) weights, drawn once per chunk and shared by the candidates'
    bootstraps where they fit its budget.

    Rows that share their key with others (``duplicates``: the keys more than one row carries and their counts,
    from a :class:`KeyCensus`) are c separate items of one content, which keyed draws alone would move together: c
    items weighted alike by one Poisson(1) weight have a total of variance c^2 instead of c, and one keyed subset
    draw keeps all c or none (docs/numbers.md, "Rows of one content").  So each key of count c stands for c items
    (key, j), j < c, drawn as the other rows are: the subset keeps kappa ~ Binomial(c, q) of them (the inverse CDF
    at the key's own uniform), each kept item has its own Poisson(1) weight, and the key's c rows share the kept
    items' count and total weight equally, 1/c each, in whatever chunks they lie (the census counts rows over all
    chunks, so the shares add up to the whole).  The rows are identical, so which of them stands for which item
    changes nothing: the sums are those of c independent items.  Rows of a key of their own are drawn as before,
    with the same numbers.
    """

    def __init__(self, calmap, betas, seed, weights=None, fraction=1.0, inner=False, duplicates=None):
        self.calmap, self.betas, self.seed = calmap, betas, seed  # betas: (d, B, R)
        self.inner = inner  # also the analytic one-step bias of every refit (:func:`_gaussian_bias`)
        self.weights = weights if weights is not None else PoissonWeights(0)
        self.fraction = fraction  # the share of rows evaluated (a keyed subset), and the weights' variance
        self.duplicates = duplicates  # (keys, counts) of the keys more than one row carries, or None
        self.bar = None  # set by the source: counts the rows evaluated under all refits

    def __call__(self, index, m, v, a, k):
        calmap = self.calmap
        basis, ndim = calmap.basis, calmap.ndim
        d, B, R = self.betas.shape
        keys = self.weights.row_keys(self.seed, index, m, v if ndim == 2 else None, a, k)
        q = self.fraction
        shared = None
        if self.duplicates is not None and self.duplicates[0].size:
            dup_keys, dup_counts = self.duplicates
            at = np.minimum(np.searchsorted(dup_keys, keys), dup_keys.size - 1)
            many = dup_keys[at] == keys
            if many.any():  # these rows are items of a shared content: drawn per item below, the rest as before
                shared = (m[many], v[many] if ndim == 2 else None, a[many], k[many], keys[many], dup_counts[at[many]])
                one = ~many
                m, v, keys = m[one], (v[one] if ndim == 2 else v), keys[one]
        if q < 1.0:  # a keyed subset of the rows: the same rows whatever the chunking
            keep = keyed_uniforms(keys, stream_salt(4, 0)) < q
            m, v, keys = m[keep], (v[keep] if ndim == 2 else v), keys[keep]
        draw = self.weights.get(self.seed, index, keys, B)
        num, den = np.zeros(B), np.zeros(B)
        truth = 0.0
        shrunk_truth, shrunk_plug = np.zeros(len(THRESHOLDS)), np.zeros(len(THRESHOLDS))
        nb = min(B, _N_SHRINK)
        inner_num, inner_data = np.zeros(B), 0.0
        # (R B, d) in the tensor layout, response-major
        coef = basis.to_tensor(self.betas.transpose(0, 2, 1).reshape(d, R * B)).reshape(R * B, -1)
        # the world's truth (the fitted map, projected) from the same product: its coefficients as R more rows
        coef = np.concatenate([coef, basis.to_tensor(calmap.beta)[:R].reshape(R, -1)])
        u, w = to_unit(m, v if ndim == 2 else None)
        rows = max(64, _BLOCK_FLOATS // (B * R * (basis.degree + 1)))
        # flat buffers for the block's arrays, reused block after block (every step below writes into them); a
        # block's arrays are their leading parts, so they are contiguous and every sum adds in numpy's usual order
        size = min(rows, m.size)
        buf_both, buf_dev = np.empty((R * B + R) * size), np.empty(R * B * size)
        buf_shrunk, buf_wts = np.empty(R * nb * size), np.empty(size * B)
        for start in range(0, m.size, rows):
            sl = slice(start, min(start + rows, m.size))
            c = sl.stop - sl.start
            mm = m[sl]
            vv = v[sl] if ndim == 2 else None
            phi = tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
            both = np.matmul(coef, phi, out=_part(buf_both, (R * B + R, c)))
            pred = np.clip(both[:R * B], 0.0, 1.0, out=both[:R * B]).reshape(R, B, -1)
            p = feasible(both[R * B:].T, project=True).T  # (R, rows)
            score = score_moments(mm, vv)  # (R, rows): the CE terms' scores
            dev = np.subtract(pred, score[:, None, :], out=_part(buf_dev, (R, B, c)))
            np.abs(dev, out=dev)
            s = dev[0] if R == 1 else np.add(dev[0], dev[1], out=dev[0])  # (B, rows)
            wts = draw(sl)  # (rows, B)
            if q < 1.0:  # weights of mean 1 and variance q: resampling n items, seen through q n of them
                wts = np.subtract(wts, 1.0, out=_part(buf_wts, (c, B)))
                wts *= np.sqrt(q)
                wts += 1.0
            num += np.einsum("ib,bi->b", wts, s)
            den += wts.sum(axis=0)
            e = np.subtract(pred, p[:, None, :], out=pred)
            sigma = _std_over_refits(e, _part(buf_dev, (R, B, c)))
            g = p - score
            truth += np.abs(g).sum()
            if self.inner:  # refit b's own one-step bias, each row's noise N(0, sigma^2): sum over responses
                gb = np.add(e, g[:, None, :], out=_part(buf_dev, (R, B, c)))
                beta_b = _gaussian_bias(gb, sigma[:, None, :]).sum(axis=0)  # (B, rows)
                inner_num += np.einsum("ib,bi->b", wts, beta_b)
                inner_data += _gaussian_bias(g, sigma).sum()
            en = e[:, :nb, :]
            out = _part(buf_shrunk, (R, nb, c))
            for j, tau in enumerate(THRESHOLDS):
                gt = np.zeros_like(g) if np.isinf(tau) else _soft(g, tau * sigma)
                shrunk_truth[j] += np.abs(gt).sum()
                np.add(gt[:, None, :], en, out=out)
                shrunk_plug[j] += np.abs(out, out=out).sum() / nb
            if self.bar is not None:
                self.bar.update(c)
        sums = _Sums((num, den, shrunk_truth, shrunk_plug, np.array([m.size, truth]), inner_num,
                      np.array([inner_data])))
        if shared is not None:
            sums = sums.merge(self._shared_sums(*shared, coef))
        return sums

    def _shared_sums(self, m, v, a, k, keys, counts, coef):
        """The sums of :meth:`__call__` over rows whose key ``counts`` rows carry in all (see the class): each key's
        rows here stand for their share of its kept items, each at its own exact scores (a key's rows agree to the
        keys' rounding, :func:`socal.rowkeys._bits`), the identical ones evaluated once."""
        calmap = self.calmap
        basis = calmap.basis
        d, B, R = self.betas.shape
        nb = min(B, _N_SHRINK)
        q = self.fraction
        keys, key_first, key_of = np.unique(keys, return_index=True, return_inverse=True)
        c = counts[key_first]
        if q < 1.0:  # kappa ~ Binomial(c, q) of the key's c items are kept, from the key's own uniform
            from scipy import stats

            kept = stats.binom.ppf(keyed_uniforms(keys, stream_salt(4, 1)), c, q)
            kept = np.maximum(kept, 0.0).astype(np.int64)
        else:
            kept = c.astype(np.int64)
        # the rows of a key agree in their scores to the key's rounding (socal.rowkeys._bits): each is evaluated at
        # its own exact scores, the identical ones once per group (first: a row of each group; here: its rows)
        _, first, here = np.unique(exact_hash(m, v if calmap.ndim == 2 else None, a, k), return_index=True,
                                   return_counts=True)
        group_key = key_of[first]
        live = kept[group_key] > 0
        first, here, group_key = first[live], here[live], group_key[live]
        num, den = np.zeros(B), np.zeros(B)
        shrunk_truth, shrunk_plug = np.zeros(len(THRESHOLDS)), np.zeros(len(THRESHOLDS))
        inner_num, truth, inner_data = np.zeros(B), 0.0, 0.0
        share = here / c[group_key]  # of its key's items, those each group's rows stand for
        if first.size:
            # item j of a key: its own key, from the key and j; its Poisson(1) weights as any row's
            used = np.unique(group_key)  # the keys with kept items, sorted
            kept_used = kept[used]
            starts = np.cumsum(kept_used) - kept_used
            j = np.arange(int(kept_used.sum()), dtype=np.uint64) - np.repeat(starts, kept_used).astype(np.uint64)
            items = mix64(mix64(np.repeat(keys[used], kept_used) ^ stream_salt(5, 0)) ^ j)
            wts = poisson_weights(items, self.seed, B).astype(float)
            if q < 1.0:  # mean 1 and variance q, as the rows of a key of their own
                wts = 1.0 + (wts - 1.0) * np.sqrt(q)
            at = np.searchsorted(used, group_key)
            wts = np.add.reduceat(wts, starts, axis=0)[at] * share[:, None]  # (groups, B): the groups' shares
            rowf = share * kept[group_key]  # the kept items each group's rows stand for
            vv = v[first] if calmap.ndim == 2 else None
            u, w = to_unit(m[first], vv)
            mm = m[first]
            rows = max(64, _BLOCK_FLOATS // (B * R * (basis.degree + 1)))
            for start in range(0, first.size, rows):
                sl = slice(start, min(start + rows, first.size))
                both = coef @ tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
                pred = np.clip(both[:R * B], 0.0, 1.0).reshape(R, B, -1)
                p = feasible(both[R * B:].T, project=True).T
                score = score_moments(mm[sl], None if vv is None else vv[sl])
                s = np.abs(pred - score[:, None, :]).sum(axis=0)  # (B, rows)
                wb, f = wts[sl], rowf[sl]
                num += np.einsum("ib,bi->b", wb, s)
                den += wb.sum(axis=0)
                e = pred - p[:, None, :]
                sigma = e.std(axis=1)
                g = p - score
                truth += np.abs(g).sum(axis=0) @ f
                if self.inner:
                    beta_b = _gaussian_bias(e + g[:, None, :], sigma[:, None, :]).sum(axis=0)
                    inner_num += np.einsum("ib,bi->b", wb, beta_b)
                    inner_data += _gaussian_bias(g, sigma).sum(axis=0) @ f
                en = e[:, :nb, :]
                for i, tau in enumerate(THRESHOLDS):
                    gt = np.zeros_like(g) if np.isinf(tau) else _soft(g, tau * sigma)
                    shrunk_truth[i] += np.abs(gt).sum(axis=0) @ f
                    shrunk_plug[i] += (np.abs(gt[:, None, :] + en).sum(axis=(0, 1)) @ f) / nb
            rows_kept = float(rowf.sum())
        else:
            rows_kept = 0.0
        if self.bar is not None:
            self.bar.update(int(here.sum()))
        return _Sums((num, den, shrunk_truth, shrunk_plug, np.array([rows_kept, truth]), inner_num,
                      np.array([inner_data])))


_POISSON_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, j + 1, dtype=float)) for j in range(20)])


def _poisson_table(bits=16):
    """The Poisson(1) inverse CDF on each bin of [0, 1) that a hash's top ``bits`` bits name, as uint8: the weight
    where it is constant on the bin, and 255 in the few bins that hold a CDF value (there the whole uniform
    decides)."""
    edges = np.arange(2**bits) * 2.0**-bits
    low = np.searchsorted(_POISSON_CDF, edges, side="right")  # the weight at the bin's left end
    high = np.searchsorted(_POISSON_CDF, edges + 2.0**-bits, side="left")  # ... just below its right end
    return np.where(low == high, low, 255).astype(np.uint8)


_POISSON_TABLE = _poisson_table()


@functools.lru_cache(maxsize=8)
def _weight_salts(B):
    """The salts of the weights' streams (1, b), b < B (read-only: shared by every call with this B)."""
    salts = np.array([stream_salt(1, b) for b in range(B)], dtype=np.uint64)
    salts.flags.writeable = False
    return salts


_WEIGHT_BLOCK = 2**15  # hashes per block of poisson_weights: 256 KB of uint64, which stays in cache


def poisson_weights(keys, seed, B):
    """Poisson(1) weights of shape (rows, B), uint8: row i's weight in replicate b is the inverse Poisson(1) CDF at
    its keyed uniform (stream 1, b), so it does not depend on the row's chunk or position.  (P(w >= 20) = 2e-19.)

    The inverse CDF is read from a table on the uniform's top 16 bits, which settles it except in the few bins that
    hold a CDF value; there (a share of about 1e-4) it is computed from the whole uniform, so the weights are those
    of ``searchsorted(cdf, u, side='right')`` exactly.  The hashes are mixed in place and read through one table
    with ``np.take``: the same numbers at a third of the cost of the plain expressions.  The mix's last step,
    x ^= x >> 31, leaves the top 31 bits as they are, so the table reads them before it, and the step is taken
    only for the uniforms the table does not settle.  Rows are hashed in blocks of about _WEIGHT_BLOCK hashes,
    whose every pass stays in cache: 3.5 ms against 11 ms for 5,000 rows x 200 replicates (the refit pass's share
    at n >= 5,000), the same bits."""
    keys = np.asarray(keys, dtype=np.uint64)
    salts = _weight_salts(B)
    out = np.empty((keys.size, B), dtype=np.uint8)
    rows = max(1, _WEIGHT_BLOCK // max(B, 1))
    size = min(rows, keys.size)
    h, scratch = np.empty((size, B), dtype=np.uint64), np.empty((size, B), dtype=np.uint64)
    top = np.empty((size, B), dtype=np.uint16)
    for start in range(0, keys.size, rows):
        c = min(rows, keys.size - start)
        hh, sc, tp, ob = h[:c], scratch[:c], top[:c], out[start:start + c]
        np.bitwise_xor(keys[start:start + c, None], salts, out=hh)
        mix64_inplace(hh, sc, last=False)  # the top 31 bits are mix64's already
        np.right_shift(hh, np.uint64(48), out=sc)
        np.copyto(tp, sc, casting="unsafe")  # < 2^16: exact
        np.take(_POISSON_TABLE, tp, out=ob)
        fix = ob == 255
        if fix.any():
            x = hh[fix]
            x ^= x >> np.uint64(31)  # the last step, where the whole uniform decides
            ob[fix] = np.searchsorted(_POISSON_CDF, to_unit_interval(x), side="right")
    return out


class PoissonWeights:
    """The refit pass's Poisson(1) weights per (row, refit) (:func:`poisson_weights`, keyed by row content), and the
    rows' keys they come from.

    The candidates of one call share a seed, so they share these weights: a chunk's (rows x B) table is computed
    once and kept while what is kept stays within ``budget`` bytes (the tables as uint8); beyond it every call
    computes its own, block by block, the same numbers.  The rows' keys (:meth:`row_keys`) are kept the same way,
    so that the first candidate's fused pass (its :class:`KeyCensus`) and every candidate's refit pass hash the
    rows once.

    What is kept is found by the chunk's position and checked against the chunk's content: the keys are reused only
    for the very arrays they were computed from (held by weak reference, so a stream's chunks are not kept alive),
    and a table only for keys equal to those it was drawn for.  A source may give its chunks in another order, or
    other rows at one position, on another pass (a callable that lists files, a shuffling loader): the position
    alone would then hand one chunk's keys and weights to another chunk's rows.
    """

    def __init__(self, budget=2**26):
        self.budget, self.kept = budget, {}

    def _room(self, nbytes):
        return nbytes <= self.budget - sum(sum(a.nbytes for a in arrays) for _, arrays in self.kept.values())

    def row_keys(self, seed, index, m, v, a, k):
        """:func:`socal.rowkeys.row_keys` of a chunk's rows (``v`` None in 1-D), kept while the budget allows."""
        key = ("keys", seed, index, m.shape[0])
        rows = (m, v, a, k)
        if key in self.kept:
            refs, (keys,) = self.kept[key]
            if all((x is None and r is None) or (r is not None and r() is x) for r, x in zip(refs, rows)):
                return keys
        keys = row_keys(m, v, a, k, seed)
        if self._room(keys.nbytes):
            keys.flags.writeable = False
            self.kept[key] = (tuple(None if x is None else weakref.ref(x) for x in rows), (keys,))
        return keys

    def get(self, seed, index, keys, B):
        n = keys.shape[0]
        key = (seed, index, n, B)
        if key in self.kept:
            _, (drawn_for, table) = self.kept[key]
            if drawn_for is keys or np.array_equal(drawn_for, keys):
                return lambda sl: table[sl]
            del self.kept[key]
        if self._room(n * B + keys.nbytes):
            table = poisson_weights(keys, seed, B)
            self.kept[key] = (None, (keys, table))
            return lambda sl: table[sl]
        return lambda sl: poisson_weights(keys[sl], seed, B)


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
    """What :func:`bootstrap` found: the bias, the bias-corrected estimate, the interval and bound (None unless
    asked for), the refits' deltas (plug-in minus world truth, one per replicate), the shrunken worlds' truth
    and mean plug-in, one per threshold of :data:`THRESHOLDS` (the curve the shrunken-world correction reads), and,
    only with :data:`INNER_ONE_STEP` (a measurement hook, off by default), ``inner``: each refit's delta less its own
    one-step bias in closed form (:func:`_gaussian_bias`, each row's noise Gaussian with the refits' SD), and that
    closed-form one-step at the fitted map, so that the one-step-corrected estimate's own fluctuation can be
    compared with the plug-in's (``benchmarks/interval_rules.py --inner``)."""

    bias: float
    debiased: float
    ci: ConfidenceInterval | None
    upper: UpperBound | None
    deltas: np.ndarray
    shrunk_truth: np.ndarray | None = None
    shrunk_plugin: np.ndarray | None = None
    inner: tuple | None = None  # with INNER_ONE_STEP: (refits' one-step-corrected deltas, the analytic one-step)
    biases: tuple | None = None  # (one-step, shrunken-world): ``bias`` is their mean, the interval's bracket their span


REFIT_ROWS = 5_000  # the refits are evaluated on a keyed subset of about this many rows (all rows below it)
INNER_ONE_STEP = False  # record each refit's analytic one-step bias too (benchmarks/interval_rules.py --inner)
LABEL_DRAWS = "gaussian"  # 'exact': draw every label set (the former bootstrap, n B (l + 1)^2 work; for comparison)


def bootstrap(source, fit, est, *, n_boot, seed, level, upper=None, progress=False, weights=None, name="bootstrap",
              label_draws=None, refit_rows=None, world=None, second=None, duplicates=None):
    """Parametric-bootstrap bias correction, interval and upper bound for a plug-in CE estimate ``est`` from ``fit``.

    With D_b = (refit b's plug-in) - (its world's truth) in the world of the fitted functions, the one-step bias is
    mean D_b; the shrunken worlds (:class:`RefitPass`) give the bias est - T(tau-hat), where tau-hat matches the world's
    mean plug-in to ``est``.  The first sees too little bias (the fitted g-hat is noisier, so further from 0, than
    g), the second too much (it shrinks real structure too); ``bias`` is their mean.

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
    rule of :func:`socal.ce2` uses).  ``world``: the world pass's sums when a fused pass
    (:class:`DeviationWorldPass`) already computed them; the source is then read once less.  ``second``: in 1-D, the
    world's E[f*^2 | mean] (:func:`second_moment_fit`), so that items of one score differ in f* as the labels show;
    None keeps f* = p1.  ``duplicates``: the keys more than one row carries under ``seed`` and their counts
    (:meth:`KeyCensus.duplicated`), so that the refit pass resamples those rows as separate items
    (:class:`RefitPass`); None counts them in a pass of its own.  A replicate in which every item drew weight 0 (a
    chance of e^-n with n items) has no resample and is left out.

    Returns a :class:`BootstrapResult`.
    """
    calmap = fit.calmap
    basis = calmap.basis
    label_draws = LABEL_DRAWS if label_draws is None else label_draws
    refit_rows = REFIT_ROWS if refit_rows is None else refit_rows
    b = None
    if label_draws != "exact":  # one pass: the world's mean right-hand sides and their exact covariance, then draws
        if world is None:  # the row count from the fit's moments, to rounding
            world = source.map_reduce(WorldPass(calmap, second, world_fraction(round(float(fit.moments[0, 0]))),
                                                seed, weights), progress=progress,
                                      desc=f"{name}: the bootstrap world")
        W, S, n = world_right_hand_sides(fit, world)
        b = _gaussian_right_hand_sides(W, S, basis, n_boot, seed)  # None: the covariance does not factor
    if b is None:  # every label set drawn and its moments accumulated: n B (l + 1)^2 work
        if duplicates is None:  # rows of one content are drawn as the separate items they are
            duplicates = source.map_reduce(KeyCensusPass(seed, calmap.ndim), progress=progress,
                                           desc=f"{name}: rows of one content").duplicated()
        A = source.map_reduce(LabelSetsPass(calmap, n_boot, seed, second, duplicates), progress=progress,
                              desc=f"{name}: label sets drawn")
        W, (n,) = A.arrays
        b = np.stack([np.stack([response_vector(W[r, q], basis) for q in range(W.shape[1])], axis=1)
                      for r in range(n_boot)], axis=1)  # (d, B, R)
    R = b.shape[2]
    betas = fit.factor.solve(b.reshape(b.shape[0], -1)).reshape(b.shape)
    fraction = 1.0 if n <= refit_rows else refit_rows / n
    if duplicates is None:
        duplicates = source.map_reduce(KeyCensusPass(seed, calmap.ndim), progress=progress,
                                       desc=f"{name}: rows of one content").duplicated()
    num, den, st_sum, sp_sum, (n_sub, truth_sum), inner_num, (inner_data,) = source.map_reduce(
        RefitPass(calmap, betas, seed, weights, fraction, INNER_ONE_STEP, duplicates), progress=progress,
        desc=f"{name}: rows under the refits").arrays
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
    if INNER_ONE_STEP:  # the one-step-corrected plug-in of every refit, less its world's truth; the analytic one-step
        inner = (deltas - inner_num / den, inner_data / n_sub)
    return BootstrapResult(bias, debiased, ci, bound, deltas, st_sum / n_sub, sp_sum / n_sub, inner,
                           (one_step, shrunk_bias))


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
