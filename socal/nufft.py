"""Optional finufft backend: Chebyshev moments and evaluations as non-uniform FFTs (the ``fast`` extra).

With u = cos(theta), T_p(u) = cos(p theta), so the mixed moments of :mod:`socal.sufficient` are real parts of a type-1
non-uniform FFT at the angles (theta_i, phi_i) = (arccos u_i, arccos w_i):

.. math::  M_{pq} = \\sum_i \\cos(p\\theta_i)\\cos(q\\phi_i)
           = \\tfrac12\\,\\mathrm{Re}\\,[F(p, q) + F(p, -q)], \\qquad F(k) = \\sum_i e^{i(k_1\\theta_i + k_2\\phi_i)},

and a fitted polynomial sum_{ab} C_ab T_a(u) T_b(w) is a type-2 transform of C extended evenly to negative modes.
The cost is nearly independent of the degree (spreading onto a grid of twice the modes, then one FFT), where the
matrix-product route grows with l^2 per row (the timings: docs/numbers.md, "The measurements behind the code's
constants").
Results agree with the matrix-product route to the requested precision (``EPS`` for moments, ``EVAL_EPS`` for
evaluations) relative to the sum of the moduli.
"""

from __future__ import annotations

import numpy as np

from ._threads import passive_openmp
from .unit import unit_angles

EPS = 1e-13  # finufft's requested relative precision for moments (its floor in double precision is about 1e-14)
EVAL_EPS = 1e-12  # for evaluations: faster than EPS and far below what clipping to [0, 1] sees (docs/numbers.md)
# the upsampled grids here are small (at most 708 x 708 at l = 88) and stay in cache: finufft's sorting of the points
# before spreading costs more than it saves (the timings: docs/numbers.md, "The measurements behind the code's
# constants")
_OPTS = {"spread_sort": 0}

try:  # pragma: no cover - depends on the environment
    with passive_openmp():  # finufft's OpenMP runtime reads its wait policy as it loads (socal._threads)
        import finufft as _finufft
except ImportError:  # pragma: no cover
    _finufft = None


def available():
    return _finufft is not None


_angles = unit_angles


def grouped_moments(u, w, order, bounds, deg_u, deg_w):
    """M[g, p, q] = sum_{i in g} T_p(u_i) T_q(w_i): one type-1 NUFFT per group, the rows taken in ``order`` (sorted
    by group; group g is order[bounds[g]:bounds[g + 1]], see :func:`socal.chebyshev.grouped_moments`)."""
    n_groups = len(bounds) - 1
    th, ph = _angles(u)[order], _angles(w)[order]
    M = np.zeros((n_groups, deg_u + 1, deg_w + 1))
    modes = (2 * deg_u + 1, 2 * deg_w + 1)
    for g in range(n_groups):
        sl = slice(bounds[g], bounds[g + 1])
        if sl.start == sl.stop:
            continue
        ones = np.ones(sl.stop - sl.start, dtype=np.complex128)
        if deg_w == 0:
            F = _finufft.nufft1d1(th[sl], ones, modes[0], eps=EPS, **_OPTS)
            M[g, :, 0] = F[deg_u:].real
            continue
        F = _finufft.nufft2d1(th[sl], ph[sl], ones, modes, eps=EPS, **_OPTS).real  # F[k1 + deg_u, k2 + deg_w]
        M[g] = 0.5 * (F[deg_u:, deg_w:] + F[deg_u:, deg_w::-1])
    return M


def weighted_moments(u, w, Z, deg_u, deg_w, angles=None):
    """W[j, p, q] = sum_i Z[i, j] T_p(u_i) T_q(w_i) for each column j of Z (see
    :func:`socal.sufficient.response_moments`); shape (J, deg_u + 1, deg_w + 1).

    Two real columns share one type-1 NUFFT: with the strengths Z_a + i Z_b the transform is G = F_a + i F_b, and
    since F_a(-k) and F_b(-k) are the conjugates of F_a(k) and F_b(k) (real strengths), Re F_a(k) = Re[G(k) + G(-k)]
    / 2 and Re F_b(k) = Im[G(k) + G(-k)] / 2.  The precision ``EPS`` is then relative to the pair's sum of moduli.
    The transform is linear in the strengths, so the moments of a union of chunks are still the sums of the chunks'
    moments.  The three columns of the bootstrap world's covariance cost two transforms instead of three
    (docs/numbers.md, "finufft's idle threads").  ``angles``: a :class:`socal.chebyshev.ScoreAngles` of the same
    rows, whose angles are read instead of computed again."""
    th = _angles(u) if angles is None else angles.u()
    J = Z.shape[1]
    P = (J + 1) // 2
    c = np.zeros((P, Z.shape[0]), dtype=np.complex128)
    c.real[:] = Z[:, 0::2].T
    c.imag[: J // 2] = Z[:, 1::2].T
    out = np.empty((J, deg_u + 1, deg_w + 1))
    if deg_w == 0:
        G = _finufft.nufft1d1(th, c, 2 * deg_u + 1, eps=EPS, **_OPTS).reshape(P, -1)
        H = (G + G[:, ::-1])[:, deg_u:, None]  # G(p) + G(-p), p >= 0
        half = 0.5
    else:
        ph = _angles(w) if angles is None else angles.w()
        G = _finufft.nufft2d1(th, ph, c, (2 * deg_u + 1, 2 * deg_w + 1), eps=EPS, **_OPTS)
        G = G.reshape(P, 2 * deg_u + 1, 2 * deg_w + 1)
        S = G + G[:, ::-1, ::-1]  # G(k) + G(-k)
        H = S[:, deg_u:, deg_w:] + S[:, deg_u:, deg_w::-1]  # at (p, q) and (p, -q): cos(p theta) cos(q phi) twice
        half = 0.25
    np.multiply(H.real, half, out=out[0::2])
    np.multiply(H.imag[: J // 2], half, out=out[1::2])
    return out


def evaluate(C, u, w, angles=None):
    """sum_{ab} C[r, a, b] T_a(u_i) T_b(w_i) for each r: a type-2 NUFFT of C extended evenly; shape (n, R).
    ``angles``: a :class:`socal.chebyshev.ScoreAngles` of the same rows, read instead of computed again."""
    R, la, lb = C.shape
    la, lb = la - 1, lb - 1
    wa = np.where(np.arange(-la, la + 1) == 0, 1.0, 0.5)
    wb = np.where(np.arange(-lb, lb + 1) == 0, 1.0, 0.5)
    ia, ib = np.abs(np.arange(-la, la + 1)), np.abs(np.arange(-lb, lb + 1))
    ext = (C[:, ia][:, :, ib] * np.outer(wa, wb)).astype(np.complex128)  # C^[k] = C[|k|] / 2^(#nonzero axes)
    th = _angles(u) if angles is None else angles.u()
    if lb == 0:
        out = _finufft.nufft1d2(th, np.ascontiguousarray(ext[:, :, 0]), eps=EVAL_EPS, **_OPTS)
    else:
        ph = _angles(w) if angles is None else angles.w()
        out = _finufft.nufft2d2(th, ph, np.ascontiguousarray(ext), eps=EVAL_EPS, **_OPTS)
    return np.atleast_2d(out.real).T
