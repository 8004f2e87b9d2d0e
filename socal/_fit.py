"""Fitting calibration functions from sufficient statistics: degree/ridge selection and the final solve.

Private: the statistics come from :mod:`socal.sufficient` (one pass over the data); :func:`select_and_fit` needs
nothing else.  :func:`fit_calibration` is the in-memory shortcut (one chunk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas

from ._results import SelectionReport
from ._validation import check_bandwidth, check_float
from .chebyshev import TensorBasis, assemble_gram, evaluate, response_vector, ridge_factor
from .sufficient import SufficientStats, response_moments, target_classes, targets

__all__ = ["target_classes", "theta", "paper_degree", "degree_schedule", "targets", "fit_calibration", "select_and_fit",
           "CalibrationMap", "FitResult", "response_moments", "DEFAULT_ALPHAS", "DEFAULT_MAX_DEGREE", "MIN_DEGREE"]

DEFAULT_ALPHAS = tuple(float(10.0 ** e) for e in range(-6, 1))  # the paper's ridge grid 1e-6 ... 1
DEFAULT_MAX_DEGREE = 44  # the paper's cap at h = 1/16 (Appendix "Experiment 1")
MIN_DEGREE = 4  # the floor of the halving schedule


def theta(h: float) -> float:
    """Bernstein-ellipse parameter theta(h) = h pi + sqrt(h^2 pi^2 + 1) (Corollary "Polynomial approximation").

    Equal to exp(asinh(h pi)), the form used here: it keeps log theta exact for tiny h, where h pi + sqrt(...)
    rounds to 1.
    """
    h = check_bandwidth(h, "theta")
    return math.exp(math.asinh(h * math.pi))


def paper_degree(n: float, h: float) -> int:
    """The degree rule of Proposition "main": l = ceil(2 log n / log theta(h)), log theta(h) = asinh(h pi)."""
    n = check_float(n, "n", "paper_degree", 1.0, math.inf)  # real n: the bounds evaluate it between sample sizes
    h = check_bandwidth(h, "paper_degree")
    return int(math.ceil(2.0 * math.log(n) / math.asinh(h * math.pi)))


def degree_schedule(lmax, floor=MIN_DEGREE):
    """Candidate degrees: lmax, then halving down to ``floor`` (Appendix "Experiment 1"), largest first."""
    floor = max(0, min(floor, lmax))
    out = [lmax]
    while floor <= out[-1] // 2 < out[-1]:  # stops at 0 too (0 // 2 == 0)
        out.append(out[-1] // 2)
    if out[-1] > floor:
        out.append(floor)
    return tuple(out)


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
class FitResult:
    cmap: CalibrationMap
    factor: object  # RidgeFactor of the final fit (reused by the bootstrap)
    selection: SelectionReport


def select_and_fit(stats, *, degrees, alphas, select):
    """Choose (degree, alpha) from the statistics and fit: no data past this point.

    ``degrees`` is sorted largest first and must not exceed ``stats.max_degree``.  With ``select`` the held-out
    squared error of every candidate on every validating fold comes from the stored statistics,
    sum z^2 - 2 beta.b_f + beta' G_f beta (unclipped), so selection costs no pass over the data.
    """
    ndim = stats.ndim
    lmax = max(degrees)
    if lmax > stats.max_degree:
        raise ValueError(f"The degree {lmax} is above the statistics' cap max_degree={stats.max_degree}; build the "
                         f"statistics with a larger max_degree.")
    st = stats.truncate(lmax) if lmax < stats.max_degree else stats
    basis = TensorBasis(lmax, ndim)
    M_tot, Z_tot = st.M.sum(axis=0), st.Z.sum(axis=0)
    n_tot = st.count.sum()
    # a split needs rows on both sides; identical rows share a fold (their hash is equal), so with few distinct rows
    # some folds are empty or hold everything
    splits = [f for f in st.splits if 0 < st.count[f] < n_tot] if select else []
    cv = np.full((len(degrees), len(alphas)), np.nan)
    if select and not splits:  # nothing to validate on: the most conservative candidate, said in the report
        degree, alpha = min(degrees), max(alphas)
        method = "none (too few distinct rows for any split: smallest degree, largest ridge)"
    elif splits:
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
        method = "holdout" if st.holdout is not None or len(st.splits) == 1 else "cv"
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
    return FitResult(CalibrationMap(degree, ndim, beta, float(alpha)), factor, report)


class _ValidationSplit(SufficientStats):
    """Statistics whose fold 1 is a fixed validation mask (the paper's "val" variant): fold 1 validates."""

    @property
    def splits(self):
        return (1,)


def fit_calibration(mean, var, zs, *, degrees, alphas, folds, holdout, rng, select, classes=None, validation=None):
    """Fit eta-hat (one column of ``zs`` per response) from in-memory arrays: one chunk of :class:`SufficientStats`.

    ``var`` None means the 1-D (first-order) problem.  ``degrees`` is sorted largest first.  ``classes``, from
    :func:`target_classes`, spares a sort of the targets when they come from integer counts.  ``validation``, a
    boolean mask, selects on those rows (a fixed hold-out split) instead of CV.
    """
    ndim = 1 if var is None else 2
    kind = _ValidationSplit if validation is not None else SufficientStats
    stats = kind(max_degree=max(degrees), ndim=ndim, folds=2 if validation is not None else folds, holdout=holdout,
                 rng=rng)
    stats._add(np.asarray(mean, dtype=float), None if var is None else np.asarray(var, dtype=float),
               np.asarray(zs, dtype=float).reshape(len(mean), -1)[:, : stats.n_responses],
               fold=None if validation is None else np.asarray(validation, dtype=bool).astype(np.intp),
               classes=classes)
    return select_and_fit(stats, degrees=degrees, alphas=alphas, select=select)
