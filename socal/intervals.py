"""Bias correction and intervals for the CE estimators, as mergeable passes over the data.

The parametric bootstrap of :func:`socal.ce2` (``ci=``, ``debias=``), written as two passes that any source runs
(in-memory arrays, a stream of chunks, dask partitions; see :mod:`socal._engine`):

* pass A: in the bootstrap world (scores as observed, f* with the fitted, projected moments, labels ~
  Binomial(k, f*); see :func:`_snapshot_counts`) draw B label sets and accumulate their response moments at the
  selected degree as matrix products with the tensor features, plus the world's own CE (the deviations of the
  projected map);
* the B refits come from the stored Cholesky factor of the final fit (the Gram depends on the scores only);
* pass B: the deviations of each refitted map (all B maps evaluated in one matrix product per block of rows), with
  Poisson(1) weights per row (the mergeable form of resampling items with replacement, for the sampling of scores
  in the outer average).

Random numbers are drawn per chunk from ``SeedSequence([seed, pass, chunk index])``: the same data in the same
chunks give the same interval; another chunking gives a statistically equivalent one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._results import ConfidenceInterval
from .chebyshev import TensorBasis, response_vector, tensor_features, to_unit
from .sufficient import response_moments, targets

__all__ = ["bootstrap"]

_BLOCK_FLOATS = 2**22  # pass B holds B x R x (l + 1) floats per row: rows per block keep that near 32 MB
_REP_FLOATS = 2**25  # pass A draws label sets in blocks of at most this many targets (256 MB), up to 64 sets


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


def _snapshot_counts(p1, p2, k, rng):
    """Positive counts a ~ Binomial(k, f*), f* with E f* = p1 and E f*^2 = p2 (the bootstrap world's labels).

    For k = 2 the law of a depends on f* only through p1 and p2: (1 - 2 p1 + p2, 2 (p1 - p2), p2), whatever the
    spread of f*, so one uniform per row draws it (a third of the time of a Beta and a Binomial draw).  Other k draw
    f* ~ Beta with those moments (:func:`_beta_sample`), then the Binomial.
    """
    a = np.empty(k.shape[0])
    two = k == 2
    if two.any():
        q0 = np.clip(1.0 - 2.0 * p1[two] + p2[two], 0.0, 1.0)
        q2 = np.clip(p2[two], 0.0, 1.0)
        r = rng.random(q0.size)
        a[two] = (r >= q0).astype(float) + (r >= 1.0 - q2)
    other = ~two
    if other.any():
        a[other] = rng.binomial(k[other], _beta_sample(p1[other], p2[other], rng))
    return a


def _terms(pred, m, v):
    t1 = np.abs(pred[:, 0] - m)
    if v is None:
        return t1, np.zeros_like(t1)
    return t1, np.abs(pred[:, 1] - (m * m + v))


@dataclass
class _Sums:
    """A mergeable bag of arrays that add."""

    arrays: tuple

    def merge(self, other):
        return _Sums(tuple(a + b for a, b in zip(self.arrays, other.arrays)))


class _PassA:
    """Response moments of B bootstrap label sets, and the bootstrap world's CE sums."""

    def __init__(self, cmap, n_boot, seed):
        self.cmap, self.n_boot, self.seed = cmap, n_boot, seed

    def __call__(self, index, m, v, a, k):
        cmap, B = self.cmap, self.n_boot
        basis = cmap.basis
        R = 2 if cmap.ndim == 2 else 1
        rng = np.random.default_rng([self.seed, 0, index])
        vv = v if cmap.ndim == 2 else None
        p = cmap.predict(m, vv, project=True)
        t1, t2 = _terms(p, m, vv)
        p1 = p[:, 0]
        p2 = p[:, 1] if R == 2 else p1 * p1  # first order: f* = p1 exactly
        u, w = to_unit(m, vv)
        W = np.zeros((B, R, basis.degree + 1, basis.deg_w + 1))
        kk = k.astype(np.int64)
        block = int(max(1, min(64, _REP_FLOATS // max(1, m.size * R))))  # draws do not depend on the block size
        for start in range(0, B, block):
            reps = range(start, min(start + block, B))
            Z = []
            for _ in reps:
                a_b = _snapshot_counts(p1, p2, kk, rng)
                z1, z2 = targets(a_b, k)
                Z.extend([z1, z2][:R])
            Wb = response_moments(u, w, np.column_stack(Z), basis.degree, basis.deg_w)
            W[start: start + len(reps)] = Wb.reshape(len(reps), R, basis.degree + 1, basis.deg_w + 1)
        return _Sums((W, np.array([m.size, t1.sum() + t2.sum()])))


class _PassB:
    """Poisson-weighted deviation sums of the B refitted maps."""

    def __init__(self, degree, ndim, betas, seed):
        self.degree, self.ndim, self.betas, self.seed = degree, ndim, betas, seed  # betas: (d, B, R)

    def __call__(self, index, m, v, a, k):
        basis = TensorBasis(self.degree, self.ndim)
        d, B, R = self.betas.shape
        rng = np.random.default_rng([self.seed, 1, index])
        num, den = np.zeros(B), np.zeros(B)
        coef = basis.to_tensor(self.betas.reshape(d, B * R)).reshape(B * R, -1)  # (B R, d) in the tensor layout
        u, w = to_unit(m, v if self.ndim == 2 else None)
        rows = max(64, _BLOCK_FLOATS // (B * R * (self.degree + 1)))
        for start in range(0, m.size, rows):
            sl = slice(start, min(start + rows, m.size))
            mm = m[sl]
            vv = v[sl] if self.ndim == 2 else None
            phi = tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
            pred = np.clip((coef @ phi).T, 0.0, 1.0).reshape(-1, B, R)
            s = np.abs(pred[:, :, 0] - mm[:, None])
            if R == 2:
                s += np.abs(pred[:, :, 1] - (mm * mm + vv)[:, None])
            wts = rng.poisson(1.0, size=s.shape).astype(float)
            num += np.einsum("ib,ib->b", wts, s)
            den += wts.sum(axis=0)
        return _Sums((num, den))


def bootstrap(source, fit, est, *, n_boot, rng, level, show=False):
    """Parametric-bootstrap bias and basic interval for a CE estimate ``est`` from ``fit``.

    Returns (bias, debiased, ConfidenceInterval or None, deltas).
    """
    cmap = fit.cmap
    seed = int(rng.integers(0, 2**63 - 1, dtype=np.int64))
    A = source.map_reduce(_PassA(cmap, n_boot, seed), show=show, desc="bootstrap (labels)")
    W, (n, world_sum) = A.arrays
    truth_world = world_sum / n
    basis = cmap.basis
    R = W.shape[1]
    b = np.stack([np.stack([response_vector(W[r, q], basis) for q in range(R)], axis=1) for r in range(n_boot)],
                 axis=1)  # (d, B, R)
    betas = fit.factor.solve(b.reshape(b.shape[0], -1)).reshape(b.shape)
    num, den = source.map_reduce(_PassB(cmap.degree, cmap.ndim, betas, seed), show=show,
                                 desc="bootstrap (refits)").arrays
    deltas = num / np.maximum(den, 1.0) - truth_world
    bias = float(deltas.mean())
    debiased = max(est - bias, 0.0)
    ci = None
    if level is not None:
        lo_q, hi_q = np.quantile(deltas, [(1 - level) / 2, (1 + level) / 2])
        ci = ConfidenceInterval(float(max(est - hi_q, 0.0)), float(max(est - lo_q, 0.0)), level)
    return bias, debiased, ci, deltas
