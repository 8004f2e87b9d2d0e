"""Helpers the claims share: the 2-snapshot laws of given moments, exact optimal transport on {0, 1/2, 1} (one
linear program for many pairs), and feasible moment pairs to sample (Appendix D; used by ``sandwich`` and
``sandwich-tightness``), and the lower bound's two-point family (``lower-bound``, ``lower-bound-exact``)."""

from __future__ import annotations

import functools

import numpy as np
from scipy import integrate, stats
from scipy.optimize import linprog

from socal import SechKernel

__all__ = ["snapshot_dists", "w1_lp_batch", "w1_lp", "random_feasible", "GROUND", "ce_two_point", "binom_pmf",
           "two_point_minimax"]


def snapshot_dists(mu1, mu2, m, v):
    """(p_0, p_1/2, p_1) of the true 2-snapshot law and of the predictor's, from the moments (Lemma sandwich)."""
    p = np.array([1 - 2 * mu1 + mu2, 2 * (mu1 - mu2), mu2])
    q = np.array([1 - 2 * m + v, 2 * (m - v), v])
    return p, q


GROUND = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)  # l1 distance of Delta Y on {0, 1/2, 1}


def w1_lp_batch(P, Q):
    """Exact optimal transport on {0, 1/2, 1} (ground metric d(0,1/2) = 1, d(0,1) = 2) for every pair (P[k], Q[k]).

    One linear program holds the K transport problems side by side: block-diagonal marginal constraints and a
    separable objective, so its optimum is every block's optimum.  One HiGHS call for thousands of pairs instead of
    one call each (sandwich-tightness: 3.5 s -> a fraction of a second).
    """
    from scipy import sparse

    P, Q = np.atleast_2d(np.asarray(P, dtype=float)), np.atleast_2d(np.asarray(Q, dtype=float))
    K = P.shape[0]
    # the marginals' equations have rank 5 (sum p = sum q): the last column marginal is implied, and stating it
    # makes the LP infeasible when float rounding leaves sum p and sum q 1e-16 apart (found by hypothesis:
    # q = (0.9999999, 0, 1e-7))
    block = np.zeros((5, 9))
    for i in range(3):
        block[i, 3 * i: 3 * i + 3] = 1  # row marginal p_i
    for i in range(2):
        block[3 + i, i::3] = 1  # column marginals q_0, q_1 (q_2 follows)
    A_eq = sparse.kron(sparse.identity(K, format="csr"), sparse.csr_matrix(block), format="csr")
    cost = GROUND.ravel()
    res = linprog(np.tile(cost, K), A_eq=A_eq, b_eq=np.column_stack([P, Q[:, :2]]).ravel(), bounds=(0, None),
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"optimal transport LP failed: {res.message}")
    return res.x.reshape(K, 9) @ cost


def w1_lp(p, q):
    """Exact optimal transport on {0, 1/2, 1} with the l1 ground metric of Delta Y (d(0,1/2) = 1, d(0,1) = 2)."""
    return float(w1_lp_batch([p], [q])[0])


def random_feasible(rng, n):
    """Moment pairs (mu1, mu2) and (m, v) in the feasible region x^2 <= y <= x."""
    out = []
    for _ in range(n):
        a = rng.random(2)
        b = rng.random(2)
        mu1, m = a
        mu2 = mu1**2 + b[0] * (mu1 - mu1**2)
        v = m**2 + b[1] * (m - m**2)
        out.append((mu1, mu2, m, v))
    return out


def _fixed_centre_pdf(kernel, s):
    """t -> kernel.pdf(t, s) for one fixed centre ``s``, for the quadratures' scalar calls: the same floating-point
    operations as :meth:`socal.SechKernel.pdf` (sech((t - s)/h) / (h mass(s)), 0 outside [lo, hi]), so the same
    values bit for bit, without the per-call validation and broadcasting (95% of the quadrature's time was there)."""
    s = np.float64(s)
    z = np.float64(kernel.normalizer(s))  # h mass(s), as pdf computes it
    h, lo, hi = kernel.h, kernel.lo, kernel.hi

    def pdf(t):
        if not lo <= t <= hi:
            return 0.0
        e = np.exp(-np.abs((np.float64(t) - s) / h))
        return float(2.0 * e / (1.0 + e * e) / z)

    return pdf


@functools.lru_cache(maxsize=512)
def ce_two_point(p, h):
    """CE2^pert of the constant predictor at (1, 0) with f* = p: E|p - m~| + E|p^2 - m~^2 - var~| (quadrature)."""
    k1, k2 = SechKernel(h, 0, 1), SechKernel(h, 0, 0.25)
    f1, f2 = _fixed_centre_pdf(k1, 1.0), _fixed_centre_pdf(k2, 0.0)
    phi = integrate.quad(lambda t: abs(p - t) * f1(t), 0, 1, points=[p], limit=200)[0]
    psi = integrate.dblquad(lambda v, t: abs(p * p - t * t - v) * f1(t) * f2(v), 0, 1, 0, 0.25, epsabs=1e-10)[0]
    return phi + psi


def binom_pmf(N, p):
    k = np.arange(N + 1)
    return stats.binom.pmf(k, N, p)


def two_point_minimax(n, eps, h):
    """Exact minimax risk over estimators of CE2^pert from n 2-snapshots on the two-point family {1/16, 1/16+eps}.

    The perturbed scores carry no information and the labels' sum T ~ Binomial(2n, p_b) is sufficient; for a
    two-point parameter set the minimax risk under absolute loss is max over priors pi of the Bayes risk
    Delta * sum_t min(pi P0(t), (1 - pi) P1(t)) (the Bayes rule picks the heavier posterior atom).
    """
    d = abs(ce_two_point(1 / 16, h) - ce_two_point(1 / 16 + eps, h))
    P0, P1 = binom_pmf(2 * n, 1 / 16), binom_pmf(2 * n, 1 / 16 + eps)
    pis = np.linspace(0, 1, 2001)
    risk = [d * np.minimum(pi * P0, (1 - pi) * P1).sum() for pi in pis]
    return float(max(risk)), d
