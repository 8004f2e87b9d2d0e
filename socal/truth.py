"""Ground truth for populations with known structure.

Exact mode for finitely supported populations.  With raw scores (m_j, v_j) of probability pi_j and calibration
values e1_j = E[f* | j], e2_j = E[f*^2 | j], the perturbed score has density
p(t) = sum_j pi_j k_h(t1 | m_j) k_h(t2 | v_j), and the perturbed calibration functions are the ratios
eta_r(t) = sum_j pi_j e_rj k_h(t1 | m_j) k_h(t2 | v_j) / p(t) (Appendix, proof of Lemma "Analyticity", Eq. (Nt),
(Dt)).  The density cancels inside the calibration error:

.. math::

    CE_2^{pert} = \\iint_R \\Big|\\sum_j \\pi_j (e_{1j} - t_1) k_j(t)\\Big|
                 + \\Big|\\sum_j \\pi_j (e_{2j} - t_1^2 - t_2) k_j(t)\\Big| \\,dt,

a smooth integrand except along the curves where a sum changes sign.  It is integrated by tensor Gauss-Legendre
panels (the kernel matrices are separable, so the grid costs two matrix products), and the error is estimated by
repeating the computation on panels twice as wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import SechKernel
from .perturb import MEAN_DOMAIN, VAR_DOMAIN

__all__ = ["TruthValue", "discrete_ce2", "discrete_ce1", "discrete_calibration_functions"]


@dataclass(frozen=True)
class TruthValue:
    """A computed ground-truth value with an estimate of its numerical error."""

    value: float
    error: float

    def __float__(self):
        return float(self.value)


def _gl_panels(lo, hi, panels, order=8):
    x, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(lo, hi, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


def _kernels(h, means, vars_, t1, t2):
    K1 = SechKernel(h, *MEAN_DOMAIN).pdf(t1[None, :], means[:, None])  # (J, N1)
    K2 = None if t2 is None else SechKernel(h, *VAR_DOMAIN).pdf(t2[None, :], vars_[:, None])  # (J, N2)
    return K1, K2


def _ce2_once(h, means, vars_, pis, e1, e2, panels):
    t1, w1 = _gl_panels(*MEAN_DOMAIN, panels)
    t2, w2 = _gl_panels(*VAR_DOMAIN, max(panels // 2, 8))
    K1, K2 = _kernels(h, means, vars_, t1, t2)
    P1 = K1 * pis[:, None]
    # A[i, k] = sum_j pi_j (e1_j - t1_i) K1[j, i] K2[j, k]
    A = (P1 * (e1[:, None] - t1[None, :])).T @ K2
    B = (P1 * (e2[:, None] - t1[None, :] ** 2)).T @ K2 - (P1.T @ K2) * t2[None, :]
    first = float(w1 @ np.abs(A) @ w2)
    second = float(w1 @ np.abs(B) @ w2)
    return first, second


def _ce1_once(h, means, pis, e1, panels):
    t1, w1 = _gl_panels(*MEAN_DOMAIN, panels)
    K1, _ = _kernels(h, means, None, t1, None)
    A = (K1 * (pis * 1.0)[:, None] * (e1[:, None] - t1[None, :])).sum(axis=0)
    return float(w1 @ np.abs(A))


def discrete_ce2(h, means, vars_, weights, e1, e2, *, panels=512, parts=False):
    """CE2^pert of a finitely supported population (exact up to quadrature; see module docstring).

    Returns a :class:`TruthValue`; with ``parts=True`` a tuple (total, mean_term, moment_term) of TruthValues.
    """
    args = [np.asarray(x, dtype=float) for x in (means, vars_, weights, e1, e2)]
    fine = _ce2_once(h, *args, panels)
    coarse = _ce2_once(h, *args, panels // 2)
    tot = TruthValue(fine[0] + fine[1], abs(sum(fine) - sum(coarse)))
    if not parts:
        return tot
    return (tot, TruthValue(fine[0], abs(fine[0] - coarse[0])), TruthValue(fine[1], abs(fine[1] - coarse[1])))


def discrete_ce1(h, means, weights, e1, *, panels=2048):
    """CE1^pert = E|E[Y | m~] - m~| of a finitely supported population."""
    args = [np.asarray(x, dtype=float) for x in (means, weights, e1)]
    fine = _ce1_once(h, *args, panels)
    coarse = _ce1_once(h, *args, panels // 2)
    return TruthValue(fine, abs(fine - coarse))


def discrete_calibration_functions(h, means, vars_, weights, e1, e2, t1, t2):
    """The exact perturbed eta1, eta2 at points (t1, t2) (arrays of equal shape)."""
    means, vars_, pis, e1, e2 = (np.asarray(x, dtype=float) for x in (means, vars_, weights, e1, e2))
    t1, t2 = np.broadcast_arrays(np.asarray(t1, dtype=float), np.asarray(t2, dtype=float))
    k1 = SechKernel(h, *MEAN_DOMAIN).pdf(t1.ravel()[None, :], means[:, None])
    k2 = SechKernel(h, *VAR_DOMAIN).pdf(t2.ravel()[None, :], vars_[:, None])
    wk = k1 * k2 * pis[:, None]
    den = wk.sum(axis=0)
    return ((e1 @ wk) / den).reshape(t1.shape), ((e2 @ wk) / den).reshape(t1.shape)


def _recal_once(h, means, vars_, pis, e1, e2, moments, panels):
    t1, w1 = _gl_panels(*MEAN_DOMAIN, panels)
    t2, w2 = _gl_panels(*VAR_DOMAIN, max(panels // 2, 8))
    K1, K2 = _kernels(h, means, vars_, t1, t2)
    P1 = K1 * pis[:, None]
    dens = P1.T @ K2  # p(t) on the grid, shape (N1, N2)
    N1 = (P1 * e1[:, None]).T @ K2  # p(t) eta1(t)
    N2 = (P1 * e2[:, None]).T @ K2  # p(t) eta2(t)
    T1, T2 = np.meshgrid(t1, t2, indexing="ij")
    h1, h2 = moments(T1.ravel(), T2.ravel())
    h1, h2 = h1.reshape(T1.shape), h2.reshape(T1.shape)
    first = float(w1 @ np.abs(N1 - dens * h1) @ w2)
    second = float(w1 @ np.abs(N2 - dens * h2) @ w2)
    return first, second


def discrete_recalibrated_ce2(h, means, vars_, weights, e1, e2, moments, *, panels=256):
    """CE2 of a recalibrated predictor T-hat(S) = (m', var') on a finitely supported population.

    ``moments(t1, t2)`` returns T-hat's claimed moments (m', m'^2 + var') at perturbed scores (for Platt scaling:
    the projected eta1-hat and eta2-hat).  Then

    .. math::  CE_2(\\hat T) = \\iint |N_1(t) - p(t) m'(t)| + |N_2(t) - p(t) (m'^2 + var')(t)| \\, dt,

    with p N_r the exact kernel mixtures (see the module docstring).  This is exact when T-hat is one-to-one on the
    score rectangle (its level sets are then those of S) and an upper bound otherwise (conditioning on a coarser
    partition can only lower the error, by Jensen).
    """
    args = [np.asarray(x, dtype=float) for x in (means, vars_, weights, e1, e2)]
    fine = _recal_once(h, *args, moments, panels)
    coarse = _recal_once(h, *args, moments, panels // 2)
    return TruthValue(sum(fine), abs(sum(fine) - sum(coarse)))
