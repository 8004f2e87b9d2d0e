"""Tensor-Chebyshev ridge regression on the fixed score rectangle, fitted from sufficient statistics.

The score rectangle R = [0, 1] x [0, 1/4] is mapped affinely to [-1, 1]^2 by u = 2m - 1, w = 8 var - 1 (the domain is
fixed by the theory, unlike numpy.polynomial's data-fitted ``domain``, so a fitted map works on new points).  The
basis has the d = (l + 1)^2 features

.. math::  \\phi_{(a, b)}(m, v) = T_a(u)\\,T_b(w), \\qquad 0 \\le a, b \\le l,

ordered by shells of max(a, b): within shell k come (0, k), (1, k), ..., (k, k), (k, k-1), ..., (k, 0).  Every lower
degree is then a leading block of the Gram matrix.  ``pairs[j] = (a, b)`` gives the convention.  The
one-dimensional basis (first-order calibration) is the same with b = 0 throughout.

Sufficient statistics.  Since T_a T_c = (T_{a+c} + T_{|a-c|}) / 2, every Gram entry

.. math::  G_{(a,b),(c,e)} = \\sum_i T_a(u_i)T_c(u_i)T_b(w_i)T_e(w_i)
           = \\tfrac14\\,[M_{a+c,b+e} + M_{a+c,|b-e|} + M_{|a-c|,b+e} + M_{|a-c|,|b-e|}]

is a sum of four mixed moments M_{pq} = sum_i T_p(u_i) T_q(w_i), p, q <= 2l, computed in one chunked pass (one matrix
product per chunk).  Rows are grouped (by cross-validation fold and by the value of the regression targets), so the
right-hand sides b = sum_i z_i phi(s_i) of both responses and every fold's statistics come out of the same moments,
and memory is O(l^4) whatever n is.

Solve.  Ridge least squares (G + lambda P) beta = b with lambda = alpha tr(G) / d and P the identity except for
the constant feature, which is not penalised (as in scikit-learn's Ridge: fitting 1 - z then gives exactly 1 minus
the fit of z, so estimates are equivariant under the label flip m -> 1 - m, y -> 1 - y), by LAPACK Cholesky (dpotrf,
dpotrs) on the Jacobi-scaled system (D^{-1} G D^{-1} + lambda D^{-2}) (D beta) = D^{-1} b, D = diag(G)^{1/2}, which
has the same solution and a far smaller condition number.  When the factorisation fails, the ridge is raised to a
floor (1e-12 tr(G)/d, then tenfold) with a warning that states the reciprocal condition number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from numpy.lib.stride_tricks import as_strided
from scipy.linalg import lapack

from .unit import ScoreAngles, to_unit, unit_angles  # noqa: F401  (re-exported: the coordinates of the fits)

__all__ = [
    "TensorBasis",
    "to_unit",
    "unit_angles",
    "ScoreAngles",
    "cheb_rows",
    "grouped_moments",
    "assemble_gram",
    "tensor_gram",
    "tensor_features",
    "MomentOperator",
    "ridge_solve",
    "ridge_factor",
    "cholesky_lower",
    "RidgeFactor",
    "response_vector",
    "evaluate_series",
    "RIDGE_FLOOR",
    "ConditioningWarning",
    "set_backend",
    "get_backend",
    "BACKENDS",
]

RIDGE_FLOOR = 1e-12  # relative to tr(G)/d; the paper's numerical floor (Appendix "Experiment 2")
_CHUNK = 16384  # rows per chunk: the fastest on 2 cores (docs/numbers.md, "The measurements behind the code's ...")
_RCOND_WARN = 1e-10  # alpha >= 1e-6 keeps rcond above ~1e-6/d, so only near-singular fits warn
NUMPY_CHOLESKY_BELOW = 1500  # systems this small are factorised by numpy's LAPACK (:func:`cholesky_lower`)


class ConditioningWarning(UserWarning):
    """The ridge system was poorly conditioned; the ridge was raised or the solution may be inaccurate."""


def cheb_rows(x, deg, out=None):
    """Chebyshev table T[p, i] = T_p(x_i), p = 0..deg, by the three-term recurrence; shape (deg + 1, len(x))."""
    x = np.asarray(x, dtype=float)
    T = np.empty((deg + 1, x.shape[0])) if out is None else out[: deg + 1, : x.shape[0]]
    T[0] = 1.0
    if deg >= 1:
        T[1] = x
    x2 = 2.0 * x
    for p in range(2, deg + 1):
        np.multiply(x2, T[p - 1], out=T[p])
        T[p] -= T[p - 2]  # T_p = 2 x T_{p-1} - T_{p-2}
    return T


@dataclass(frozen=True)
class TensorBasis:
    """Feature layout of the tensor-Chebyshev basis of degree ``degree`` per axis (``ndim`` = 1 or 2)."""

    degree: int
    ndim: int = 2

    @property
    def deg_w(self):
        return self.degree if self.ndim == 2 else 0

    @property
    def size(self):
        return (self.degree + 1) ** self.ndim

    def size_at(self, degree):
        """Number of leading features that make up the basis of a smaller degree."""
        return (degree + 1) ** self.ndim

    @property
    def pairs(self):
        """(d, 2) array of (a, b) index pairs in max-ordering (b = 0 throughout in 1-D)."""
        if self.ndim == 1:
            return np.column_stack([np.arange(self.degree + 1), np.zeros(self.degree + 1, dtype=int)])
        out = [(0, 0)]
        for k in range(1, self.degree + 1):
            out += [(a, k) for a in range(k + 1)] + [(k, b) for b in range(k - 1, -1, -1)]
        return np.array(out, dtype=int)

    @property
    def tensor_index(self):
        """Position of each max-ordered feature in the row-major tensor layout a * (deg_w + 1) + b."""
        p = self.pairs
        return p[:, 0] * (self.deg_w + 1) + p[:, 1]

    def to_tensor(self, beta, degree=None):
        """Coefficients (d_l, R) in max-ordering -> array (R, a, b) in tensor layout (zero-padded to ``degree``)."""
        beta = np.asarray(beta, dtype=float)
        squeeze = beta.ndim == 1
        beta = beta.reshape(beta.shape[0], -1)
        lw = self.deg_w
        out = np.zeros((beta.shape[1], self.degree + 1, lw + 1))
        pairs = self.pairs[: beta.shape[0]]
        out[:, pairs[:, 0], pairs[:, 1]] = beta.T
        return out[0] if squeeze else out


BACKENDS = ("auto", "numpy", "finufft")
_backend = "auto"


def set_backend(name: str) -> str:
    """Choose how Chebyshev moments and evaluations are computed; returns the previous choice.

    'numpy' (matrix products, always available), 'finufft' (non-uniform FFTs, :mod:`socal.nufft`; needs the
    ``fast`` extra: ``pip install 'socal[fast]'``) or 'auto' (the default: finufft where it is installed and the
    work is large enough to gain, numpy otherwise).  Both give the same numbers to about 1e-13 relative.

    >>> import socal
    >>> previous = socal.set_backend("numpy")
    >>> socal.set_backend(previous)
    'numpy'
    """
    global _backend
    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"The 'name' parameter of set_backend must be one of {BACKENDS}. Got {name!r} instead.")
    if name == "finufft":
        from . import nufft

        if not nufft.available():
            raise ValueError("The 'name' parameter of set_backend is 'finufft', but finufft is not installed; "
                             "install it with pip install 'socal[fast]' (or pip install finufft).")
    previous, _backend = _backend, name
    return previous


def get_backend() -> str:
    """The backend chosen with :func:`set_backend` ('auto' unless changed)."""
    return _backend


# finufft's cost per row is nearly independent of the degree, the matrix products' grows with the number of terms:
# 'auto' switches to finufft from the terms and rows at which it was the faster on 2 cores (the timings, and the
# `benchmarks/backend.py` commands that give them: docs/numbers.md, "The measurements behind the code's constants")
_NUFFT_MOMENT_TERMS, _NUFFT_MOMENT_ROWS = 4000, 150_000  # the statistics' moments
_NUFFT_EVAL_TERMS, _NUFFT_EVAL_ROWS = 1600, 50_000  # the evaluation of a fitted map
_NUFFT_WEIGHTED_TERMS, _NUFFT_WEIGHTED_ROWS = 289, 20_000  # one to three strength columns (the bootstrap world's)
_NUFFT_WEIGHTED_TERMS_1D = 45  # the same in 1-D (CE1's world, moments to 2l)


def use_nufft(n, terms, moments, *, weighted=False, one_dim=False):
    """Whether the finufft backend computes moments (``moments``; ``weighted``: a few strength columns, as the
    bootstrap world's, in 1-D with ``one_dim``) or evaluations of this size: always with backend 'finufft', never
    with 'numpy', and with 'auto' above the sizes measured to pay (``python benchmarks/bench_estimator.py``,
    ``python benchmarks/backend.py``)."""
    if _backend == "numpy" or n == 0:
        return False
    from . import nufft

    if _backend == "finufft":
        return True
    if weighted:
        least = _NUFFT_WEIGHTED_TERMS_1D if one_dim else _NUFFT_WEIGHTED_TERMS
        return nufft.available() and terms >= least and n >= _NUFFT_WEIGHTED_ROWS
    if moments:
        return nufft.available() and terms >= _NUFFT_MOMENT_TERMS and n >= _NUFFT_MOMENT_ROWS
    return nufft.available() and terms >= _NUFFT_EVAL_TERMS and n >= _NUFFT_EVAL_ROWS


def tensor_features(u, w, deg_u, deg_w):
    """Phi[(a, b), i] = T_a(u_i) T_b(w_i) in the tensor layout a (deg_w + 1) + b; shape (d, len(u))."""
    Tu, Tw = cheb_rows(u, deg_u), cheb_rows(w, deg_w)
    return (Tu[:, None, :] * Tw[None, :, :]).reshape(-1, Tu.shape[1])


def _group_order(groups, n_groups):
    """(order, bounds): the rows sorted by group, and where each group starts and ends in that order."""
    small = np.int16 if n_groups < np.iinfo(np.int16).max else np.int64
    order = np.argsort(groups.astype(small, copy=False), kind="stable")  # int16: numpy's O(n) radix sort
    return order, np.searchsorted(groups[order], np.arange(n_groups + 1))


def grouped_moments(u, w, groups, n_groups, deg_u, deg_w, *, chunk=_CHUNK):
    """Mixed moments per group: M[g, p, q] = sum_{i in g} T_p(u_i) T_q(w_i), p <= deg_u, q <= deg_w.

    One pass over the data; rows are sorted by group once, then each group is processed in chunks with one matrix
    product per chunk (or one non-uniform FFT per group with the finufft backend, :func:`set_backend`).  Memory is
    O(n_groups deg_u deg_w + chunk (deg_u + deg_w)).
    """
    order, bounds = _group_order(groups, n_groups)
    if use_nufft(u.shape[0], (deg_u + 1) * (deg_w + 1), moments=True):
        from . import nufft

        return nufft.grouped_moments(u, w, order, bounds, deg_u, deg_w)
    M = np.zeros((n_groups, deg_u + 1, deg_w + 1))
    bu = np.empty((deg_u + 1, chunk))
    bw = np.empty((deg_w + 1, chunk))
    for g in range(n_groups):
        for start in range(bounds[g], bounds[g + 1], chunk):
            idx = order[start: min(start + chunk, bounds[g + 1])]
            Tu = cheb_rows(u[idx], deg_u, bu)
            Tw = cheb_rows(w[idx], deg_w, bw)
            M[g] += Tu @ Tw.T
    return M


def tensor_gram(M, degree, deg_w, *, out=None, factor=0.25):
    """Gram matrix in the row-major tensor layout (a, b) -> a (deg_w + 1) + b, from the moments M[p, q].

    G[(a,b),(c,e)] = (N[a+c, b, e] + N[|a-c|, b, e]) / 4 with N[P, b, e] = M[P, b+e] + M[P, |b-e|]: a block Hankel plus
    a block Toeplitz matrix, written as two strided views of the small table N and added in one pass (no index arrays,
    no temporaries of the Gram's size; the timing against index arrays: docs/numbers.md, "The measurements behind the
    code's constants").  ``out``, a
    (d, d) array of any float dtype whose rows and columns each have a fixed stride (a C-ordered buffer, or a
    transposed block of a Fortran-ordered matrix), is filled in place.  ``factor`` multiplies the sum H + T: 1/4
    gives the Gram; 1 gives 4 times it and spares a pass over the (d, d) output (the bootstrap's draws take the
    factor 1/2 on their square root instead).
    """
    l, lw = int(degree), int(deg_w)
    rb = np.arange(lw + 1)
    Ml = M[: 2 * l + 1]
    N = np.ascontiguousarray(Ml[:, np.add.outer(rb, rb)] + Ml[:, np.abs(np.subtract.outer(rb, rb))])
    Q = np.ascontiguousarray(N[np.abs(np.arange(2 * l + 1) - l)])  # Q[l + k] = N[|k|]
    s0, s1, s2 = N.strides
    shape = (l + 1, lw + 1, l + 1, lw + 1)
    H = as_strided(N, shape=shape, strides=(s0, s1, s0, s2), writeable=False)  # N[a + c, b, e]
    T = as_strided(Q[l:], shape=shape, strides=(s0, s1, -s0, s2), writeable=False)  # N[|a - c|, b, e]
    d = (l + 1) * (lw + 1)
    if out is None:
        out = np.empty((d, d))
    r0, r1 = out.strides  # the 4-D view of ``out`` (a reshape could silently copy a strided block)
    view = as_strided(out, shape=shape, strides=(r0 * (lw + 1), r0, r1 * (lw + 1), r1))
    np.add(H, T, out=view, casting="unsafe")
    if factor != 1:
        view *= factor
    return out


def assemble_gram(M, basis):
    """Gram matrix of ``basis`` (max-ordering) from the moments M[p, q], p <= 2 l, q <= 2 l_w."""
    ti = basis.tensor_index
    return tensor_gram(M, basis.degree, basis.deg_w)[np.ix_(ti, ti)]


class MomentOperator:
    """x -> G x for the Gram of a moment table, by FFT, without forming G (tensor layout, several columns at once).

    With the coefficient table extended evenly to negative indices (the axes' zero entries counted twice),
    (G x)[a, b] = (1/4) sum_{c, e = -l..l} x^[c, e] M[|a + c|, |b + e|]: a 2-D convolution with the evenly extended
    moments, exact on a circular grid of 3 l + 1 points per axis.  Cost O(l^2 log l) per column against d^2 = l^4
    for a dense product; used where the Gram is large and only products with it are needed.
    """

    def __init__(self, M, degree, deg_w):
        from scipy import fft  # on first use: scipy.fft is slow to import

        l, lw = int(degree), int(deg_w)
        self.l, self.lw = l, lw
        self.shape = (fft.next_fast_len(3 * l + 1, real=False), fft.next_fast_len(3 * lw + 1, real=True))
        Nu, Nw = self.shape
        pu, pw = np.arange(-l, 2 * l + 1), np.arange(-lw, 2 * lw + 1)
        ext = np.zeros(self.shape)
        ext[np.ix_(pu % Nu, pw % Nw)] = M[np.ix_(np.abs(pu), np.abs(pw))]
        self._FM = fft.rfft2(ext)
        cu, cw = np.arange(-l, l + 1), np.arange(-lw, lw + 1)
        self._pos = (cu % Nu, cw % Nw)
        self._src = (np.abs(cu), np.abs(cw))
        self._wt = np.outer(np.where(cu == 0, 2.0, 1.0), np.where(cw == 0, 2.0, 1.0))

    def __call__(self, x):
        """G x for x of shape (d,) or (d, C), tensor layout."""
        from scipy import fft

        l, lw = self.l, self.lw
        x = np.asarray(x, dtype=float)
        squeeze = x.ndim == 1
        X = x.reshape(l + 1, lw + 1, -1).transpose(2, 0, 1)  # (C, l+1, lw+1)
        ext = np.zeros((X.shape[0],) + self.shape)
        ext[:, self._pos[0][:, None], self._pos[1][None, :]] = X[:, self._src[0][:, None], self._src[1][None, :]] \
            * self._wt
        Y = fft.irfft2(fft.rfft2(ext) * self._FM, s=self.shape)[:, : l + 1, : lw + 1]
        out = 0.25 * Y.transpose(1, 2, 0).reshape(-1, X.shape[0])
        return out[:, 0] if squeeze else out


def response_vector(M_weighted, basis):
    """b_(a,b) = M_z[a, b]: right-hand side from a response-weighted moment table (leading (l+1) x (lw+1) block)."""
    p = basis.pairs
    return M_weighted[p[:, 0], p[:, 1]]


@dataclass
class RidgeFactor:
    """Cholesky factor of the scaled ridge system, reusable for many right-hand sides."""

    chol: np.ndarray
    scale: np.ndarray
    lam: float
    rcond: float

    def solve(self, b):
        """The ridge solution for right-hand sides ``b`` from the stored factorisation."""
        b = np.asarray(b, dtype=float)
        rhs = (b.T / self.scale).T
        x, info = lapack.dpotrs(self.chol, rhs, lower=1)
        if info != 0:  # pragma: no cover - dpotrs fails only on bad arguments
            raise RuntimeError(f"LAPACK dpotrs failed with info={info}")
        return (x.T / self.scale).T


def cholesky_lower(A):
    """(L, info): the lower Cholesky factor of the symmetric matrix A, Fortran-ordered (A's lower triangle is read; a
    Fortran-ordered A may be overwritten) and LAPACK's info (0: factorised; > 0: not positive definite, L is then None).

    numpy's and scipy's wheels bundle separate OpenBLAS libraries, each with its own thread pool, and after heavy
    work in one the other's next call waits for the first's spinning threads (scipy/scipy#15050; on 2 cores the wait
    is hundreds of times a small factorisation, ``python benchmarks/threads.py``, figures in docs/numbers.md).
    socal's matrix products are numpy's, so systems below ``NUMPY_CHOLESKY_BELOW`` unknowns are factorised by
    numpy's LAPACK, in the same pool; larger ones by scipy's, whose factorisation is about twice as fast there,
    which outweighs the wait.  With
    numpy's pool loaded after socal, whose idle spin is then short (:mod:`socal._threads`), there is no wait; but
    numpy is usually imported first and keeps OpenBLAS's long spin, so the split stays."""
    if A.shape[0] < NUMPY_CHOLESKY_BELOW:
        try:
            # Fortran order, which LAPACK takes as is (f2py would copy a C-ordered factor on every solve)
            return np.asfortranarray(np.linalg.cholesky(A)), 0
        except np.linalg.LinAlgError:
            return None, 1
    L, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=1)
    return (L, 0) if info == 0 else (None, info)


def ridge_factor(G, alpha, *, warn=True, work=None, scipy_only=False):
    """Factorise (G + lambda P), lambda = max(alpha, RIDGE_FLOOR) tr(G)/d, in Jacobi-scaled form.

    P is the identity with P[0, 0] = 0 (the constant feature, first in every ordering, is not penalised).

    ``work``, a Fortran-ordered (d, d) buffer, is used in place when given (scipy's factor then aliases it): in
    cross-validation loops this avoids a fresh allocation per solve, which on this kind of machine costs more than
    the factorisation itself (page faults on first touch).

    The factorisation is :func:`cholesky_lower`'s (numpy's LAPACK for small systems), or with ``scipy_only``
    scipy's alone: cross-validation's loop alternates factorisations with scipy's solves, and numpy's route there
    made the plug-in slower, while the final fit and the bootstrap's draws gain from it (docs/numbers.md, "The
    measurements behind the code's constants").
    """
    d = G.shape[0]
    unit = np.trace(G) / d
    if not unit > 0:  # no rows: any ridge scale will do (the solution is the zero map)
        unit = 1.0
    diag = np.diag(G)
    # a feature that vanishes on every row (tiny samples) keeps the unit scale: its row is then the ridge alone and
    # its coefficient 0, where a 1/sqrt(tiny) scale overflowed lambda / scale^2 to inf
    scale = np.sqrt(np.where(diag > 0, diag, unit))
    inv = 1.0 / scale
    A = np.empty((d, d), order="F") if work is None else work
    rel = max(float(alpha), RIDGE_FLOOR)
    for _ in range(8):
        lam = rel * unit
        np.multiply(G.T, inv[None, :], out=A)  # G is symmetric: G.T is its Fortran-ordered view
        A *= inv[:, None]
        A[np.diag_indices(d)] += lam * inv**2
        A[0, 0] -= lam * inv[0] ** 2  # the constant T_0 T_0 is not penalised (exact under label flip y -> 1 - y)
        anorm = lapack.dlange("1", A) if warn else np.nan  # in place: a |A| temporary costs page faults at large d
        if scipy_only:
            chol, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=1)
        else:
            chol, info = cholesky_lower(A)
        if info == 0:
            rcond = lapack.dpocon(chol, anorm, uplo="L")[0] if warn else np.nan  # not needed inside CV loops
            if warn and rcond < _RCOND_WARN:
                warnings.warn(f"Ridge system poorly conditioned (reciprocal condition number {rcond:.2e} at "
                              f"d={d}, ridge={rel:g}); consider a larger ridge or a lower degree.",
                              ConditioningWarning, stacklevel=3)
            return RidgeFactor(chol, scale, lam, float(rcond))
        new_rel = rel * 10.0
        if warn:
            warnings.warn(f"Cholesky failed at d={d}, ridge={rel:g} (not positive definite in floating point); "
                          f"raising the ridge to {new_rel:g}.", ConditioningWarning, stacklevel=3)
        rel = new_rel
    raise np.linalg.LinAlgError(f"Ridge system not positive definite even at ridge={rel:g} (d={d}).")


def ridge_solve(G, b, alpha, *, warn=True):
    """beta = (G + alpha tr(G)/d P)^{-1} b; ``b`` of shape (d,) or (d, R); P as in :func:`ridge_factor`."""
    return ridge_factor(G, alpha, warn=warn).solve(b)


def evaluate_series(basis, beta, mean, var=None, *, chunk=_CHUNK, angles=None):
    """Evaluate fitted polynomials at scores: returns shape (n, R) (or (n,) for a 1-D ``beta``).

    ``beta`` holds the coefficients of the leading features (any degree <= basis.degree); the evaluation is a
    chunked matrix product, T_u^T C T_w summed row-wise, never numpy's chebval2d loop, or a non-uniform FFT where
    that pays (:func:`use_nufft`), which reads the scores' angles from ``angles`` (a :class:`ScoreAngles` of the
    same ``mean`` and ``var``) when given.
    """
    beta = np.asarray(beta, dtype=float)
    squeeze = beta.ndim == 1
    C = basis.to_tensor(beta.reshape(beta.shape[0], -1))  # (R, l+1, lw+1)
    R, l1, lw1 = C.shape
    # trim to the degree actually used
    used_a = int(np.max(np.nonzero(np.any(C != 0, axis=(0, 2)))[0], initial=0))
    used_b = int(np.max(np.nonzero(np.any(C != 0, axis=(0, 1)))[0], initial=0))
    C = C[:, : used_a + 1, : used_b + 1]
    CmatT = np.ascontiguousarray(C.transpose(0, 2, 1).reshape(R * (used_b + 1), used_a + 1))
    u, w = to_unit(mean, var)
    n = u.shape[0]
    if use_nufft(n, (used_a + 1) * (used_b + 1), moments=False):
        from . import nufft

        out = nufft.evaluate(C, u, w, angles=angles)
        return out[:, 0] if squeeze else out
    out = np.empty((n, R))
    bu = np.empty((used_a + 1, chunk))
    bw = np.empty((used_b + 1, chunk))
    for start in range(0, n, chunk):
        sl = slice(start, min(start + chunk, n))
        Tu = cheb_rows(u[sl], used_a, bu)
        Tw = cheb_rows(w[sl], used_b, bw)
        P = (CmatT @ Tu).reshape(R, used_b + 1, -1)  # P[r, b, i] = sum_a C[r, a, b] T_a(u_i)
        P *= Tw
        out[sl] = P.sum(axis=1).T
    return out[:, 0] if squeeze else out
