"""Fitting calibration functions from sufficient statistics: degree/ridge selection and the final solve.

The statistics come from :mod:`socal.sufficient` (one pass over the data); :func:`select_and_fit` needs nothing
else.  :func:`fit_calibration` is the in-memory shortcut (one chunk).  The candidate degrees and ridges come from
:mod:`socal.degrees`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from ._results import SelectionReport
from .chebyshev import (RIDGE_FLOOR, MomentOperator, TensorBasis, evaluate_series, response_vector, ridge_factor,
                        tensor_gram)
from .sufficient import SufficientStats

__all__ = ["fit_calibration", "select_and_fit", "CalibrationMap", "FitResult", "SEARCHES"]


def feasible(raw, project=False):
    """Polynomial values (n, R) -> eta-hat: clipped to [0, 1] (in place), and with ``project`` (two responses) eta2
    clipped to [eta1^2, eta1], the feasible moment region (:meth:`CalibrationMap.predict`)."""
    out = np.clip(raw, 0.0, 1.0, out=raw)
    if project and out.shape[1] == 2:
        out[:, 1] = np.clip(out[:, 1], out[:, 0] ** 2, out[:, 0])
    return out


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

    def raw(self, mean, var=None, *, angles=None):
        """Unclipped polynomial values, shape (n, R); ``angles``: as in :func:`socal.chebyshev.evaluate_series`."""
        return evaluate_series(self.basis, self.beta, mean, var if self.ndim == 2 else None, angles=angles)

    def predict(self, mean, var=None, *, project=False):
        """eta-hat at the scores: clipped to [0, 1] (the estimator's class P_l), or, with ``project=True``,
        projected onto the feasible moment region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1."""
        return feasible(self.raw(mean, var), project)

    def to_dict(self):
        """The map as JSON-safe values (its degree, ridge and coefficients), as a saved recalibrator holds it."""
        return {"degree": self.degree, "ndim": self.ndim, "alpha": self.alpha,
                "beta": [[float(x) for x in row] for row in np.asarray(self.beta)]}

    @classmethod
    def from_dict(cls, d):
        beta = np.array(d["beta"], dtype=float)
        return cls(degree=int(d["degree"]), ndim=int(d["ndim"]), beta=beta, alpha=float(d["alpha"]))


_MIXED_MIN_SIZE = 1024  # fold systems with this many features (2-D) are factorised in float32 and refined
_REFINE_TOL = 1e-12  # relative residual of a refined fold solution: CV error within 2e-9 of float64 Cholesky's
_REFINE_STEPS = 12
_SHARED_STEPS = 20  # CG steps of the fold systems against the full-data factor before a fold is solved on its own
_CACHE_BYTES = 2**28  # scaled float32 fold Grams kept across the ridge walk (all folds at l = 44: 82 MB)
# the final fit (one system, no cached buffers) gains from float32 only where the factorisation dominates (the
# timings at d = 2,025 and 7,921: docs/numbers.md, "The measurements behind the code's constants")
_MIXED_FINAL_MIN_SIZE = 4096


@dataclass
class FitResult:
    calmap: CalibrationMap
    factor: object  # the final fit's factor, solving in max-ordering (reused by the bootstrap)
    selection: SelectionReport
    moments: np.ndarray | None = None  # M[p, q], p <= 2 l, q <= 2 l_w, of every row (the bootstrap world's G beta)


class _Float64Factor:
    """The float64 Cholesky factor of the final fit, built when first needed (the bootstrap's refits, ``rcond``, or a
    final solve the mixed-precision path could not do), with ridge_factor's conditioning warnings."""

    def __init__(self, M, l, lw, alpha):
        self._args = (M, l, lw, alpha)
        self._factor = None

    @property
    def factor(self):
        if self._factor is None:
            M, l, lw, alpha = self._args
            self._factor = ridge_factor(tensor_gram(M, l, lw), alpha)
        return self._factor

    @property
    def rcond(self):
        return self.factor.rcond

    def solve(self, b):
        return self.factor.solve(b)


class _Permuted:
    """A factor built in the tensor layout, solving for right-hand sides in max-ordering."""

    def __init__(self, factor, order):
        self.factor, self.order = factor, order

    @property
    def rcond(self):
        return self.factor.rcond

    def solve(self, b):
        b = np.asarray(b, dtype=float)
        bt = np.empty_like(b)
        bt[self.order] = b
        return self.factor.solve(bt)[self.order]


def _jacobi(M, l, lw):
    """(1/D, tr(G)/d) for the Gram G of moments M, D = diag(G)^(1/2), in float64 from the moments
    (G_(a,b),(a,b) = (M[2a,2b] + M[2a,0] + M[0,2b] + M[0,0]) / 4): the ridge lambda = alpha tr(G)/d must be the
    float64 path's, not a float32 rounding of it."""
    a, b = np.arange(l + 1)[:, None], np.arange(lw + 1)[None, :]
    diag = (0.25 * (M[2 * a, 2 * b] + M[2 * a, 0] + M[0, 2 * b] + M[0, 0])).ravel()
    unit = diag.sum() / diag.size
    return 1.0 / np.sqrt(np.where(diag > 0, diag, unit if unit > 0 else 1.0)), unit


def _scaled32(M, l, lw, out):
    """(D^-1 G D^-1 in float32 in ``out``, 1/D, tr(G)/d) for the Gram of moments M, D = diag(G)^(1/2) (Jacobi)."""
    A = tensor_gram(M, l, lw, out=out)
    inv, unit = _jacobi(M, l, lw)
    inv32 = inv.astype(np.float32)
    A *= inv32[:, None]
    A *= inv32[None, :]
    return A, inv, unit


def _solve_mixed(M, l, lw, alpha, b, A, scaled=None, op=None):
    """(G + lambda P) x = b (tensor layout, G the Gram of moments M) by a float32 Cholesky of the Jacobi-scaled
    system and conjugate gradients in float64 against the exact operator (FFT from M); None when float32 cannot
    factorise it or CG does not reach a relative residual of _REFINE_TOL (the caller then factorises in float64).

    ``A`` is a (d, d) float32 buffer (overwritten); ``scaled``, the cached result of :func:`_scaled32` for M.
    """
    d = b.shape[0]
    if scaled is not None:
        np.copyto(A, scaled[0])
        inv, unit = scaled[1], scaled[2]
    else:
        _, inv, unit = _scaled32(M, l, lw, A)
    if not unit > 0:
        return None
    ridge = np.full(d, max(float(alpha), RIDGE_FLOOR) * unit)
    ridge[0] = 0.0  # the constant feature is not penalised (as in ridge_factor)
    A[np.diag_indices(d)] += (ridge * inv * inv).astype(np.float32)
    chol, info = lapack.spotrf(A.T, lower=1, clean=0, overwrite_a=1)  # A is symmetric: A.T is its F-view
    if info != 0:
        return None
    op = MomentOperator(M, l, lw) if op is None else op

    def precond(r, cols):
        x, _ = lapack.spotrs(chol, (r * inv[:, None]).astype(np.float32), lower=1)
        return x.astype(np.float64) * inv[:, None]

    x, done = _pcg(lambda x, cols: op(x) + ridge[:, None] * x, precond, b, _REFINE_STEPS)
    return x if done.all() else None


def _pcg(apply, precond, b, steps, project=False):
    """Conjugate gradients on a block of columns at once, from x0 = precond(b) to a relative residual of _REFINE_TOL.

    ``apply(x, cols)`` and ``precond(r, cols)`` act on each column of a (d, C) block separately; ``cols`` are the
    block's columns' indices in ``b`` (columns drop out as they converge).  Returns (x, converged per column); a
    column whose curvature p'Ap is not positive stops there, unconverged.  With ``project``, CG gives up after 4
    steps when the slowest column's rate so far projects more than ``steps`` steps in all."""
    every = np.arange(b.shape[1])
    x = precond(b, every)
    r = b - apply(x, every)
    bnorm = np.linalg.norm(b, axis=0)
    bnorm[bnorm == 0] = 1.0
    done = np.linalg.norm(r, axis=0) <= _REFINE_TOL * bnorm
    act = np.flatnonzero(~done)
    if act.size == 0:
        return x, done
    r = r[:, act]
    rel0 = np.linalg.norm(r, axis=0) / bnorm[act]
    z = precond(r, act)
    p = z.copy()
    rz = np.sum(r * z, axis=0)
    for it in range(1, steps + 1):
        Ap = apply(p, act)
        pAp = np.sum(p * Ap, axis=0)
        ok = pAp > 0
        step = np.where(ok, rz / np.where(ok, pAp, 1.0), 0.0)
        x[:, act] += step * p
        r -= step * Ap
        conv = np.linalg.norm(r, axis=0) <= _REFINE_TOL * bnorm[act]
        done[act[conv]] = True
        keep = ok & ~conv
        if not keep.any():
            break
        act, r, p, rz, rel0 = act[keep], r[:, keep], p[:, keep], rz[keep], rel0[keep]
        if project and it == 4:
            rate = (np.linalg.norm(r, axis=0) / bnorm[act] / rel0) ** (1.0 / it)
            with np.errstate(divide="ignore"):
                need = np.where(rate < 1, np.log(_REFINE_TOL / rel0) / np.log(np.minimum(rate, 1 - 1e-12)), np.inf)
            if need.max() > steps:
                break
        z = precond(r, act)
        rz_new = np.sum(r * z, axis=0)
        p = z + (rz_new / np.where(rz != 0, rz, 1.0)) * p
        rz = rz_new
    return x, done


@dataclass
class _FoldSystem:
    """Fold f's held-out problem at degree l: training moments and right-hand sides, validation Gram and targets.

    ``mixed`` systems (2-D, at least _MIXED_MIN_SIZE features) apply their Grams by FFT from the moments and keep a
    scaled float32 training system ``A32``; the others keep the dense training Gram.
    """

    l: int
    lw: int
    d: int
    M_tr: np.ndarray  # training moments (2l+1, 2lw+1)
    b_va: np.ndarray  # validation right-hand sides (d, R)
    zz: float  # validation sum of squared targets
    b_tr: np.ndarray  # training right-hand sides (d, R)
    mixed: bool
    G_va: object = None  # x -> G_validation x
    G_tr: object = None  # x -> G_training x (mixed only)
    unit: float = 0.0  # the Jacobi scale of the training system (mixed only)
    G_tr_dense: np.ndarray | None = None  # the dense training Gram (not mixed)
    A32: np.ndarray | None = None  # the scaled float32 training system, kept across the ridge walk (mixed)


class _FoldErrors:
    """Held-out squared error of a ridge fit at (degree, alpha), fold by fold, from the statistics alone.

    Fold f trains on the moments M_tot - M_f and validates on M_f: its held-out SSE is
    sum z^2 - 2 beta.b_f + beta' G_f beta (unclipped), so no pass over the data.  Systems of >= _MIXED_MIN_SIZE
    features (2-D) are first solved all folds together, by conjugate gradients against one float32 factor of the
    full-data system (:meth:`_shared_sse`).  A fold that does not converge there is factorised on its own in
    float32 (half the time of float64 at d = 7,921) and refined to float64 accuracy by conjugate gradients with that
    factor as preconditioner; either way the exact Gram is applied by FFT from the moments
    (:class:`socal.chebyshev.MomentOperator`), and a system the float32 factor cannot resolve is redone in float64.
    Every fold solution has relative residual <= _REFINE_TOL.  A fold's assembled system is kept while the
    search stays at its degree (the ridge walk revisits it), within _CACHE_BYTES.
    """

    def __init__(self, stats, splits):
        self.stats, self.splits = stats, splits
        self.M_tot, self.Z_tot = stats.M.sum(axis=0), stats.Z.sum(axis=0)
        self.n_val = float(sum(stats.count[f] for f in splits))
        # CV errors are in units of the mean squared target (the zero map's error): ties below 1e-6 of it are absolute
        self.floor = 1e-6 * float(sum(stats.zz[f].sum() for f in splits)) / self.n_val
        self._cache, self._cache_degree, self._full32, self._shared_failed = {}, None, None, -np.inf
        self._work = {}

    def size(self, degree):
        """Features of a fit of this degree."""
        return (degree + 1) ** self.stats.ndim

    def mean_sse(self, degree, alpha):
        """Mean held-out SSE over the validating rows."""
        if degree != self._cache_degree:
            self._cache, self._cache_degree, self._full32, self._shared_failed = {}, degree, None, -np.inf
        if (self.stats.ndim == 2 and self.size(degree) >= _MIXED_MIN_SIZE and len(self.splits) > 1
                and alpha > self._shared_failed):
            return sum(self._shared_sse(degree, alpha)) / self.n_val
        return sum(self._fold_sse(f, degree, alpha) for f in self.splits) / self.n_val

    def _shared_sse(self, l, alpha):
        """Every fold's held-out SSE at a large degree, the fold systems solved together by conjugate gradients
        preconditioned with one float32 factor of the full-data system: fold f's training system is close to c_f
        times it, c_f = tr(G_f,train) / tr(G) ~ (K-1)/K, so CG needs few steps where the folds' Grams differ
        little from the whole (n large against d; at d = 2,025: 10 steps at n = 1e6, 16 at 2e5, alpha = 0.01).
        One factorisation per ridge value instead of one per fold.  Folds not at _REFINE_TOL after _SHARED_STEPS
        steps (or projected not to be, from the rate of the first 4) are solved on their own (:meth:`_fold_sse`),
        and so are the folds at every smaller ridge value at this degree."""
        systems = [self._system(f, l) for f in self.splits]
        d, lw, R = systems[0].d, systems[0].lw, systems[0].b_tr.shape[1]
        A = self._buffer(d, np.float32)
        if self._full32 is not None:
            np.copyto(A, self._full32[0])
            inv, unit = self._full32[1], self._full32[2]
        else:
            M = self.M_tot[: 2 * l + 1, : 2 * lw + 1]
            _, inv, unit = _scaled32(M, l, lw, A)
            if 2 * d * d * 4 <= _CACHE_BYTES:  # kept for the next ridge value
                self._full32 = (A.copy(), inv, unit)
        lam = max(float(alpha), RIDGE_FLOOR)
        sse = [None] * len(systems)
        if unit > 0:
            ridge = np.full(d, lam * unit)
            ridge[0] = 0.0  # the constant feature is not penalised (as in ridge_factor)
            A[np.diag_indices(d)] += (ridge * inv * inv).astype(np.float32)
            chol, info = lapack.spotrf(A.T, lower=1, clean=0, overwrite_a=1)  # A is symmetric: A.T is its F-view
            if info == 0:
                # column j of the block is response j % R of fold j // R
                scale = np.repeat([unit / system.unit for system in systems], R)
                ridges = [np.where(np.arange(d) == 0, 0.0, lam * system.unit) for system in systems]

                def precond(r, cols):
                    x, _ = lapack.spotrs(chol, (r * inv[:, None]).astype(np.float32), lower=1)
                    return x.astype(np.float64) * inv[:, None] * scale[cols]

                def apply(x, cols):
                    out = np.empty_like(x)
                    folds = cols // R
                    for f in np.unique(folds):
                        k = folds == f
                        out[:, k] = systems[f].G_tr(x[:, k]) + ridges[f][:, None] * x[:, k]
                    return out

                x, done = _pcg(apply, precond, np.hstack([system.b_tr for system in systems]), _SHARED_STEPS,
                               project=True)
                for i, system in enumerate(systems):
                    if done[i * R:(i + 1) * R].all():
                        sse[i] = self._sse(system, x[:, i * R:(i + 1) * R])
        if any(e is None for e in sse):  # a smaller ridge converges slower still: solve its folds on their own
            self._shared_failed = max(self._shared_failed, lam)
        return [e if e is not None else self._fold_sse(f, l, alpha) for e, f in zip(sse, self.splits)]

    def _buffer(self, d, dtype, order="C"):
        key = (d, np.dtype(dtype).str, order)
        if key not in self._work:
            self._work[key] = np.empty((d, d), dtype=dtype, order=order)
        return self._work[key]

    def _system(self, f, l):
        system = self._cache.get(f)
        if system is not None:
            return system
        stats = self.stats
        lw = l if stats.ndim == 2 else 0
        d = (l + 1) * (lw + 1)
        R = stats.Z.shape[1]
        M_va = stats.M[f, : 2 * l + 1, : 2 * lw + 1]
        M_tr = self.M_tot[: 2 * l + 1, : 2 * lw + 1] - M_va
        b_va = stats.Z[f, :, : l + 1, : lw + 1].reshape(R, d).T
        system = _FoldSystem(l=l, lw=lw, d=d, M_tr=M_tr, b_va=b_va, zz=float(stats.zz[f].sum()),
                             b_tr=self.Z_tot[:, : l + 1, : lw + 1].reshape(R, d).T - b_va,
                             mixed=stats.ndim == 2 and d >= _MIXED_MIN_SIZE)  # 1-D systems are at most 201 x 201
        if system.mixed:
            system.G_va = MomentOperator(M_va, l, lw)
            system.G_tr = MomentOperator(M_tr, l, lw)
            system.unit = _jacobi(M_tr, l, lw)[1]
        else:
            G_va = tensor_gram(M_va, l, lw)
            system.G_va = lambda x, G=G_va: G @ x
            system.G_tr_dense = tensor_gram(M_tr, l, lw)
        self._cache[f] = system
        return system

    def _fold_sse(self, f, l, alpha):
        system = self._system(f, l)
        if system.mixed:
            d = system.d
            if system.A32 is None and len(self.splits) * d * d * 4 <= _CACHE_BYTES:  # kept across the ridge walk
                system.A32 = _scaled32(system.M_tr, l, system.lw, np.empty((d, d), dtype=np.float32))
            beta = _solve_mixed(system.M_tr, l, system.lw, alpha, system.b_tr, self._buffer(d, np.float32),
                                scaled=system.A32, op=system.G_tr)
            if beta is None:
                beta = ridge_factor(tensor_gram(system.M_tr, l, system.lw), alpha, warn=False, scipy_only=True,
                                    work=self._buffer(d, np.float64, "F")).solve(system.b_tr)
        else:
            beta = ridge_factor(system.G_tr_dense, alpha, warn=False, scipy_only=True,
                                work=self._buffer(system.d, np.float64, "F")).solve(system.b_tr)
        return self._sse(system, beta)

    @staticmethod
    def _sse(system, beta):
        """Held-out SSE of coefficients ``beta`` on the fold: sum z^2 - 2 beta.b_f + beta' G_f beta."""
        return system.zz - 2.0 * float(np.sum(beta * system.b_va)) + float(np.sum(beta * system.G_va(beta)))


_TIE = 1e-9  # CV errors this close (relative) are a tie: rounding (row order, BLAS blocking) must not decide


def _better(a, b, floor=0.0):
    """a is below b by more than a tie (``floor``: the absolute tie size near 0, where SSEs round to +-1e-17)."""
    return a < b - _TIE * (abs(b) + floor) if np.isfinite(b) else a < b


def _choose(cv, degrees, alphas, floor=0.0):
    """The candidate of least CV error; among ties (within _TIE) the smallest degree, then the largest ridge."""
    best = np.nanmin(cv)
    near = np.argwhere(cv <= best + _TIE * (abs(best) + floor))
    i, j = min(near, key=lambda ij: (degrees[ij[0]], -alphas[ij[1]]))
    return degrees[i], alphas[j]


def _search_greedy(errors, degrees, alphas, start=None, known=None):
    """Degrees from the smallest up, a local search over the ridge at each; stop at the first degree that does worse.

    * The smallest degree tries every alpha (its systems are tiny), unless ``start``, the ridge that won at a
      smaller degree searched before (Lepski's finer candidates: cross-validation's), is given: then the walk
      below starts from it, as it would from the degree below.
    * Each larger degree walks over the ridge from the alpha j0 that won at the degree below while the CV error
      falls: up (larger alpha), then down.  At a degree whose fold systems are large (>= _MIXED_MIN_SIZE features)
      the walk starts at j0 + 1, goes up while the error falls and, if it never moved, checks j0 and stops there:
      the best alpha never fell from one degree to the next at these sizes (on 48 exhaustive grids at l = 44, from
      degree 22 to 44 it stayed 13 times, rose one step 33 times, two steps twice), so the top degree costs three
      alphas (two at the grid's edge): one float32 factorisation of the full-data system each, with the folds
      solved against it (:meth:`_FoldErrors._shared_sse`), or one per fold where that does not converge.
    * The search stops at the first degree whose best error is not below the best so far: CV error against degree
      was U-shaped on every population measured, and the top degree, which costs nearly all the factorisations, is
      then never factorised.

    ``known``: errors already computed on the same statistics, {(degree, alpha): error} (Lepski's finer
    candidates pass cross-validation's table: the walk at a degree it visited then solves nothing again).

    Returns the (degree x alpha) table of mean held-out errors, NaN where not tried.
    """
    cv = np.full((len(degrees), len(alphas)), np.nan)
    known = {} if known is None else known

    def err(i, j):
        if np.isnan(cv[i, j]):
            cv[i, j] = known.get((degrees[i], alphas[j]), np.nan)
        if np.isnan(cv[i, j]):
            cv[i, j] = errors.mean_sse(degrees[i], alphas[j])
        return cv[i, j]

    previous, j0 = np.inf, (None if start is None else alphas.index(start))
    for i in sorted(range(len(degrees)), key=lambda i: degrees[i]):
        if j0 is None:
            for j in range(len(alphas)):
                err(i, j)
            jb = alphas.index(_choose(cv[i:i + 1], degrees[i:i + 1], alphas, errors.floor)[1])
        elif errors.size(degrees[i]) < _MIXED_MIN_SIZE:  # cheap systems: walk from j0 both ways
            jb = j0
            err(i, jb)
            for step in (1, -1):
                moved = False
                while 0 <= jb + step < len(alphas) and _better(err(i, jb + step), cv[i, jb], errors.floor):
                    jb += step
                    moved = True
                if moved:
                    break
        else:  # large systems: start one step up, walk up; if that never moves, check j0 only (3 alphas at most
            # when the best lies 0, 1 or 2 steps above j0, the only shifts measured)
            jb = min(j0 + 1, len(alphas) - 1)
            err(i, jb)
            moved = False
            while jb + 1 < len(alphas) and _better(err(i, jb + 1), cv[i, jb], errors.floor):
                jb += 1
                moved = True
            if not moved and jb > j0 and _better(err(i, j0), cv[i, jb], errors.floor):
                jb = j0
        if not _better(cv[i, jb], previous, errors.floor):
            break
        previous, j0 = cv[i, jb], jb
    return cv


def _search_exhaustive(errors, degrees, alphas):
    cv = np.empty((len(degrees), len(alphas)))
    for i, l in enumerate(degrees):
        for j, a in enumerate(alphas):
            cv[i, j] = errors.mean_sse(l, a)
    return cv


SEARCHES = ("greedy", "exhaustive")


def select_and_fit(stats, *, degrees, alphas, select, search="greedy", start_alpha=None, known=None):
    """Choose (degree, alpha) from the statistics and fit: no data past this point.

    ``degrees`` is sorted largest first and must not exceed ``stats.max_degree``.  With ``select`` the held-out
    squared error of candidates on every validating fold comes from the stored statistics (:class:`_FoldErrors`).
    ``search`` 'greedy' (the default; :func:`_search_greedy`, whose ridge walk starts at ``start_alpha`` when it
    is one of ``alphas``) or 'exhaustive' (every degree x alpha).  ``known``: held-out errors already computed
    from these statistics, {(degree, alpha): error}, which the greedy search reads instead of solving again (see
    :meth:`SelectionReport.errors`); an error does not depend on which other candidates were tried (up to the
    iterative solvers' tolerance at large degrees), so the choice is the one the search would make without them.
    """
    ndim = stats.ndim
    lmax = max(degrees)
    if lmax > stats.max_degree:
        raise ValueError(f"The degree {lmax} is above the statistics' cap max_degree={stats.max_degree}; build the "
                         f"statistics with a larger max_degree.")
    if search not in SEARCHES:
        raise ValueError(f"The 'search' parameter must be one of {SEARCHES}. Got {search!r} instead.")
    stats = stats.truncate(lmax) if lmax < stats.max_degree else stats
    M_tot, Z_tot = stats.M.sum(axis=0), stats.Z.sum(axis=0)
    n_tot = stats.count.sum()
    # a split needs rows on both sides; identical rows added chunk by chunk (SufficientStats.update) share a fold
    # (their hash is equal), so with few distinct rows some folds can be empty or hold everything
    splits = [f for f in stats.splits if 0 < stats.count[f] < n_tot] if select else []
    cv = np.full((len(degrees), len(alphas)), np.nan)
    if select and not splits:  # nothing to validate on: the most conservative candidate, said in the report
        degree, alpha = min(degrees), max(alphas)
        method = "none (too few distinct rows for any split: smallest degree, largest ridge)"
    elif splits:
        errors = _FoldErrors(stats, splits)
        if search == "greedy":
            start = start_alpha if start_alpha in alphas else None
            cv = _search_greedy(errors, degrees, alphas, start, known)
        else:
            cv = _search_exhaustive(errors, degrees, alphas)
        degree, alpha = _choose(cv, degrees, alphas, errors.floor)
        method = "holdout" if stats.holdout is not None or len(stats.splits) == 1 else "cv"
    else:
        degree, alpha = degrees[0], alphas[0]
        method = "fixed"
    fb = TensorBasis(degree, ndim)
    lw = fb.deg_w
    order = fb.tensor_index
    M_fit = M_tot[: 2 * degree + 1, : 2 * lw + 1]
    factor = _Permuted(_Float64Factor(M_fit, degree, lw, alpha), order)
    b = np.stack([response_vector(Zr, fb) for Zr in Z_tot], axis=1)
    beta = None
    if ndim == 2 and fb.size >= _MIXED_FINAL_MIN_SIZE:  # half the time of a float64 Cholesky at d = 7,921
        bt = np.empty_like(b)
        bt[order] = b
        x = _solve_mixed(M_fit, degree, lw, alpha, bt, np.empty((fb.size, fb.size), dtype=np.float32))
        beta = None if x is None else x[order]
    if beta is None:  # small systems, or ones float32 cannot resolve: float64 Cholesky (with its conditioning check)
        beta = factor.solve(b)
    report = SelectionReport(method=method, degrees=tuple(degrees), ridges=tuple(alphas), cv_error=cv,
                             folds=len(splits))
    return FitResult(CalibrationMap(degree, ndim, beta, float(alpha)), factor, report, M_fit)


class _ValidationSplit(SufficientStats):
    """Statistics whose fold 1 is a fixed validation mask (the paper's "val" variant): fold 1 validates."""

    @property
    def splits(self):
        return (1,)


def fit_calibration(mean, var, zs, *, degrees, alphas, folds, holdout, rng, select, classes=None, validation=None,
                    search="greedy"):
    """Fit eta-hat (one column of ``zs`` per response) from in-memory arrays: one chunk of :class:`SufficientStats`.

    ``var`` None means the 1-D (first-order) problem.  ``degrees`` is sorted largest first.  ``classes``, from
    :func:`target_classes`, spares a sort of the targets when they come from integer counts.  ``validation``, a
    boolean mask, selects on those rows (a fixed hold-out split) instead of CV.
    """
    ndim = 1 if var is None else 2
    kind = _ValidationSplit if validation is not None else SufficientStats
    stats = kind(max_degree=max(degrees), ndim=ndim, folds=2 if validation is not None else folds, holdout=holdout,
                 rng=rng)
    stats.add_targets(np.asarray(mean, dtype=float), None if var is None else np.asarray(var, dtype=float),
               np.asarray(zs, dtype=float).reshape(len(mean), -1)[:, : stats.n_responses],
               fold=None if validation is None else np.asarray(validation, dtype=bool).astype(np.intp),
               classes=classes)
    return select_and_fit(stats, degrees=degrees, alphas=alphas, select=select, search=search)
