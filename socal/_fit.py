"""Fitting calibration functions: regression targets, per-fold sufficient statistics, model selection.

Private: the public estimators in :mod:`socal.estimators` validate their inputs and call :func:`fit_calibration`
with clean float64 arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas

from ._results import SelectionReport
from .chebyshev import (TensorBasis, assemble_gram, cheb_rows, evaluate, grouped_moments, response_vector,
                        ridge_factor, to_unit)

__all__ = ["target_classes", "theta", "paper_degree", "degree_schedule", "targets", "fit_calibration", "CalibrationMap",
           "DEFAULT_ALPHAS", "DEFAULT_MAX_DEGREE", "MIN_DEGREE"]

DEFAULT_ALPHAS = tuple(float(10.0 ** e) for e in range(-6, 1))  # the paper's ridge grid 1e-6 ... 1
DEFAULT_MAX_DEGREE = 44  # the paper's cap at h = 1/16 (Appendix "Experiment 1")
MIN_DEGREE = 4  # the floor of the halving schedule
_MAX_CLASSES = 64  # target values grouped as classes up to this many; beyond, weighted moments


def theta(h):
    """Bernstein-ellipse parameter theta(h) = h pi + sqrt(h^2 pi^2 + 1) (Corollary "Polynomial approximation")."""
    return h * math.pi + math.sqrt((h * math.pi) ** 2 + 1.0)


def paper_degree(n, h):
    """The degree rule of Proposition "main": l = ceil(2 log n / log theta(h))."""
    return int(math.ceil(2.0 * math.log(n) / math.log(theta(h))))


def degree_schedule(lmax, floor=MIN_DEGREE):
    """Candidate degrees: lmax, then halving down to ``floor`` (Appendix "Experiment 1"), largest first."""
    out = [lmax]
    while out[-1] // 2 >= floor:
        out.append(out[-1] // 2)
    if out[-1] > floor:
        out.append(floor)
    return tuple(out)


def targets(a, k):
    """Unbiased all-pairs targets: z1 = a/k estimates f*, z2 = a(a-1)/(k(k-1)) estimates f*^2 (k >= 2)."""
    z1 = a / k
    with np.errstate(invalid="ignore", divide="ignore"):
        z2 = np.where(k >= 2, a * (a - 1.0) / (k * (k - 1.0)), np.nan)
    return z1, z2


@dataclass(frozen=True)
class CalibrationMap:
    """Fitted polynomial calibration functions on the fixed rectangle (eta1 and, in 2-D, eta2).

    ``beta`` has shape (d, R) in the max-ordering of :class:`socal.chebyshev.TensorBasis`; R = 2 in 2-D (eta1,
    eta2), 1 in 1-D.
    """

    degree: int
    ndim: int
    beta: np.ndarray
    alpha: float

    @property
    def basis(self):
        return TensorBasis(self.degree, self.ndim)

    def raw(self, mean, var=None):
        """Unclipped polynomial values, shape (n, R)."""
        return evaluate(self.basis, self.beta, mean, var if self.ndim == 2 else None)

    def predict(self, mean, var=None, *, project=False):
        """eta-hat at the scores: clipped to [0, 1] (the estimator's class P_l), or, with ``project=True``,
        projected onto the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1."""
        out = np.clip(self.raw(mean, var), 0.0, 1.0)
        if project and out.shape[1] == 2:
            out[:, 1] = np.clip(out[:, 1], out[:, 0] ** 2, out[:, 0])
        return out

    def to_dict(self):
        return {"degree": self.degree, "ndim": self.ndim, "alpha": self.alpha,
                "beta": [[float(x) for x in row] for row in np.asarray(self.beta)]}

    @classmethod
    def from_dict(cls, d):
        beta = np.array(d["beta"], dtype=float)
        return cls(degree=int(d["degree"]), ndim=int(d["ndim"]), beta=beta, alpha=float(d["alpha"]))


def _symm(A, B):
    """A @ B through scipy's BLAS: numpy and scipy each load an OpenBLAS, and alternating between the two thread
    pools inside the CV loop made every Cholesky after the first run 2-3 times slower (measured)."""
    return blas.dsymm(1.0, A, B, side=0, lower=0)


@dataclass
class _Stats:
    """Per-fold sufficient statistics at the largest candidate degree."""

    M: np.ndarray  # (F, 2l+1, 2lw+1) moments
    Z: np.ndarray  # (F, R, l+1, lw+1) response-weighted moments
    zz: np.ndarray  # (F, R) sums of squared responses
    count: np.ndarray  # (F,)


def response_moments(u, w, Z, deg_u, deg_w, *, chunk=2048):
    """W[j, p, q] = sum_i Z[i, j] T_p(u_i) T_q(w_i) for several response columns at once."""
    n, R = Z.shape
    W = np.zeros((R, deg_u + 1, deg_w + 1))
    bu = np.empty((deg_u + 1, chunk))
    bw = np.empty((deg_w + 1, chunk))
    for start in range(0, n, chunk):
        sl = slice(start, min(start + chunk, n))
        Tu = cheb_rows(u[sl], deg_u, bu)
        Tw = cheb_rows(w[sl], deg_w, bw)
        W += np.matmul(Tu[None, :, :] * Z[sl].T[:, None, :], Tw.T)
    return W


def target_classes(a, k, R):
    """Group items by their (positives, trials) so the targets take one value per class.

    Returns (cls, vals): cls[i] the class of item i, vals[c] the R target values of class c (z1, z2 or z1 only).
    """
    a_int, k_int = a.astype(np.int64), k.astype(np.int64)
    if np.all(k_int == k_int[0]):  # one k for all: the class is the count itself, no sort needed
        kk = int(k_int[0])
        cls = a_int
        z1, z2 = targets(np.arange(kk + 1, dtype=float), np.full(kk + 1, float(kk)))
    else:
        key = a_int * (int(k_int.max()) + 1) + k_int
        uniq, cls = np.unique(key, return_inverse=True)
        kk_u = (uniq % (int(k_int.max()) + 1)).astype(float)
        z1, z2 = targets((uniq // (int(k_int.max()) + 1)).astype(float), kk_u)
    vals = np.column_stack([z1, z2])[:, :R]
    return cls.ravel(), vals


def _fold_stats(u, w, zs, fold, n_folds, basis, classes=None):
    """Moments per fold; targets with few distinct values are grouped as classes (no extra pass for b)."""
    l, lw = basis.degree, basis.deg_w
    R = zs.shape[1]
    if classes is None:
        vals, cls = np.unique(zs, axis=0, return_inverse=True)
        cls = cls.ravel()
    else:
        cls, vals = classes
    if len(vals) <= _MAX_CLASSES:
        C = len(vals)
        Mg = grouped_moments(u, w, fold * C + cls, n_folds * C, 2 * l, 2 * lw).reshape(n_folds, C, 2 * l + 1,
                                                                                     2 * lw + 1)
        M = Mg.sum(axis=1)
        low = Mg[:, :, : l + 1, : lw + 1]
        Z = np.einsum("cr,fcpq->frpq", vals, low)
        zz = np.einsum("cr,fc->fr", vals**2, Mg[:, :, 0, 0])
    else:
        M = grouped_moments(u, w, fold, n_folds, 2 * l, 2 * lw)
        Z = np.stack([response_moments(u[fold == f], w[fold == f], zs[fold == f], l, lw) for f in range(n_folds)])
        zz = np.stack([(zs[fold == f] ** 2).sum(axis=0) for f in range(n_folds)])
    count = M[:, 0, 0].copy()
    return _Stats(M=M, Z=Z, zz=zz.reshape(n_folds, R), count=count)


@dataclass
class FitResult:
    cmap: CalibrationMap
    factor: object  # RidgeFactor of the final fit (reused by the bootstrap)
    selection: SelectionReport
    u: np.ndarray
    w: np.ndarray


def fit_calibration(mean, var, zs, *, degrees, alphas, folds, holdout, rng, select, classes=None, validation=None):
    """Fit eta-hat (one column of ``zs`` per response) with degree/alpha chosen by CV, a hold-out split or fixed.

    ``var`` None means the 1-D (first-order) problem.  ``degrees`` is sorted largest first.  ``classes``, from
    :func:`target_classes`, spares a sort of the targets when they come from integer counts.  ``validation``, a
    boolean mask, selects on those rows (a fixed hold-out split, the paper's "val" variant) instead of CV.
    """
    ndim = 1 if var is None else 2
    u, w = to_unit(mean, var)
    n = u.shape[0]
    lmax = max(degrees)
    basis = TensorBasis(lmax, ndim)
    if select:
        if validation is not None:
            n_folds, splits = 2, [1]
            fold = np.asarray(validation, dtype=bool).astype(np.intp)
        elif holdout is not None:
            n_folds = 2
            fold = (rng.random(n) < holdout).astype(np.intp)  # fold 1 = validation
            splits = [1]
        else:
            n_folds = folds
            fold = rng.permutation(np.arange(n) % folds).astype(np.intp)
            splits = list(range(folds))
    else:
        n_folds, fold, splits = 1, np.zeros(n, dtype=np.intp), []
    st = _fold_stats(u, w, zs, fold, n_folds, basis, classes)
    M_tot, Z_tot = st.M.sum(axis=0), st.Z.sum(axis=0)
    cv = np.full((len(degrees), len(alphas)), np.nan)
    if splits:
        cv[:] = 0.0
        n_val = 0.0
        work = {l: np.empty((basis.size_at(l),) * 2, order="F") for l in degrees}
        for f in splits:
            G_tr = assemble_gram(M_tot - st.M[f], basis)
            G_va = assemble_gram(st.M[f], basis)
            b_tr = np.stack([response_vector(Zr, basis) for Zr in (Z_tot - st.Z[f])], axis=1)
            b_va = np.stack([response_vector(Zr, basis) for Zr in st.Z[f]], axis=1)
            n_val += st.count[f]
            for i, l in enumerate(degrees):
                dl = basis.size_at(l)
                G_va_l = np.ascontiguousarray(G_va[:dl, :dl]).T  # Fortran-ordered for BLAS, copied once per degree
                for j, alpha in enumerate(alphas):
                    beta = ridge_factor(G_tr[:dl, :dl], alpha, warn=False, work=work[l]).solve(b_tr[:dl])
                    # held-out SSE = sum z^2 - 2 beta.b_f + beta' G_f beta, from the stored statistics
                    sse = st.zz[f] - 2.0 * np.einsum("dr,dr->r", beta, b_va[:dl]) \
                        + np.einsum("dr,dr->r", beta, _symm(G_va_l, beta))
                    cv[i, j] += sse.sum()
        cv /= n_val
        i, j = np.unravel_index(np.nanargmin(cv), cv.shape)
        degree, alpha = degrees[i], alphas[j]
        method = "holdout" if (holdout is not None or validation is not None) else "cv"
    else:
        degree, alpha = degrees[0], alphas[0]
        method = "fixed"
    fb = TensorBasis(degree, ndim)
    G = assemble_gram(M_tot[: 2 * degree + 1, : 2 * fb.deg_w + 1], fb)
    b = np.stack([response_vector(Zr, fb) for Zr in Z_tot], axis=1)
    factor = ridge_factor(G, alpha)
    beta = factor.solve(b)
    report = SelectionReport(method=method, degrees=tuple(degrees), alphas=tuple(alphas), cv_error=cv,
                             folds=len(splits))
    return FitResult(CalibrationMap(degree, ndim, beta, float(alpha)), factor, report, u, w)
