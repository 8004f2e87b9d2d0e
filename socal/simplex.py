"""Multiclass recalibration: maps from a C-class predictor's scores (mean, covariance) to a recalibrated probability
vector m' and a valid covariance Sigma' (PSD, rows summing to 0, every pair law m'_c m'_d + Sigma'_cd >= 0).

Three maps, fitted on items with votes and checked on others (:func:`evaluate_recalibrated_multiclass`):

* :class:`MulticlassPlatt` (the recommended one), a joint map in two stated steps:

  - the mean: m' = (1 - eps) softmax(a_c log m_c + b_c) + eps pi: a temperature a_c and a bias b_c per class (the
    diagonal form of Dirichlet calibration, Kull et al. 2019; ``degree`` > 1 adds powers of log m_c), mixed with a
    floor eps pi, where pi is the classes' share of the fitting votes (each class given half a vote) and eps in
    [1e-6, 0.5]; all fitted by the votes' multinomial likelihood (a ridge of 1 on the biases).  Every class keeps a
    probability of at least eps pi_c > 0, so no vote is ever given probability 0, and the raw mean mixed with the
    smallest floor (1e-6) is inside the family and is where the fit starts, so the fitted likelihood on the fitting
    votes is never below that;
  - the covariance, in two fitted quantities: its trace, tr Sigma' = S (1 - ``|m'|^2``) with the item's scale
    S = expit(theta_0 + theta_1 logit rho) a function of the raw scores' relative spread rho = tr Sigma /
    (1 - ``|m|^2``) (the members' disagreement as a share of the most a probability vector about m can have), fitted
    by least squares to the votes' unbiased ``|f* - m'|^2`` (every pair of an item's votes, as
    :func:`socal.multiclass.trace_check` counts it); and its split across classes, by class weights g_c: Sigma' =
    k sum_{c<d} m'_c m'_d g_c g_d (e_c - e_d)(e_c - e_d)^T (diagonal k m'_c g_c (G - m'_c g_c), off-diagonal
    -k m'_c m'_d g_c g_d, G = sum_d m'_d g_d), k setting the trace, the weights fitted to the votes' per-class
    (f*_c - m'_c)^2 with the trace held (at g = 1 it is the Dirichlet shape S (diag(m') - m' m'^T)).  Each term of
    the sum is PSD with rows summing to 0, and the pair law is m'_c m'_d (1 - k g_c g_d) > 0 for c != d because k
    is capped at (1 - 1e-6) / (g_(1) g_(2)) (which also keeps each variance below m'(1 - m')): the output is valid
    by construction, with no projection after the fit, so nothing the fit calibrated is moved afterwards.

* :class:`TemperatureScaling`, the anchor users try first: one temperature on the mean and one scale s on the same
  Dirichlet shape (two parameters: T and s).
* :class:`ClasswisePlatt`, one :class:`socal.SecondOrderPlatt` per class on the perturbed class scores, then
  :func:`project_simplex_covariance` (the class means divided by their sum; one scale on the Dirichlet shape).  Each
  class's map is calibrated on its own, but the projection redistributes the trace across classes and a class whose
  map reads 0 keeps probability 0; kept for comparison and for files written before 2026-12-06.

Why a joint map rather than class-wise maps and a projection: a projection onto the simplex must change the class
means (they do not sum to 1) and cannot keep both each class's variance and a valid covariance (a covariance with
rows summing to 0 and negative correlations needs every class's variance below the others' sum); the joint map is
fitted on the quantities that are finally reported, so what it calibrates is what the user gets.  docs/multiclass.md
compares the three on held-out real data.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._typing import ArrayLike, Seed
from ._validation import check_array, check_rng
from .multiclass import (MulticlassTest, TraceCheck, check_multiclass_scores, class_counts, multiclass_input,
                         multiclass_test, trace_check)
from .tables import Tabular

__all__ = ["MulticlassPlatt", "TemperatureScaling", "ClasswisePlatt", "project_simplex_covariance",
           "RecalibratedMulticlass", "evaluate_recalibrated_multiclass", "log_loss", "trace_by_thirds", "pair_spread", "class_spread", "FORMAT", "FORMAT_VERSION"]

FORMAT = "socal.multiclass-recalibrator"
FORMAT_VERSION = 2  # 1: socal before 2026-12-06, the class-wise maps (read by ClasswisePlatt)
LOG_FLOOR = 1e-12  # log m is read as log max(m, 1e-12): a member's exact 0 stays finite
S_MAX = 1.0 - 1e-6  # the covariance scale's ceiling: every pair law m'_c m'_d (1 - S) stays > 0
EPS_RANGE = (1e-6, 0.5)  # the floor's weight
MIN_CLASS_VOTES = 1000  # a class's covariance weight is fitted from at least this many fitting votes (else g = 1)
_FULL_COV_BYTES = 2**30  # transform refuses an (n, C, C) output above 1 GiB: pass diagonal=True


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _expit(x):
    from scipy.special import expit

    return expit(x)


def _scores(mean, cov, func):
    """(m (n, C), v (n, C), rho (n,)): validated scores, members (n, M, C) with ``cov`` None read by
    :func:`socal.from_members` (diagonal), and the relative spread rho = sum_c v_c / (1 - ``|m|^2``) in [1e-9, 1 - 1e-9].
    """
    multi = multiclass_input(mean, cov)
    if multi is None:
        raise ValueError(f"The 'mean' parameter of {func} must be (n, C) class probabilities with 'cov' (n, C, C) or "
                         f"(n, C) class variances, or members' probabilities (n, M, C) with 'cov' None; binary scores "
                         f"go to socal.SecondOrderPlatt.")
    m, _, v = check_multiclass_scores(*multi, func)
    q = np.einsum("ij,ij->i", m, 1.0 - m)  # 1 - |m|^2 as sum_c m_c (1 - m_c): no cancellation near a vertex
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(q > 0, v.sum(axis=1) / np.where(q > 0, q, 1.0), 0.0)
    return m, v, np.clip(rho, 1e-9, 1 - 1e-9)


def class_spread(m, A):
    """(n, C) the votes' unbiased estimate of (f*_c - m_c)^2 per item and class: a_c (a_c - 1) / (K (K - 1))
    - 2 m_c a_c / K + m_c^2 (K >= 2 votes; two votes of an item are both c with probability f*_c^2)."""
    K = A.sum(axis=1, keepdims=True)
    return A * (A - 1) / (K * (K - 1)) - 2 * m * A / K + m ** 2


def pair_spread(m, A):
    """(n,) the votes' unbiased estimate of ``|f* - m|^2`` per item: :func:`class_spread` summed over the classes
    (two votes of an item agree with probability ``|f*|^2``)."""
    return class_spread(m, A).sum(axis=1)


def log_loss(mean: ArrayLike, labels: ArrayLike | None = None, *, counts: ArrayLike | None = None) -> float:
    """The votes' log loss per vote, -sum_i sum_c a_ic log m_ic / sum_i K_i (natural log; inf where a vote falls on
    a class given probability 0)."""
    m = check_array(mean, "mean", "log_loss", ndim=2, lo=0.0, hi=1.0, clip_edges=True)
    A = class_counts(labels, counts, m.shape[0], m.shape[1], "log_loss")
    with np.errstate(divide="ignore"):
        terms = np.where(A > 0, A * np.log(np.where(A > 0, m, 1.0)), 0.0)
    return float(-terms.sum() / A.sum())


# -- the two steps of the joint map ----------------------------------------------------------------------------
def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _features(L, lo, degree):
    """(D, n, C) features of the mean step: log m, then (clip(log m, lo_c, 0))^k / s^(k-1) for k = 2..D
    (s = max(1, max_c ``|lo_c|``): every feature within the first one's range; clipped at the fitting data's smallest
    log m per class, so a mean below every fitted one is extrapolated by the linear term only)."""
    s = max(1.0, float(np.max(np.abs(lo))))
    Lc = np.clip(L, lo, 0.0)
    return [L] + [Lc ** k / s ** (k - 1) for k in range(2, degree + 1)]


def _mean_map(L, beta, b, eps, prior, lo):
    """(1 - eps) softmax(sum_k beta_k phi_k(L) + b) + eps prior, L = log max(m, LOG_FLOOR)."""
    z = b + sum(bk * f for bk, f in zip(beta, _features(L, lo, len(beta))))
    p = _softmax(z)
    return (1 - eps) * p + eps * prior if eps > 0 else p


def _fit_mean(L, A, *, per_class, biases, floor, ridge, degree):
    """(beta (D, C), b (C,), eps, prior, lo (C,)) maximising the votes' multinomial likelihood with a ridge
    ``ridge`` on b and on the terms beyond the linear one, by L-BFGS-B from the identity (beta_1 = 1, the rest 0,
    eps at its lower bound); the objective is convex in (beta, b) at eps = 0.  The result is never worse than the
    identity's on the fitting votes (the start is kept if the optimiser ends above it)."""
    from scipy import optimize

    n, C = L.shape
    N = A.sum()
    prior = (A.sum(axis=0) + 0.5) / (N + 0.5 * C)
    lo = L.min(axis=0)
    phi = _features(L, lo, degree)
    D = len(phi)
    width = C if per_class else 1
    nbeta = D * width
    nb = C if biases else 0

    def unpack(th):
        beta = th[:nbeta].reshape(D, width)
        b = th[nbeta:nbeta + nb] if biases else np.zeros(C)
        eps = float(_expit(th[-1])) if floor else 0.0
        return beta, b, eps

    def objective(th):
        beta, b, eps = unpack(th)
        p = _softmax(b + sum(bk * f for bk, f in zip(beta, phi)))
        q = (1 - eps) * p + eps * prior
        r = A / q
        f = -(A * np.log(q)).sum() + 0.5 * ridge * float((b ** 2).sum() + (beta[1:] ** 2).sum())
        gp = -(1 - eps) * r  # d f / d p
        gz = p * (gp - (gp * p).sum(axis=1, keepdims=True))
        gbeta = np.stack([(gz * fk).sum(axis=0) if per_class else np.array([(gz * fk).sum()]) for fk in phi])
        gbeta[1:] += ridge * beta[1:]
        grad = [gbeta.ravel()]
        if biases:
            grad.append(gz.sum(axis=0) + ridge * b)
        if floor:
            grad.append(np.array([-(r * (prior - p)).sum() * eps * (1 - eps)]))
        return f / N, np.concatenate(grad) / N

    elo, ehi = (float(_logit(EPS_RANGE[0])), float(_logit(EPS_RANGE[1])))
    beta0 = np.zeros((D, width))
    beta0[0] = 1.0
    th0 = np.concatenate([beta0.ravel(), np.zeros(nb), [elo] if floor else []])
    bounds = ([(1e-3, 1e3)] * width + [(None, None)] * (nbeta - width) + [(None, None)] * nb
              + ([(elo, ehi)] if floor else []))
    res = optimize.minimize(objective, th0, jac=True, method="L-BFGS-B", bounds=bounds,
                            options={"maxiter": 2000, "ftol": 1e-13, "gtol": 1e-9})
    th = res.x if res.fun <= objective(th0)[0] else th0  # never worse than the identity on the fitting votes
    beta, b, eps = unpack(th)
    return np.broadcast_to(beta, (D, C)).copy(), np.asarray(b, dtype=float).copy(), eps, prior, lo


def _shape(mp, g):
    """(h (n, C), G (n,)): h_c = m_c g_c (G - m_c g_c), G = sum_d m_d g_d: the class variances at scale 1."""
    mg = mp * g
    G = mg.sum(axis=1)
    rest = G[:, None] - mg  # sum_{d != c} m_d g_d; for the largest term, summed without it (no cancellation)
    rows, top = np.arange(len(mg)), np.argmax(mg, axis=1)
    big = mg[rows, top].copy()
    mg[rows, top] = 0.0
    rest[rows, top] = mg.sum(axis=1)
    mg[rows, top] = big
    return mg * rest, G


def _fit_scale(U, mp, x, *, slope, weights, class_votes=None):
    """(theta (2,), g (C,)) of the covariance of :func:`_cov`, in two steps:

    1. the trace: S = expit(theta_0 + theta_1 x) by least squares of the votes' sum over classes of
       (f*_c - m_c)^2 (``U`` (n, C) summed) on S (1 - ``|m|^2``) (the Dirichlet trace); ``slope`` False: theta_1 = 0,
       S the closed-form constant;
    2. the split across classes (``weights``): the class weights g set each class's share h_c(g) / sum_d h_d(g) of
       that trace (h of :func:`_shape`), by least squares of the votes' per-class (f*_c - m_c)^2 on S (1 - ``|m|^2``)
       times the share, theta held.  The weights move variance between classes and leave each item's trace as
       step 1 set it, so the trace's calibration (by thirds of tr Sigma', docs/multiclass.md) is not traded for the
       classes'.  A class's weight is fitted only from at least :data:`MIN_CLASS_VOTES` fitting votes (else 1)."""
    from scipy import optimize

    n, C = mp.shape
    D = np.einsum("ij,ij->i", mp, 1.0 - mp)  # 1 - |m|^2 without cancellation near a vertex
    Ut = U.sum(axis=1)
    tot = float(D.sum())
    s0 = float(np.clip(Ut.sum() / tot if tot > 0 else 0.5, 1e-6, 0.5))
    theta = np.array([float(_logit(s0)), 0.0])
    if slope:
        def resid(th):
            return np.minimum(_expit(th[0] + th[1] * x), S_MAX) * D - Ut

        def jac(th):
            sv = _expit(th[0] + th[1] * x)
            d = sv * (1 - sv) * D
            return np.column_stack([d, d * x])

        theta = optimize.least_squares(resid, theta, jac=jac, bounds=([-40.0, -10.0], [40.0, 10.0])).x
    free = np.ones(C, bool) if class_votes is None else np.asarray(class_votes) >= MIN_CLASS_VOTES
    if not weights or free.sum() < 1:
        return theta, np.ones(C)
    SD = np.minimum(_expit(theta[0] + theta[1] * x), S_MAX) * D  # each item's trace, held
    scale = 1.0 / max(float((U ** 2).sum()), 1e-300)

    def objective(gam):
        g = np.exp(gam)
        h, G = _shape(mp, g)
        T = h.sum(axis=1)
        T = np.where(T > 0, T, 1.0)
        r = SD[:, None] * h / T[:, None] - U
        f = float((r ** 2).sum())
        R = 2 * r * SD[:, None]
        Q = R / T[:, None] - ((R * h).sum(axis=1) / T ** 2)[:, None]  # d f / d h through the share
        mg = mp * g
        gg = (Q * mp * (G[:, None] - 2 * mg)).sum(axis=0) + (mp * (Q * mg).sum(axis=1, keepdims=True)).sum(axis=0)
        pin = float(gam.sum())  # the shares ignore a common factor of g: pin the log weights' sum at 0
        return (f + pin ** 2 / scale) * scale, (gg * g + 2 * pin / scale) * scale

    bounds = [(-5.0, 5.0) if f else (0.0, 0.0) for f in free]
    res = optimize.minimize(objective, np.zeros(C), jac=True, method="L-BFGS-B", bounds=bounds,
                            options={"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-10})
    return theta, np.exp(res.x)


def _cov(mp, g, S, diagonal):
    """Sigma = k sum_{c<d} m_c m_d g_c g_d (e_c - e_d)(e_c - e_d)^T: diagonal k m_c g_c (G - m_c g_c), off-diagonal
    -k m_c m_d g_c g_d (G = sum_d m_d g_d), with k = S (1 - ``|m|^2``) / T, T = sum_c m_c g_c (G - m_c g_c), so that
    tr Sigma = S (1 - ``|m|^2``) whatever g (at g = 1, k = S and Sigma is the Dirichlet shape S (diag(m) - m m^T)).
    PSD (a sum of PSD terms with weights >= 0), rows summing to 0 (each term's do); k is capped at
    (1 - 1e-6) / (g_(1) g_(2)), so the pair law m_c m_d + Sigma_cd = m_c m_d (1 - k g_c g_d) > 0 for c != d (and each
    variance stays below m (1 - m)); where the cap binds, the trace is below S (1 - ``|m|^2``)."""
    h, _ = _shape(mp, g)
    T = h.sum(axis=1)
    D = np.einsum("ij,ij->i", mp, 1.0 - mp)  # 1 - |m|^2 without cancellation near a vertex
    top = np.sort(g)[-2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(T > 0, S * D / np.where(T > 0, T, 1.0), 0.0)
    k = np.minimum(k, S_MAX / (top[0] * top[1]))
    diag = k[:, None] * h
    if diagonal:
        return diag
    mg = mp * g
    cov = -k[:, None, None] * (mg[:, :, None] * mg[:, None, :])
    C = mp.shape[1]
    cov[:, np.arange(C), np.arange(C)] = diag  # the diagonal summed from the off-diagonal terms: rows sum to 0
    return cov


# -- persistence shared by the three maps -------------------------------------------------------------------------
class _SimplexMap:
    """Fitted-state checks, save and load shared by the multiclass recalibrators."""

    _fitted_attr = "n_samples_fit_"

    def _check_fitted(self):
        if not hasattr(self, self._fitted_attr):
            from .recalibrate import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} is not fitted yet: call fit first.")

    def save(self, file: str | os.PathLike) -> None:
        """Write :meth:`to_dict` as JSON, atomically (:mod:`socal.files`); JSON, so loading never runs code."""
        from .files import write_text_atomic

        try:
            write_text_atomic(file, json.dumps(self.to_dict(), indent=1))
        except OSError as exc:
            raise ValueError(f"{type(self).__name__}.save: {os.fspath(file)} cannot be written "
                             f"({exc.strerror or exc}).") from None

    @classmethod
    def load(cls, file: str | os.PathLike) -> Any:
        """Read what :meth:`save` wrote, checked field by field (:meth:`from_dict`); a file that cannot be read or
        is not JSON is a ValueError naming it."""
        where = f"{cls.__name__}.load"
        try:
            with open(file, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{where}: {os.fspath(file)} cannot be read as a saved recalibrator ({exc}).") from None
        try:
            d = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{where}: {os.fspath(file)} is not a saved recalibrator (not JSON: {exc}; a cut "
                             f"file?).") from None
        return cls.from_dict(d)

    @classmethod
    def _head(cls, d, versions=(FORMAT_VERSION,)):
        where = f"{cls.__name__}.from_dict"
        if not isinstance(d, dict):
            raise ValueError(f"{where} needs a dict (what {cls.__name__}.to_dict gave). Got {type(d).__name__}.")
        if d.get("format") != FORMAT:
            raise ValueError(f"The field 'format' of {where} must be {FORMAT!r}. Got {d.get('format')!r} instead.")
        if d.get("version") not in versions or isinstance(d.get("version"), bool):
            hint = ("a file of the class-wise maps, written before 2026-12-06: ClasswisePlatt.load reads it"
                    if d.get("version") == 1 else "written by another socal; refit the map")
            raise ValueError(f"The field 'version' of {where} must be one of {list(versions)} (the formats this socal "
                             f"reads). Got {d.get('version')!r} instead: {hint}.")
        return where


def _vector(d, key, where, C, lo=-np.inf, hi=np.inf):
    x = d.get(key)
    ok = isinstance(x, list) and len(x) == C and all(isinstance(e, (int, float)) and not isinstance(e, bool)
                                                     for e in x)
    arr = np.asarray(x, dtype=float) if ok else None
    if not ok or not np.all(np.isfinite(arr)) or np.any(arr < lo) or np.any(arr > hi):
        raise ValueError(f"The field '{key}' of {where} must be a list of {C} finite numbers in [{lo}, {hi}]. Got "
                         f"{x!r:.80} instead.")
    return arr


def _number(d, key, where, lo, hi):
    x = d.get(key)
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not np.isfinite(x) or not lo <= x <= hi:
        raise ValueError(f"The field '{key}' of {where} must be a number in [{lo}, {hi}]. Got {x!r} instead.")
    return float(x)


def _count(d, key, where, lo):
    x = d.get(key)
    if isinstance(x, bool) or not isinstance(x, int) or x < lo:
        raise ValueError(f"The field '{key}' of {where} must be an int >= {lo}. Got {x!r} instead.")
    return x


class _JointBase(_SimplexMap):
    """The mean step and the covariance step, shared by :class:`MulticlassPlatt` and :class:`TemperatureScaling`."""

    _per_class = True
    _biases = True
    _floor = True
    _slope = True
    _weights = True

    def __init__(self, *, degree: int = 1, ridge: float = 1.0) -> None:
        self.degree = degree
        self.ridge = ridge

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters (scikit-learn's convention)."""
        return {"degree": self.degree, "ridge": self.ridge}

    def _check_params(self):
        name = type(self).__name__
        d, r = self.degree, self.ridge
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6:
            raise ValueError(f"The 'degree' parameter of {name} must be an int in [1, 6] (the terms in log m of the "
                             f"mean step). Got {d!r} instead.")
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not np.isfinite(r) or not 0 <= r <= 1e6:
            raise ValueError(f"The 'ridge' parameter of {name} must be a number in [0, 1e6]. Got {r!r} instead.")

    def fit(self, mean: ArrayLike, cov: ArrayLike | None = None, labels: ArrayLike | None = None, *,
            counts: ArrayLike | None = None) -> _JointBase:
        """Fit on items' scores (``mean`` (n, C) with ``cov`` (n, C, C) or class variances (n, C), or members'
        probabilities (n, M, C) with ``cov`` None) and their votes (``labels`` (n, k), -1 missing, or ``counts``
        (n, C); at least 2 votes per item).  The mean step first (the votes' likelihood), then the covariance step
        on the recalibrated means (least squares of the votes' (f*_c - m'_c)^2)."""
        func = f"{type(self).__name__}.fit"
        self._check_params()
        m, v, rho = _scores(mean, cov, func)
        A = class_counts(labels, counts, m.shape[0], m.shape[1], func)
        L = np.log(np.maximum(m, LOG_FLOOR))
        degree = int(self.degree) if self._per_class else 1
        self.beta_, self.b_, self.eps_, self.prior_, self.lo_ = _fit_mean(
            L, A, per_class=self._per_class, biases=self._biases, floor=self._floor, ridge=float(self.ridge),
            degree=degree)
        mp = _mean_map(L, self.beta_, self.b_, self.eps_, self.prior_, self.lo_)
        self.theta_, self.g_ = _fit_scale(class_spread(mp, A), mp, _logit(rho), slope=self._slope,
                                          weights=self._weights, class_votes=A.sum(axis=0))
        self.n_classes_ = m.shape[1]
        self.n_samples_fit_ = m.shape[0]
        return self

    def scale(self, rho: ArrayLike) -> np.ndarray:
        """S(rho) = expit(theta_0 + theta_1 logit rho), at most 1 - 1e-6: the covariance's trace is S (1 - ``|m'|^2``)
        at relative spread rho (less where the pair-law cap of :func:`_cov` binds)."""
        self._check_fitted()
        x = _logit(np.clip(np.asarray(rho, dtype=float), 1e-9, 1 - 1e-9))
        return np.minimum(_expit(self.theta_[0] + self.theta_[1] * x), S_MAX)

    def transform(self, mean: ArrayLike, cov: ArrayLike | None = None, *,
                  diagonal: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(m' (n, C), Sigma' (n, C, C)) for the items' scores (as :meth:`fit` takes them); ``diagonal=True``
        returns the class variances (n, C) instead of the covariance (needed where n C^2 floats exceed 1 GiB)."""
        self._check_fitted()
        func = f"{type(self).__name__}.transform"
        m, v, rho = _scores(mean, cov, func)
        if m.shape[1] != self.n_classes_:
            raise ValueError(f"The 'mean' parameter of {func} must have the {self.n_classes_} classes the map was "
                             f"fitted on. Got {m.shape[1]}.")
        n, C = m.shape
        if not diagonal and 8 * n * C * C > _FULL_COV_BYTES:
            raise ValueError(f"{func} would return an (n, C, C) covariance of {8 * n * C * C / 2**30:.1f} GiB (n = "
                             f"{n:,}, C = {C:,}), above 1 GiB; pass diagonal=True for the class variances (n, C), "
                             f"all the multiclass verdict reads.")
        mp = _mean_map(np.log(np.maximum(m, LOG_FLOOR)), self.beta_, self.b_, self.eps_, self.prior_, self.lo_)
        return mp, _cov(mp, self.g_, self.scale(rho), diagonal)

    def to_dict(self) -> dict:
        """The fitted parameters as JSON-safe values; :meth:`from_dict` rebuilds a map with bit-identical output."""
        self._check_fitted()
        return {"format": FORMAT, "version": FORMAT_VERSION, "class": type(self).__name__,
                "params": self.get_params(), "n_classes": self.n_classes_, "n_samples_fit": self.n_samples_fit_,
                "beta": self.beta_.tolist(), "b": self.b_.tolist(), "eps": self.eps_, "prior": self.prior_.tolist(),
                "lo": self.lo_.tolist(), "theta": self.theta_.tolist(), "g": self.g_.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> _JointBase:
        """Rebuild from :meth:`to_dict`'s output after checking every field (a ValueError names the one at
        fault)."""
        where = cls._head(d)
        if d.get("class") != cls.__name__:
            hint = " (a file of the class-wise maps: ClasswisePlatt.load)" if d.get("class") is None else ""
            raise ValueError(f"The field 'class' of {where} must be {cls.__name__!r}. Got {d.get('class')!r} "
                             f"instead{hint}.")
        params = d.get("params")
        keys = sorted(cls().get_params())
        if not isinstance(params, dict) or sorted(params) != keys:
            raise ValueError(f"The field 'params' of {where} must be a dict with the keys {keys}. Got "
                             f"{params!r:.80}.")
        obj = cls(**params)
        try:
            obj._check_params()
        except ValueError as exc:
            raise ValueError(f"The field 'params' of {where}: {exc}") from None
        C = _count(d, "n_classes", where, 3)
        obj.n_classes_ = C
        obj.n_samples_fit_ = _count(d, "n_samples_fit", where, 1)
        beta = d.get("beta")
        D = int(obj.degree) if cls._per_class else 1
        if not isinstance(beta, list) or len(beta) != D:
            raise ValueError(f"The field 'beta' of {where} must be a list of {D} lists of {C} numbers. Got "
                             f"{beta!r:.80}.")
        obj.beta_ = np.stack([_vector({"beta": row}, "beta", where, C, *((1e-3, 1e3) if k == 0 else ()))
                              for k, row in enumerate(beta)])
        obj.b_ = _vector(d, "b", where, C)
        obj.eps_ = _number(d, "eps", where, 0.0, EPS_RANGE[1])
        obj.prior_ = _vector(d, "prior", where, C, 0.0, 1.0)
        if abs(obj.prior_.sum() - 1) > 1e-9:
            raise ValueError(f"The field 'prior' of {where} must sum to 1. Got {obj.prior_.sum():.6g}.")
        obj.lo_ = _vector(d, "lo", where, C, float(np.log(LOG_FLOOR)), 0.0)
        obj.theta_ = _vector(d, "theta", where, 2, -40.0, 40.0)
        obj.g_ = _vector(d, "g", where, C, float(np.exp(-5.0)), float(np.exp(5.0)))
        return obj


class MulticlassPlatt(_JointBase):
    """Multiclass recalibration by a joint map: per-class temperature, bias and a floor on the mean; a
    Dirichlet-family covariance with class weights and a fitted, spread-dependent scale (the module docstring gives
    the rule and why it is valid).

    Parameters
    ----------
    degree : int in [1, 6], default 1
        The terms in log m_c of the mean step: 1 is a temperature and a bias per class; more add powers of log m_c
        (measured on the real ensembles of docs/multiclass.md, degree 3 did not pass more of their tests).
    ridge : float, default 1.0
        The ridge on the class biases and the higher terms (a N(0, 1/ridge) prior): keeps a class with few votes
        near its raw mean.

    Attributes
    ----------
    beta_ : ndarray (degree, C)
        The mean step's coefficients: ``beta_[0]`` the temperatures (multipliers of log m_c), the rest the higher
        terms.
    b_ : ndarray (C,)
        The biases.
    eps_ : float
        The floor's weight; every class keeps probability >= ``eps_ * prior_[c]``.
    prior_ : ndarray (C,)
        The classes' share of the fitting votes, each class given half a vote.
    lo_ : ndarray (C,)
        The fitting data's smallest log m per class (the higher terms are clipped there).
    theta_ : ndarray (2,)
        The covariance scale S = expit(theta_0 + theta_1 logit rho) (:meth:`scale`): tr Sigma' = S (1 - ``|m'|^2``).
    g_ : ndarray (C,)
        The class weights of the covariance: each class's share of the trace (log weights summing to about 0; 1 for
        a class with fewer than :data:`MIN_CLASS_VOTES` fitting votes).

    Examples
    --------
    >>> import numpy as np, socal
    >>> from socal.simplex import MulticlassPlatt, evaluate_recalibrated_multiclass
    >>> pop = socal.synthetic.DirichletEnsemble(C=4, kind="tempered")  # the truth sharper than the means say
    >>> m, cov, counts = pop.sample(4000, k=5, counts=True, rng=0)
    >>> fit = MulticlassPlatt().fit(m[:2000], cov[:2000], counts=counts[:2000])
    >>> m2, cov2 = fit.transform(m[2000:], cov[2000:])
    >>> bool(np.allclose(m2.sum(axis=1), 1) and m2.min() > 0 and np.allclose(cov2.sum(axis=2), 0))
    True
    >>> ev = evaluate_recalibrated_multiclass(fit, m[2000:], cov[2000:], counts=counts[2000:])
    >>> ev.log_loss_after < ev.log_loss_before, ev.verdict
    (True, 'not rejected')
    """


class TemperatureScaling(_JointBase):
    """The anchor: one temperature on the mean (m' = softmax(log m / T)) and one scale s on a Dirichlet-shaped
    covariance (Sigma' = s (diag(m') - m' m'^T), s = the votes' sum of ``|f* - m'|^2`` over sum of 1 - ``|m'|^2``, in
    (0, 1 - 1e-6]): two parameters, what users try first.  ``beta_[0]`` holds 1 / T for every class."""

    _per_class = False
    _biases = False
    _floor = False
    _slope = False
    _weights = False

    def __init__(self, *, ridge: float = 1.0) -> None:
        super().__init__(degree=1, ridge=ridge)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters (scikit-learn's convention)."""
        return {"ridge": self.ridge}

    @property
    def temperature_(self) -> float:
        """T = 1 / a: above 1 the means were softened, below 1 sharpened."""
        self._check_fitted()
        return float(1.0 / self.beta_[0, 0])


# -- the class-wise maps and their projection (kept for comparison) -------------------------------------------------
def project_simplex_covariance(m, v):
    """The stated projection of class-wise (m', var') onto a probability vector and a covariance: the means divided
    by their sum; the covariance s (diag(m) - m m^T), the form of a Dirichlet's, with s = sum_c var'_c /
    sum_c m_c (1 - m_c) clipped to [0, 1], so that its trace is the class variances' sum.  diag(m) - m m^T is PSD
    with rows summing to 0 for m in the simplex, so the output is a valid (mean, covariance).  It redistributes the
    trace across classes (each class gets s m_c (1 - m_c)), and a class mean of 0 stays 0."""
    m = np.clip(np.asarray(m, dtype=float), 0.0, None)
    tot = m.sum(axis=1, keepdims=True)
    m = np.where(tot > 0, m / np.where(tot > 0, tot, 1.0), 1.0 / m.shape[1])
    q = (m * (1 - m)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tiny q: s is clipped to 1 below
        s = np.where(q > 0, np.asarray(v, dtype=float).sum(axis=1) / np.where(q > 0, q, 1.0), 0.0)
    s = np.clip(s, 0.0, 1.0)
    cov = s[:, None, None] * (m[:, :, None] * np.eye(m.shape[1])[None] - m[:, :, None] * m[:, None, :])
    return m, cov


class ClasswisePlatt(_SimplexMap):
    """One :class:`socal.SecondOrderPlatt` per class (one against the rest) on the perturbed class scores
    (:attr:`socal.multiclass.MulticlassEvaluation.mean`, ``.var``), then :func:`project_simplex_covariance`.
    ``transform(..., project=False)`` gives the class maps' own (mean, var) (n, C) each, not a valid multiclass
    output, for comparison.  Before 2026-12-06 this was ``socal.multiclass.MulticlassPlatt``; its files (format
    version 1) load here.

    Attributes
    ----------
    maps_ : list of socal.SecondOrderPlatt
        One fitted map per class, in class order, each with the keyword arguments given here (one ``h`` for every
        class: pass the h the class scores were perturbed at).
    """

    _fitted_attr = "maps_"

    def __init__(self, **platt_kwargs: Any) -> None:
        self.platt_kwargs = platt_kwargs

    def fit(self, mean, var, labels=None, *, counts=None) -> ClasswisePlatt:
        """Fit one map per class on the perturbed scores and the class votes."""
        from .recalibrate import SecondOrderPlatt

        func = "ClasswisePlatt.fit"
        m = check_array(mean, "mean", func, ndim=2, lo=0.0, hi=1.0, clip_edges=True)
        v = check_array(var, "var", func, ndim=2, lo=0.0, hi=0.25, clip_edges=True)
        if v.shape != m.shape:
            raise ValueError(f"The 'var' parameter of {func} must have the shape of 'mean' {m.shape}. Got {v.shape}.")
        A = class_counts(labels, counts, m.shape[0], m.shape[1], func)
        K = A.sum(axis=1)
        self.maps_ = [SecondOrderPlatt(**self.platt_kwargs).fit(m[:, c], v[:, c], counts=(A[:, c], K))
                      for c in range(m.shape[1])]
        return self

    def transform(self, mean, var, *, project: bool = True):
        """(mean (n, C), cov (n, C, C)): each class's map, then the projection (``project=False``: the maps' own
        (mean, var), each (n, C))."""
        self._check_fitted()
        m = np.asarray(mean, dtype=float)
        v = np.asarray(var, dtype=float)
        if m.ndim != 2 or m.shape[1] != len(self.maps_) or v.shape != m.shape:
            raise ValueError(f"The 'mean' and 'var' parameters of ClasswisePlatt.transform must be (n, "
                             f"{len(self.maps_)}) arrays. Got shapes {m.shape} and {v.shape}.")
        out = [mp.transform(m[:, c], v[:, c]) for c, mp in enumerate(self.maps_)]
        mean2, var2 = np.column_stack([o[0] for o in out]), np.column_stack([o[1] for o in out])
        return project_simplex_covariance(mean2, var2) if project else (mean2, var2)

    def to_dict(self) -> dict:
        """The fitted maps as JSON-safe values."""
        self._check_fitted()
        return {"format": FORMAT, "version": FORMAT_VERSION, "class": "ClasswisePlatt",
                "classes": [mp.to_dict() for mp in self.maps_]}

    @classmethod
    def from_dict(cls, d: dict) -> ClasswisePlatt:
        """Rebuild what :meth:`to_dict` gave (each class's map checked as SecondOrderPlatt.from_dict checks it);
        reads format version 1 too."""
        from .recalibrate import SecondOrderPlatt

        where = cls._head(d, versions=(1, FORMAT_VERSION))
        if d["version"] == FORMAT_VERSION and d.get("class") != "ClasswisePlatt":
            raise ValueError(f"The field 'class' of {where} must be 'ClasswisePlatt'. Got {d.get('class')!r} instead.")
        maps = d.get("classes")
        if not isinstance(maps, list) or len(maps) < 3:
            raise ValueError(f"The field 'classes' of {where} must be a list of at least 3 saved class maps. Got "
                             f"{type(maps).__name__}{'' if not isinstance(maps, list) else f' of {len(maps)}'}.")
        obj = cls()
        obj.maps_ = [SecondOrderPlatt.from_dict(x) for x in maps]
        return obj


# -- checking a recalibrated predictor on held-out items ------------------------------------------------------------
@dataclass(frozen=True)
class RecalibratedMulticlass(Tabular):
    """What :func:`evaluate_recalibrated_multiclass` found on held-out items: the multiclass verdict on the
    recalibrated (m', Sigma'), the direct trace check, each class's CE2 (reference 0), and the log loss per vote
    before and after.

    Attributes
    ----------
    test : MulticlassTest
    trace : TraceCheck
    ce2 : tuple of socal.CalibrationError (or None where not estimated)
    ce2_notes : tuple of str
        Per class, why its CE2 was not estimated (socal.ce2's refusal, e.g. too few items for any degree), or ''.
    log_loss_before, log_loss_after : float
    names : tuple of str
    trace_thirds : tuple of 3 floats
        The votes' mean ``|f* - m'|^2`` over the mean tr Sigma' in each third of the items ordered by tr Sigma'
        (:func:`trace_by_thirds`).
    """

    test: MulticlassTest
    trace: TraceCheck
    ce2: tuple = field(repr=False)
    log_loss_before: float
    log_loss_after: float
    names: tuple = ()
    recalibrator: str = ""
    trace_thirds: tuple = ()
    ce2_notes: tuple = ()

    @property
    def verdict(self) -> str:
        """'rejected' or 'not rejected' at the test's level."""
        return "rejected" if self.test.pvalue <= self.test.alpha else "not rejected"

    def summary(self) -> str:
        """The verdict, the log loss and the trace in words, the test's parts, and each class's CE2."""
        lines = [f"{self.recalibrator or 'Recalibrated predictor'} on held-out items: "
                 f"{self.verdict} at level {self.test.alpha:g} (p = {self.test.pvalue:.2g})",
                 f"Log loss per vote: {self.log_loss_before:.4f} (raw mean) -> {self.log_loss_after:.4f}",
                 f"Votes' E|f* - m'|^2 = {self.trace.observed:.3g} against E tr Sigma' = {self.trace.reported:.3g} "
                 f"(ratio {self.trace.factor:.3g}; by thirds of tr Sigma', low to high: "
                 f"{', '.join(f'{x:.3g}' for x in self.trace_thirds)})", "", self.test.summary(names=list(self.names)), "",
                 "CE2 per class on the recalibrated scores (h=None, reference 0; 90% intervals):"]
        width = max(8, max(len(x) for x in self.names) + 1)
        notes = self.ce2_notes or ("",) * len(self.ce2)
        for name, e, note in zip(self.names, self.ce2, notes):
            lines.append(f"  {name:<{width}}" + ((f"not estimated: {note}" if note else "not estimated") if e is None
                                                  else f"{e.estimate:.4f} [{e.ci.low:.4f}, {e.ci.high:.4f}]"))
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def _rows(self):
        notes = self.ce2_notes or ("",) * len(self.ce2)
        return [{"class": name, "ce2": None if e is None else e.estimate, "ce2_low": None if e is None else e.ci.low,
                 "ce2_high": None if e is None else e.ci.high, "ce2_note": note}
                for name, e, note in zip(self.names, self.ce2, notes)]

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        return {"test": self.test.to_dict(), "verdict": self.verdict, "log_loss_before": self.log_loss_before,
                "log_loss_after": self.log_loss_after, "trace_observed": self.trace.observed,
                "trace_reported": self.trace.reported, "names": list(self.names),
                "ce2": [None if e is None else e.to_dict() for e in self.ce2], "ce2_notes": list(self.ce2_notes)}


def trace_by_thirds(mean, cov, counts):
    """(overall, (low, middle, high)): the votes' mean ``|f* - m|^2`` over the mean tr Sigma, overall and in each third
    of the items ordered by tr Sigma (ties kept together by a stable sort); ``cov`` (n, C, C) or (n, C)."""
    m = np.asarray(mean, dtype=float)
    c = np.asarray(cov, dtype=float)
    tr = np.trace(c, axis1=1, axis2=2) if c.ndim == 3 else c.sum(axis=1)
    U = pair_spread(m, np.asarray(counts, dtype=float))
    order = np.argsort(tr, kind="stable")
    parts = np.array_split(order, 3)
    ratio = float(U.mean() / tr.mean()) if tr.mean() > 0 else float("inf")
    return ratio, tuple(float(U[p].mean() / tr[p].mean()) if tr[p].mean() > 0 else float("inf") for p in parts)


def evaluate_recalibrated_multiclass(recalibrator: Any, mean: ArrayLike, cov: ArrayLike | None = None,
                                     labels: ArrayLike | None = None, *, counts: ArrayLike | None = None,
                                     names: Any = None, ci: float = 0.9, rng: Seed = 0,
                                     alpha: float = 0.05) -> RecalibratedMulticlass:
    """Check a fitted multiclass recalibrator on held-out items (never the items it was fitted on): the multiclass
    verdict (:func:`socal.multiclass.multiclass_test`) on its (m', Sigma'), the direct trace check, each class's CE2
    on its recalibrated scores (:func:`socal.ce2` with ``h=None``: the scores are a fitted function of the raw ones,
    evaluated as they are, reference 0), and the log loss per vote of the raw mean and of m'.

    ``recalibrator``: a fitted :class:`MulticlassPlatt` or :class:`TemperatureScaling` (``mean``, ``cov`` as their
    ``transform`` takes them), or a :class:`ClasswisePlatt` (``mean``, ``cov`` the perturbed class scores and
    variances, (n, C) each; its "before" log loss is then that of the perturbed class means divided by their sum).
    ``names`` labels the classes.
    """
    from .estimators import ce2

    func = "evaluate_recalibrated_multiclass"
    if isinstance(recalibrator, ClasswisePlatt):
        m_raw = check_array(mean, "mean", func, ndim=2, lo=0.0, hi=1.0, clip_edges=True)
        m2, cov2 = recalibrator.transform(mean, cov)
        raw = m_raw / np.maximum(m_raw.sum(axis=1, keepdims=True), 1e-300)
    elif isinstance(recalibrator, _JointBase):
        m2, cov2 = recalibrator.transform(mean, cov, diagonal=True)
        raw = _scores(mean, cov, func)[0]
    else:
        raise ValueError(f"The 'recalibrator' parameter of {func} must be a fitted MulticlassPlatt, TemperatureScaling "
                         f"or ClasswisePlatt. Got {type(recalibrator).__name__} instead.")
    n, C = m2.shape
    A = class_counts(labels, counts, n, C, func)
    names = tuple(str(x) for x in (names if names is not None else range(C)))
    if len(names) != C:
        raise ValueError(f"The 'names' parameter of {func} must name the {C} classes. Got {len(names)} names.")
    v2 = np.diagonal(cov2, axis1=1, axis2=2) if cov2.ndim == 3 else cov2
    test = multiclass_test(m2, v2, counts=A, rng=rng, alpha=alpha)
    tc = trace_check(m2, v2, counts=A, names=names)
    K = A.sum(axis=1)
    streams = check_rng(rng, func).spawn(C)
    per, notes = [], []
    for c in range(C):
        try:  # a class socal.ce2 refuses (e.g. too few items for any degree) is reported with its reason
            per.append(ce2(m2[:, c], v2[:, c], counts=(A[:, c], K), h=None, ci=ci, rng=streams[c]))
            notes.append("")
        except ValueError as exc:
            per.append(None)
            notes.append(str(exc))
    return RecalibratedMulticlass(test=test, trace=tc, ce2=tuple(per), ce2_notes=tuple(notes),
                                  log_loss_before=log_loss(raw, counts=A),
                                  log_loss_after=log_loss(m2, counts=A), names=names,
                                  recalibrator=type(recalibrator).__name__,
                                  trace_thirds=trace_by_thirds(m2, v2, A)[1])
