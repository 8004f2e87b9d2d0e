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
  in the outer average), and the truth and mean plug-in of the shrunken worlds (the fitted miscalibration
  soft-thresholded at multiples of its pointwise bootstrap spread) that bracket the bias from the other side.

Random numbers are drawn per chunk from ``SeedSequence([seed, pass, chunk index])``: the same data in the same
chunks give the same interval; another chunking gives a statistically equivalent one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._results import ConfidenceInterval, UpperBound
from .chebyshev import response_vector, tensor_features, to_unit
from .sufficient import response_moments, targets

__all__ = ["bootstrap", "BootstrapResult"]

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


_TAUS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, np.inf)  # thresholds of the shrunken worlds
_N_SHRINK = 50  # refits whose deviations price each shrunken world (its mean plug-in only)


def _soft(g, t):
    """Soft-thresholding: sign(g) max(|g| - t, 0)."""
    return np.sign(g) * np.maximum(np.abs(g) - t, 0.0)


class _PassB:
    """Poisson-weighted deviation sums of the B refitted maps, and the plug-in of the shrunken worlds.

    Per row i and response r, e_bir = (refit b's prediction) - (the world's truth p_ir) is the fit's noise at the
    row and sigma_ir its spread over the refits.  The world with threshold tau has truth g_tau = soft(g, tau sigma),
    g = p - score: it keeps what stands out of the noise.  Its truth sums |g_tau| and its mean plug-in sums
    |g_tau + e_b| over the first _N_SHRINK refits, per tau in _TAUS (all sums, so chunks merge).
    """

    def __init__(self, cmap, betas, seed):
        self.cmap, self.betas, self.seed = cmap, betas, seed  # betas: (d, B, R)

    def __call__(self, index, m, v, a, k):
        cmap = self.cmap
        basis, ndim = cmap.basis, cmap.ndim
        d, B, R = self.betas.shape
        rng = np.random.default_rng([self.seed, 1, index])
        num, den = np.zeros(B), np.zeros(B)
        shrunk_truth, shrunk_plug = np.zeros(len(_TAUS)), np.zeros(len(_TAUS))
        nb = min(B, _N_SHRINK)
        coef = basis.to_tensor(self.betas.reshape(d, B * R)).reshape(B * R, -1)  # (B R, d) in the tensor layout
        u, w = to_unit(m, v if ndim == 2 else None)
        rows = max(64, _BLOCK_FLOATS // (B * R * (basis.degree + 1)))
        for start in range(0, m.size, rows):
            sl = slice(start, min(start + rows, m.size))
            mm = m[sl]
            vv = v[sl] if ndim == 2 else None
            phi = tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
            pred = np.clip((coef @ phi).T, 0.0, 1.0).reshape(-1, B, R)
            score = mm[:, None] if R == 1 else np.column_stack([mm, mm * mm + vv])
            s = np.abs(pred - score[:, None, :]).sum(axis=2)
            wts = rng.poisson(1.0, size=s.shape).astype(float)
            num += np.einsum("ib,ib->b", wts, s)
            den += wts.sum(axis=0)
            p = cmap.predict(mm, vv, project=True)[:, :R]
            e = pred - p[:, None, :]
            sigma = e.std(axis=1)
            g = p - score
            for j, tau in enumerate(_TAUS):
                gt = np.zeros_like(g) if np.isinf(tau) else _soft(g, tau * sigma)
                shrunk_truth[j] += np.abs(gt).sum()
                shrunk_plug[j] += np.abs(gt[:, None, :] + e[:, :nb, :]).sum() / nb
        return _Sums((num, den, shrunk_truth, shrunk_plug))


def _shrunk_estimate(est, truth, plug):
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
    asked for) and the refits' deltas (plug-in minus world truth, one per replicate)."""

    bias: float
    debiased: float
    ci: ConfidenceInterval | None
    upper: UpperBound | None
    deltas: np.ndarray


def bootstrap(source, fit, est, *, n_boot, seed, level, upper=None, show=False):
    """Parametric-bootstrap bias correction, interval and upper bound for a plug-in CE estimate ``est`` from ``fit``.

    With D_b = (refit b's plug-in) - (its world's truth) in the world of the fitted functions, the one-step bias is
    mean D_b; the shrunken worlds (:class:`_PassB`) give the bias est - T(tau-hat), where tau-hat matches the world's
    mean plug-in to ``est``.  The first sees too little bias (the fitted g-hat is noisier, so further from 0, than
    g), the second too much (it shrinks real structure too); ``bias`` is their mean.  With N = D - mean D the
    plug-in's fluctuation, the interval runs from est - (larger bias) - q_{(1+level)/2}(N) - margin to
    est - (smaller bias) - q_{(1-level)/2}(N) + margin, margin = sd(N) + |difference of the biases| / 2 (the
    smoothing bias neither world sees), clipped at 0; the upper bound is the same upper end at q_{1-upper}.  Both
    contain the bias-corrected estimate.  ``seed`` fixes every draw: two calls with one seed share their label draws
    (coupled bootstraps, as the degree rule of :func:`socal.ce2` uses).

    Returns a :class:`BootstrapResult`.
    """
    cmap = fit.cmap
    A = source.map_reduce(_PassA(cmap, n_boot, seed), show=show, desc="bootstrap (labels)")
    W, (n, world_sum) = A.arrays
    truth_world = world_sum / n
    basis = cmap.basis
    R = W.shape[1]
    b = np.stack([np.stack([response_vector(W[r, q], basis) for q in range(R)], axis=1) for r in range(n_boot)],
                 axis=1)  # (d, B, R)
    betas = fit.factor.solve(b.reshape(b.shape[0], -1)).reshape(b.shape)
    num, den, st_sum, sp_sum = source.map_reduce(_PassB(cmap, betas, seed), show=show,
                                                 desc="bootstrap (refits)").arrays
    deltas = num / np.maximum(den, 1.0) - truth_world
    one_step = float(deltas.mean())
    shrunk_bias = est - _shrunk_estimate(est, st_sum / n, sp_sum / n)
    bias = 0.5 * (one_step + shrunk_bias)
    debiased = max(est - bias, 0.0)
    noise = deltas - one_step  # the plug-in's fluctuation about its mean
    low_bias, high_bias = min(one_step, shrunk_bias), max(one_step, shrunk_bias)
    margin = float(noise.std()) + 0.5 * (high_bias - low_bias)
    ci = bound = None
    if level is not None:
        lo_q, hi_q = np.quantile(noise, [(1 - level) / 2, (1 + level) / 2])
        ci = ConfidenceInterval(float(min(max(est - high_bias - hi_q - margin, 0.0), debiased)),
                                float(max(est - low_bias - lo_q + margin, debiased)), level)
    if upper is not None:
        q = np.quantile(noise, 1 - upper)
        bound = UpperBound(float(max(est - low_bias - q + margin, debiased)), upper)
    return BootstrapResult(bias, debiased, ci, bound, deltas)
