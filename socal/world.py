"""The parametric bootstrap's world: its sums over the rows, and the refits' right-hand sides drawn from them.

In the bootstrap world the scores are as observed, f* has the fitted, projected moments, and the labels are
a ~ Binomial(k, f*) (:mod:`socal.snapshots`; in 1-D, E f*^2 from :class:`SecondMomentPass`, so that items of one
score differ as their label pairs show).  The refits are linear in the labels, beta_b = G^-1 Phi' z_b, so their law
is fixed by the mean and covariance of Phi' z_b.  One pass (:class:`DeviationWorldPass`, fused with the deviation
pass of the same map, which evaluates the map once per row for both) accumulates both: sum_i phi_i p_i exactly, and
the moments sum_i C_i T_a(u_i) T_b(w_i) (up to twice the degree) of the targets' per-row covariance C_i
(:func:`socal.snapshots.target_covariances`), from which the covariance of Phi' z is assembled as a Gram matrix;
above ``world_rows`` rows those moments are summed over a keyed subset, without bias (:func:`world_sums`).  The B
right-hand sides are then drawn Gaussian with that mean and covariance (:func:`gaussian_right_hand_sides`, a sum of
n independent rows).  Where the covariance does not factor (scores packed into a sliver), or when the caller asks
for it, every label set is drawn instead (:class:`LabelSetsPass`: n B (l + 1)^2 work).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .chebyshev import (MomentOperator, ScoreAngles, TensorBasis, cholesky_lower, evaluate_series, response_vector,
                        ridge_factor, tensor_gram, to_unit)
from .deviations import DeviationStats
from .fitting import feasible
from .rowkeys import CensusPass, KeyCensus, keyed_uniforms, row_keys
from .snapshots import Snapshots, target_covariances, targets
from .sufficient import response_moments
from .weights import PoissonWeights, SharedKeys, salt, shared_item_keys, shared_rows, stream_seed

__all__ = ["Sums", "LabelSetsPass", "SecondMomentPass", "second_moment_fit", "second_moment_values", "WORLD_ROWS",
           "world_fraction", "world_subset", "world_sums", "world_right_hand_sides", "DeviationWorldPass",
           "gaussian_right_hand_sides"]

_REP_FLOATS = 2**25  # label sets are drawn in blocks of at most this many targets (256 MB), up to 64 sets


@dataclass(frozen=True)
class Sums:
    """A mergeable bag of named arrays that add: a pass returns ``Sums.of(name=array, ...)`` and its reader takes
    each by name (``sums["name"]``), so a reader never depends on the order a pass built them in."""

    arrays: tuple
    names: tuple = ()

    @classmethod
    def of(cls, **arrays):
        """The bag of ``arrays`` under their names, in the order given."""
        return cls(tuple(arrays.values()), tuple(arrays))

    def __getitem__(self, name):
        if name not in self.names:
            raise KeyError(f"no sum named {name!r} (the pass made {', '.join(self.names) or 'unnamed sums'})")
        return self.arrays[self.names.index(name)]

    def merge(self, other):
        """The bag of the element-wise sums (the two chunks' sums); the two must hold the same names."""
        if self.names != other.names:
            raise ValueError(f"cannot merge sums named {self.names} with sums named {other.names}")
        return Sums(tuple(a + b for a, b in zip(self.arrays, other.arrays)), self.names)


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

    counts_own_work = True  # the source hands the progress bar to each call: it counts the label sets drawn

    def work(self, rows):
        """The progress bar's units per chunk: the label sets drawn (B), whatever its rows."""
        return self.n_boot

    def __call__(self, index, m, v, a, k, bar=None):
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
        found = shared_rows(keys, self.duplicates)
        if found is not None:
            many, counts = found
            one, shared = np.flatnonzero(~many), np.flatnonzero(many)
            groups = SharedKeys(keys[many], counts, m[many], vv[many] if vv is not None else None, a[many], k[many])
            # the row standing for each key's items (their labels' law): its group of least exact hash, so the same
            # row in any order
            by_key = np.lexsort((groups.exact, groups.group_key))
            gk = groups.group_key[by_key]
            lead = by_key[np.r_[True, gk[1:] != gk[:-1]]]
            rep = shared[groups.first[lead]]
            items, starts = shared_item_keys(groups.keys, groups.c)
            group_key, share = groups.group_key, groups.share
            rows = np.concatenate([one, shared[groups.first]])
            draw_keys = np.concatenate([keys[one], items])
            item_rows = np.concatenate([one, np.repeat(rep, groups.c)])
            u, w = u[rows], (w[rows] if w is not None else None)
        if share is None:
            rows = item_rows = np.arange(m.size)
            draw_keys = keys
        law = Snapshots(p1[item_rows], p2[item_rows], kk[item_rows])
        k_items = k[item_rows]
        n_one = rows.size - (0 if share is None else share.size)
        W = np.zeros((B, R, basis.degree + 1, basis.deg_w + 1))
        block = int(max(1, min(64, _REP_FLOATS // max(1, rows.size * R))))
        Zt = np.empty((block * R, rows.size))  # the response table, one row per (label set, response)
        for start in range(0, B, block):
            reps = min(block, B - start)
            for jb in range(reps):
                b = start + jb  # replicate b's counts: keyed by content
                u2 = keyed_uniforms(draw_keys, salt("label sets beyond the table", b)) if law.needs_second else None
                a_b = law.draw(keyed_uniforms(draw_keys, salt("label sets", b)), u2)
                zs = [a_b / k_items] if R == 1 else list(targets(a_b, k_items))
                for r, z in enumerate(zs):
                    out = Zt[R * jb + r]
                    out[:n_one] = z[:n_one]
                    if share is not None:  # a shared key's items' summed targets, each group's share of them
                        out[n_one:] = np.add.reduceat(z[n_one:], starts)[group_key] * share
            Wb = response_moments(u, w, Zt[: R * reps].T, basis.degree, basis.deg_w)
            W[start: start + reps] = Wb.reshape(reps, R, basis.degree + 1, basis.deg_w + 1)
            if bar is not None:
                bar.update(reps)
        return Sums.of(moments=W, rows=np.array([m.size]))


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
        return Sums.of(gram=out[:, 0].copy(), rhs=out[: L + 1, 1].copy(), rows=np.array([float(two.size)]))


def second_moment_fit(sums, degree, alpha):
    """Chebyshev coefficients (degree + 1) of the first-order world's E[f*^2 | mean]: the ridge regression of z2 on
    the mean at the fit's ``degree`` and ``alpha`` (the same penalty as the fit of E[Y | mean]), from a
    :class:`SecondMomentPass`'s sums; None without rows of k >= 2 labels (then f* = p1 in the world)."""
    M, b, (rows,) = sums["gram"], sums["rhs"], sums["rows"]
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


def world_fraction(n, rows=WORLD_ROWS):
    """The share of rows whose target covariances the world pass sums (:func:`world_sums`): 1 up to ``rows`` rows,
    ``rows`` / n above (``socal.bootstrap.BootstrapOptions.world_rows``)."""
    return 1.0 if n <= rows else rows / float(n)


def world_subset(keys, fraction):
    """The rows the world's covariance moments are summed over: each row with probability ``fraction``, from its
    key's own uniform (stream 'world subset'), so the same rows in any order or chunking.  (Callers ask only when
    ``fraction`` < 1: the keys cost a hash of every row.)"""
    return np.flatnonzero(keyed_uniforms(keys, salt("world subset")) < fraction)


def world_sums(calmap, raw, p, m, v, k, p2=None, angles=None, subset=None, fraction=1.0):
    """One chunk's sums of the bootstrap world (:class:`DeviationWorldPass`): ``raw``, the map's polynomial at its
    rows, and ``p``, the same projected onto the feasible set (the world's truth), both (n, R); ``p2``, in 1-D, the
    world's E f*^2 per row (:func:`second_moment_values`; None: f* = p1); ``angles``, the rows' :class:`ScoreAngles`
    when the map's evaluation made them (the covariance moments' NUFFT reads them).

    The world's mean right-hand sides are W = sum_i phi_i p_i = G beta + sum_i phi_i (p_i - raw_i), since
    raw_i = phi_i' beta: the pass sums the correction over the rows the projection moved (1-6% of them on the toy
    population), and :func:`world_right_hand_sides` adds G beta from the statistics' moments.  The pass also sums
    raw_i, which G beta reproduces in its constant coordinate: the check that the statistics hold these rows.

    The covariance moments S = sum_i C_i T_a(u_i) T_b(w_i), up to twice the degree, are the pass's costliest sums
    (their share of the default call: docs/numbers.md, "The world's covariance moments on a keyed subset").  Given
    ``subset`` (:func:`world_subset`: rows kept independently with probability ``fraction``), they are summed over
    those rows and divided by ``fraction``: the Horvitz-Thompson estimate, unbiased for every entry.  The mean W stays
    exact over every row: the refits are centred on it, and the refit pass measures their deviations from the world's
    truth at each row, so an error in W would enter every replicate as a bias.  An error in S only scales the draws'
    spread, by a relative error of order 1 / sqrt(rows kept per coefficient) in any one direction (about 100 at the
    largest degree, 2,025 coefficients per response, with WORLD_ROWS rows), and less in the average over rows that
    the interval reads."""
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
    return Sums.of(rhs=W, covariance=S, rows=np.array([m.size]), raw_sum=raw[:, :R].sum(axis=0),
                   raw_abs=np.abs(raw[:, :R]).sum(axis=0))


def world_right_hand_sides(fit, world):
    """(W, S, n): the bootstrap world's mean right-hand sides W[r, a, b] = sum_i p_ir T_a(u_i) T_b(w_i), its
    covariance moments S and its row count, from a world pass's sums (:func:`world_sums`) and the fit's moments.

    G beta (the Gram of every row times the fitted coefficients, by FFT from the moments) is the sum of phi_i raw_i;
    the pass's correction makes it the sum of phi_i p_i.  Its constant coordinate must equal the pass's sum of raw_i
    (to rounding): otherwise the statistics the fit came from do not describe the rows the pass read (a
    :class:`socal.SufficientStats` built from other data than ``chunks``), and a ValueError says so."""
    calmap = fit.calmap
    basis = calmap.basis
    W_corr, S, (n,), raw_sum, raw_abs = (world[k] for k in ("rhs", "covariance", "rows", "raw_sum", "raw_abs"))
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


@dataclass
class _DeviationsAndWorld:
    dev: DeviationStats
    world: Sums
    census: KeyCensus | None = None

    def merge(self, other):
        census = None if self.census is None else self.census.merge(other.census)
        return _DeviationsAndWorld(self.dev.merge(other.dev), self.world.merge(other.world), census)


class DeviationWorldPass(CensusPass):
    """The deviation pass (:class:`socal.deviations.DeviationPass`) and the bootstrap world's sums
    (:func:`world_sums`) of one fitted map in one pass over the data: the map is evaluated once per row (its clipped
    prediction for the CE average, the same values projected for the world), the costliest step of either at large
    n.  Returns (DeviationStats, the world's sums for :func:`socal.bootstrap.bootstrap`'s ``world``) after
    ``map_reduce``; with ``census_seed``, also the rows' :class:`KeyCensus` under that seed (for
    :func:`socal.bootstrap.bootstrap`'s ``duplicates``).  ``fraction`` < 1 (:func:`world_fraction`) sums the world's
    covariance moments over the keyed subset of the rows (:func:`world_subset`, keyed under ``seed``)."""

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


def gaussian_right_hand_sides(W, S, basis, n_boot, seed):
    """(d, B, R) right-hand sides b_b = E b + L xi_b, L L' the exact covariance of Phi' z in the world (blocks
    assembled from the covariance moments S), xi_b standard normal from the stream 'gaussian right-hand sides' under
    ``seed``: the refits are linear in the labels, so their noise has the exact label-redraw covariance, with a
    Gaussian shape (the sum of n independent rows).  None when the computed covariance does not factor at any jitter:
    scores packed into a sliver of the square (a predictor whose outputs barely vary) leave most coordinates'
    variances below the moments' rounding (the NUFFT's relative 1e-13 of the whole sum), so the covariance assembled
    from them is not positive definite; :func:`socal.bootstrap.bootstrap` then draws every label set
    (:class:`LabelSetsPass`), which needs no factorisation.  A jitter large enough to factor it, a share of the
    largest variance on every coordinate, is not the remedy: it puts noise where the fit's Gram is nearly singular,
    which the Gram's inverse amplifies into the refits (docs/numbers.md, "Why each rule of the estimator is there").

    The covariance is factorised in the tensor layout of the Chebyshev coefficients and the draws are permuted to
    the basis' order after (the same law: P L xi has covariance P L L' P').  Everything is float64: the moments S
    differ between chunkings of the same rows in their last bits (float summation order), and a float32 copy of the
    covariance rounds a few entries the other way, which the factorisation amplifies into the interval;
    in float64 the same rows in any chunking give the same interval to rounding
    (``tests/test_bootstrap.py::test_same_numbers_at_a_degree_where_the_draws_rounding_would_show``; the float32
    figures in docs/numbers.md, "Same data, same numbers, and the bootstrap's cost")."""
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
    xi = np.random.default_rng(stream_seed(seed, "gaussian right-hand sides")).standard_normal((R * d, n_boot))
    # (1/2) L xi (L L' is 4 times the covariance) as a triangular product: half the flops of a full one; xi in
    # Fortran order, which BLAS takes as is
    root = linalg.blas.dtrmm(0.5, root, np.asfortranarray(xi), lower=1, overwrite_b=1)
    root[silent] = 0.0
    noise = root.reshape(R, d, n_boot)[:, basis.tensor_index, :]  # response-major, basis order
    return mean[:, None, :] + noise.transpose(1, 2, 0)  # (d, B, R)
