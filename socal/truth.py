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
repeating the computation on panels twice as wide.  That estimate holds while the kernel's scale h spans at least a
tenth of a panel; a narrower h is refused with a ValueError that says how many panels would resolve it (a spike
between the nodes fools both computations alike).  The calibration functions themselves are ratios of kernel
mixtures, computed in logarithms so that they stay finite far from every atom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._typing import ArrayLike
from ._validation import bandwidth_axes, check_array, check_bandwidth, check_int
from .kernels import SechKernel
from .perturb import MEAN_DOMAIN, VAR_DOMAIN

__all__ = ["TruthValue", "discrete_ce2", "discrete_ce1", "discrete_calibration_functions", "calibrated_reference",
           "CalibratedReference"]


@dataclass(frozen=True)
class TruthValue:
    """A computed ground-truth value with an estimate of its numerical error."""

    value: float
    error: float

    def __float__(self):
        return float(self.value)

    def __format__(self, spec):  # f"{t:.4f}" formats the value; an empty spec keeps the repr
        return format(float(self.value), spec) if spec else str(self)


def _gl_panels(lo, hi, panels, order=8):
    x, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(lo, hi, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


MIN_KERNEL_PANELS = 0.1  # the kernel's scale h, in panel widths, below which the quadrature is refused
CE2_PANELS = 512  # discrete_ce2's default panels (calibrated_reference's exact route uses and checks them)


def _check_resolution(func, h, panels, cap, two_axes=True, what="its quadrature"):
    """Refuse a bandwidth narrower than the quadrature resolves: on each axis the kernel's scale h must be at least
    MIN_KERNEL_PANELS of a panel (the mean axis: ``panels`` panels on [0, 1]; the variance axis, with
    ``two_axes``: panels // 2 on [0, 1/4], as :func:`_ce2_once` lays them).

    Why: below it the kernel is a spike between the Gauss-Legendre nodes; the sum misses or multiplies it, and so
    does the sum on panels twice as wide, so the value and its error estimate agree on a wrong number (the toy
    population's CE2 at h = 1e-6 came out 5.9e-9 +- 5.9e-9 against 0.0906, and 0 +- 0 at h = 1e-9).  The error
    estimate is a heuristic either way; from a tenth of a panel up it bounded the actual error in 40 of 42 cases
    (toy population and 40 calibrated atoms, CE1 and CE2, h from 3e-5 to 3e-3 on 128 to 2,048 panels), the two
    misses by a factor 3-4 at errors of 7e-8 and 3e-7; below, in 22 of 28, with misses up to 0.11 on a value of
    0.09 (``python benchmarks/truth_resolution.py``; docs/numbers.md)."""
    h_mean, h_var = bandwidth_axes(h)
    # (name, h on the axis, the panel's width, the panels that would resolve it)
    axes = [("h_mean" if isinstance(h, tuple) else "h", h_mean, 1.0 / panels, MIN_KERNEL_PANELS / h_mean)]
    if two_axes:
        axes.append(("h_var" if isinstance(h, tuple) else "h", h_var, 0.25 / max(panels // 2, 8),
                     2 * 0.25 * MIN_KERNEL_PANELS / h_var))
    need = int(np.ceil(max(n for *_, n in axes) * (1.0 - 1e-12)))  # (1e-12: round-off, 100000.00000000001)
    for name, value, width, _ in axes:
        if value < MIN_KERNEL_PANELS * width:
            if cap is None:  # the panels are not the caller's to choose
                fix = "Use a larger h."
            elif need <= cap:
                fix = f"Pass panels >= {need} (the cost grows with it) or a larger h."
            else:
                fix = f"That takes panels >= {need}, beyond this function's {cap}: use a larger h."
            raise ValueError(f"The 'h' parameter of {func} is narrower than {what} resolves: {name} = "
                             f"{value:g} is below {MIN_KERNEL_PANELS:g} of a panel ({width:.3g} wide with "
                             f"panels={panels}); the kernel then falls between the quadrature's nodes and both the "
                             f"value and its error estimate are wrong.  {fix}")


def _kernels(h, means, vars_, t1, t2):
    h_mean, h_var = bandwidth_axes(h)
    K1 = SechKernel(h_mean, *MEAN_DOMAIN).pdf(t1[None, :], means[:, None])  # (J, N1)
    K2 = None if t2 is None else SechKernel(h_var, *VAR_DOMAIN).pdf(t2[None, :], vars_[:, None])  # (J, N2)
    return K1, K2


def _ce2_once(h, means, vars_, pis, e1, e2, panels, *, block=64):
    t1, w1 = _gl_panels(*MEAN_DOMAIN, panels)
    t2, w2 = _gl_panels(*VAR_DOMAIN, max(panels // 2, 8))
    K1, K2 = _kernels(h, means, vars_, t1, t2)
    P1 = K1 * pis[:, None]
    # A[i, k] = sum_j pi_j (e1_j - t1_i) K1[j, i] K2[j, k], B likewise; integrated ``block`` rows of t1 at a time:
    # whole (N1, N2) tables (8 million entries at 512 panels) cost more in page faults on first touch than in
    # arithmetic inside a large process (the timing: docs/numbers.md, "The measurements behind the code's constants")
    first = second = 0.0
    for lo in range(0, t1.size, block):
        sl = slice(lo, lo + block)
        P, t = P1[:, sl], t1[sl]
        A = (P * (e1[:, None] - t[None, :])).T @ K2
        B = (P * (e2[:, None] - t[None, :] ** 2)).T @ K2 - (P.T @ K2) * t2[None, :]
        first += float(w1[sl] @ np.abs(A) @ w2)
        second += float(w1[sl] @ np.abs(B) @ w2)
    return first, second


def _ce1_once(h, means, pis, e1, panels):
    t1, w1 = _gl_panels(*MEAN_DOMAIN, panels)
    # A(t) = sum_j pi_j (e1_j - t) k_h(t | m_j), summed over blocks of atoms: memory stays near _TABLE_BYTES / 4
    # whatever their number (the whole (atoms, nodes) table was 390 kB per atom at 2,048 panels)
    A = np.zeros(t1.size)
    step = max(1, _TABLE_BYTES // (4 * 8 * 3 * t1.size))
    for lo in range(0, means.size, step):
        sl = slice(lo, lo + step)
        K1, _ = _kernels(h, means[sl], None, t1, None)
        A += (K1 * (pis[sl] * 1.0)[:, None] * (e1[sl, None] - t1[None, :])).sum(axis=0)
    return float(w1 @ np.abs(A))


_TABLE_BYTES = 2**30  # the kernel tables of discrete_ce2 and discrete_recalibrated_ce2 (see _check_table_size)


def _check_table_size(func, atoms, panels, name="means"):
    """Refuse a quadrature whose kernel tables, (atoms x nodes) on both axes, would exceed _TABLE_BYTES: the CE2
    integrand sums over every atom at every node pair before its absolute value, so its tables hold all atoms at
    once (82 kB per atom at 512 panels), and the time grows with them too."""
    n1, n2 = 8 * panels, 8 * max(panels // 2, 8)
    need = 8 * atoms * (2 * n1 + n2)
    if need > _TABLE_BYTES:
        most = _TABLE_BYTES // (8 * (2 * n1 + n2))
        raise ValueError(f"The '{name}' parameter of {func} asks for {atoms} atoms: the quadrature tables would take "
                         f"{need / 2**30:.1f} GiB at panels={panels} (at most {most} atoms fit in "
                         f"{_TABLE_BYTES / 2**30:.0f} GiB).  "
                         + ("Use method='grid' (or 'auto'), whose cost does not grow with the number of scores."
                            if name == "method" else "Use fewer panels or fewer atoms."))


_TOL = 1e-9  # round-off allowed on the atoms' constraints (weights summing to 1, e1^2 <= e2 <= e1)


def _check_population(func, h, means, vars_, weights, e1, e2=None):
    """The atoms of a finitely supported population, checked: ``h`` a bandwidth (or a pair); ``means``, ``vars_``,
    ``weights``, ``e1``, ``e2`` 1-D arrays of one length with raw scores in the feasible region (0 <= var <= m (1 -
    m)), probabilities summing to 1, and calibration values e1 = E[f* | atom] in [0, 1] and e2 = E[f*^2 | atom] in
    [e1^2, e1] (f* in [0, 1]: Jensen below, f*^2 <= f* above).  Outside these the formulas give a number that is
    no population's CE.  Returns (h, arrays); ``vars_`` or ``e2`` None stay None."""
    h = check_bandwidth(h, func, per_axis=True)
    m = check_array(means, "means", func, lo=0.0, hi=1.0, rule="in [0, 1]", clip_edges=True)
    n = m.shape[0]

    def atoms(x, name, lo, hi, rule):
        a = check_array(x, name, func, lo=lo, hi=hi, rule=rule, clip_edges=True)
        if a.shape[0] != n:
            raise ValueError(f"The '{name}' parameter of {func} must have one entry per atom ({n}, as 'means'). Got "
                             f"{a.shape[0]} instead.")
        return a

    v = None if vars_ is None else atoms(vars_, "vars_", 0.0, 0.25, "in [0, 1/4]")
    if v is not None and np.any(v > m * (1.0 - m) + _TOL):
        raise ValueError(f"The 'vars_' parameter of {func} must be at most means * (1 - means) (a raw score's "
                         f"variance). Got {int(np.sum(v > m * (1.0 - m) + _TOL))} atom(s) above it instead.")
    w = atoms(weights, "weights", 0.0, None, "non-negative")
    if abs(w.sum() - 1.0) > _TOL:
        raise ValueError(f"The 'weights' parameter of {func} must sum to 1 (the atoms' probabilities; divide by "
                         f"their sum). Got a sum of {float(w.sum())!r} instead.")
    f1 = atoms(e1, "e1", 0.0, 1.0, "in [0, 1] (E[f* | atom])")
    f2 = None if e2 is None else atoms(e2, "e2", 0.0, 1.0, "in [0, 1] (E[f*^2 | atom])")
    if f2 is not None and (np.any(f2 < f1 * f1 - _TOL) or np.any(f2 > f1 + _TOL)):
        raise ValueError(f"The 'e2' parameter of {func} must lie in [e1^2, e1] (E[f*^2] of an f* in [0, 1]). Got "
                         f"{int(np.sum((f2 < f1 * f1 - _TOL) | (f2 > f1 + _TOL)))} atom(s) outside it instead.")
    return h, m, v, w, f1, f2


def discrete_ce2(h, means, vars_, weights, e1, e2, *, panels=CE2_PANELS, parts=False):
    """CE2^pert of a finitely supported population (exact up to quadrature; see module docstring).

    ``means``, ``vars_``: the atoms' raw scores; ``weights``: their probabilities (summing to 1); ``e1``, ``e2``:
    E[f* | atom] and E[f*^2 | atom], with e1^2 <= e2 <= e1.  Anything else raises a ValueError naming the argument.
    Returns a :class:`TruthValue`; with ``parts=True`` a tuple (total, mean_term, moment_term) of TruthValues.
    """
    h, *args = _check_population("discrete_ce2", h, means, vars_, weights, e1, e2)
    panels = check_int(panels, "panels", "discrete_ce2", 16, 2**14)
    _check_resolution("discrete_ce2", h, panels, 2**14)
    _check_table_size("discrete_ce2", args[0].size, panels)
    fine = _ce2_once(h, *args, panels)
    coarse = _ce2_once(h, *args, panels // 2)
    tot = TruthValue(fine[0] + fine[1], abs(sum(fine) - sum(coarse)))
    if not parts:
        return tot
    return (tot, TruthValue(fine[0], abs(fine[0] - coarse[0])), TruthValue(fine[1], abs(fine[1] - coarse[1])))


def discrete_ce1(h, means, weights, e1, *, panels=2048):
    """CE1^pert = E|E[Y | m~] - m~| of a finitely supported population (atoms as in :func:`discrete_ce2`)."""
    h, m, _, w, f1, _ = _check_population("discrete_ce1", h, means, None, weights, e1)
    panels = check_int(panels, "panels", "discrete_ce1", 16, 2**16)
    _check_resolution("discrete_ce1", h, panels, 2**16, two_axes=False)
    args = [m, w, f1]
    fine = _ce1_once(h, *args, panels)
    coarse = _ce1_once(h, *args, panels // 2)
    return TruthValue(fine, abs(fine - coarse))


def discrete_calibration_functions(h, means, vars_, weights, e1, e2, t1, t2):
    """The exact perturbed eta1, eta2 at points (t1, t2) (arrays that broadcast; t1 in [0, 1], t2 in [0, 1/4], where
    the perturbed score lives); atoms as in :func:`discrete_ce2`."""
    func = "discrete_calibration_functions"
    h, means, vars_, pis, e1, e2 = _check_population(func, h, means, vars_, weights, e1, e2)
    t1 = check_array(np.ravel(t1), "t1", func, lo=MEAN_DOMAIN[0], hi=MEAN_DOMAIN[1], rule="in [0, 1]", min_len=0,
                     clip_edges=True).reshape(np.shape(t1))
    t2 = check_array(np.ravel(t2), "t2", func, lo=VAR_DOMAIN[0], hi=VAR_DOMAIN[1], rule="in [0, 1/4]", min_len=0,
                     clip_edges=True).reshape(np.shape(t2))
    try:
        t1, t2 = np.broadcast_arrays(t1, t2)
    except ValueError:
        raise ValueError(f"The 't1' and 't2' parameters of {func} must broadcast together. Got shapes {t1.shape} and "
                         f"{t2.shape} instead.") from None
    h_mean, h_var = bandwidth_axes(h)
    # the atoms' weights pi_j k_h(t1 | m_j) k_h(t2 | v_j) in logarithms, scaled by their largest at each point: far
    # from every atom (in units of h) each kernel underflows to 0 and the ratio was 0/0 = NaN (h = 1e-5 already),
    # while its value there is the nearest atoms' e (the kernels' tails decay like exp(-|t - s| / h))
    # (points in blocks: the (atoms, points) tables stay near _TABLE_BYTES / 8 however many of either)
    k1, k2 = SechKernel(h_mean, *MEAN_DOMAIN), SechKernel(h_var, *VAR_DOMAIN)
    with np.errstate(divide="ignore"):  # an atom of weight 0 has log-weight -inf and no say
        logpi = np.log(pis)[:, None]
    x1, x2 = t1.ravel(), t2.ravel()
    eta1, eta2 = np.empty(x1.size), np.empty(x1.size)
    step = max(1, _TABLE_BYTES // (8 * 8 * 4 * means.size))
    for lo in range(0, x1.size, step):
        sl = slice(lo, lo + step)
        logw = k1.logpdf(x1[None, sl], means[:, None]) + k2.logpdf(x2[None, sl], vars_[:, None]) + logpi
        wk = np.exp(logw - logw.max(axis=0))
        den = wk.sum(axis=0)
        eta1[sl], eta2[sl] = (e1 @ wk) / den, (e2 @ wk) / den
    return eta1.reshape(t1.shape), eta2.reshape(t1.shape)


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
    h, *args = _check_population("discrete_recalibrated_ce2", h, means, vars_, weights, e1, e2)
    panels = check_int(panels, "panels", "discrete_recalibrated_ce2", 16, 2**14)
    _check_resolution("discrete_recalibrated_ce2", h, panels, 2**14)
    _check_table_size("discrete_recalibrated_ce2", args[0].size, panels)
    fine = _recal_once(h, *args, moments, panels)
    coarse = _recal_once(h, *args, moments, panels // 2)
    return TruthValue(sum(fine), abs(sum(fine) - sum(coarse)))


# -- ground truth from samples: bilinear deposit on a grid, exact kernel matrices (Appendix "Experiment 1/2") ----
GRID_SHAPE = (1025, 257)


def _deposit(mean, var, values, weights, shape):
    """Bilinear deposit of weighted samples on the grid of R; returns arrays (len(values), n1, n2)."""
    n1, n2 = shape
    x = np.clip(mean, 0, 1) * (n1 - 1)
    y = np.clip(var, 0, 0.25) * 4 * (n2 - 1)
    i = np.minimum(x.astype(np.intp), n1 - 2)
    j = np.minimum(y.astype(np.intp), n2 - 2)
    fx, fy = x - i, y - j
    out = np.zeros((len(values), n1 * n2))
    for di, dj, wgt in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        idx = (i + di) * n2 + (j + dj)
        for r, val in enumerate(values):
            out[r] += np.bincount(idx, weights=weights * wgt * val, minlength=n1 * n2)
    return out.reshape(len(values), n1, n2)


def _trap(n, length):
    w = np.full(n, length / (n - 1))
    w[[0, -1]] /= 2
    return w


@dataclass(frozen=True)
class GridTruth:
    """Perturbed calibration functions, score density and CE2^pert on the tensor grid of R.

    ``eta1[i, j]``, ``eta2[i, j]`` and ``density[i, j]`` at (t1[i], t2[j]); ``ce2``, ``ce1`` by the trapezoidal rule;
    ``error`` is the spread between independent replicates (when built by :func:`sample_truth` with replicates >= 2).
    """

    h: float
    t1: np.ndarray
    t2: np.ndarray
    density: np.ndarray
    eta1: np.ndarray
    eta2: np.ndarray
    ce2: float
    ce1: float
    error: float = float("nan")

    def interpolate(self, mean, var):
        """Bilinear interpolation of (eta1, eta2) at perturbed scores."""
        n1, n2 = self.eta1.shape
        x = np.clip(np.asarray(mean, float), 0, 1) * (n1 - 1)
        y = np.clip(np.asarray(var, float), 0, 0.25) * 4 * (n2 - 1)
        i, j = np.minimum(x.astype(np.intp), n1 - 2), np.minimum(y.astype(np.intp), n2 - 2)
        fx, fy = x - i, y - j
        out = []
        for F in (self.eta1, self.eta2):
            out.append((1 - fx) * (1 - fy) * F[i, j] + fx * (1 - fy) * F[i + 1, j] + (1 - fx) * fy * F[i, j + 1]
                       + fx * fy * F[i + 1, j + 1])
        return out[0], out[1]

    def conditional_variance(self, mean, var):
        """Var(f*(X) | S~ = s) = eta2 - eta1^2 at perturbed scores: the epistemic variance a calibrated predictor
        would report."""
        e1, e2 = self.interpolate(mean, var)
        return np.maximum(e2 - e1 * e1, 0.0)

    def recalibrated_ce2(self, moments):
        """CE2 of a recalibrated predictor claiming moments(m, var) = (m', m'^2 + var') at perturbed scores (exact
        when the map is one-to-one, an upper bound otherwise; see :func:`discrete_recalibrated_ce2`)."""
        T1, T2 = np.meshgrid(self.t1, self.t2, indexing="ij")
        h1, h2 = moments(T1.ravel(), T2.ravel())
        w1, w2 = _trap(len(self.t1), 1.0), _trap(len(self.t2), 0.25)
        integrand = self.density * (np.abs(self.eta1 - h1.reshape(T1.shape)) + np.abs(self.eta2 - h2.reshape(T1.shape)))
        return float(w1 @ integrand @ w2)


def grid_truth(mean, var, fstar, h, *, weights=None, shape=GRID_SHAPE):
    """GridTruth from raw scores and f* values (samples, or atoms with ``weights``).

    The raw measure is deposited bilinearly on the grid; each axis is then convolved with the exact truncated-sech
    kernel matrix K[a, b] = k_h(t_a | t_b) (the perturbation of a raw score at node b), so density, p eta1 and
    p eta2 are K1 @ mass @ K2^T.
    """
    fstar = np.asarray(fstar, dtype=float)
    return _grid_truth(mean, var, fstar, fstar**2, h, weights, shape)


def _grid_truth(mean, var, e1, e2, h, weights, shape):
    """GridTruth of raw scores with conditional moments e1 = E[f* | raw], e2 = E[f*^2 | raw] per point."""
    mean, var, e1, e2 = (np.asarray(a, dtype=float) for a in (mean, var, e1, e2))
    w = np.full(mean.shape, 1.0 / mean.size) if weights is None else np.asarray(weights, float) / np.sum(weights)
    n1, n2 = shape
    t1, t2 = np.linspace(0, 1, n1), np.linspace(0, 0.25, n2)
    mass = _deposit(mean, var, (np.ones_like(e1), e1, e2), w, shape)
    h_mean, h_var = bandwidth_axes(h)
    K1 = SechKernel(h_mean, *MEAN_DOMAIN).pdf(t1[:, None], t1[None, :])
    K2 = SechKernel(h_var, *VAR_DOMAIN).pdf(t2[:, None], t2[None, :])
    D, N1, N2 = (K1 @ M @ K2.T for M in mass)
    w1, w2 = _trap(n1, 1.0), _trap(n2, 0.25)
    with np.errstate(invalid="ignore", divide="ignore"):
        eta1, eta2 = np.where(D > 0, N1 / D, 0.0), np.where(D > 0, N2 / D, 0.0)
    T1, T2 = np.meshgrid(t1, t2, indexing="ij")
    ce2 = float(w1 @ (np.abs(N1 - T1 * D) + np.abs(N2 - (T1**2 + T2) * D)) @ w2)
    # first order: marginal over the var axis (the perturbation is a product, so it integrates out)
    d1, n11 = mass[0].sum(axis=1), mass[1].sum(axis=1)
    ce1 = float(w1 @ np.abs(K1 @ n11 - t1 * (K1 @ d1)))
    return GridTruth(h, t1, t2, D, eta1, eta2, ce2, ce1)


def sample_truth(sampler, h, *, log2_n=18, replicates=2, rng=None, shape=GRID_SHAPE):
    """GridTruth from ``replicates`` independent scrambled-Sobol samples of 2^log2_n points.

    ``sampler(u)`` maps a (N, d) array of points in [0, 1)^d to (raw_mean, raw_var, fstar).  The returned truth
    averages the replicates' grids; ``error`` is the largest difference of CE2 between two replicates, so at least
    two are drawn (one has no spread to measure); ``rng`` seeds the scrambling (omitted: the seed 0).  ``log2_n``
    is at most 26: 2^26 points of 5 coordinates are 2.7 GB, and each doubling beyond doubles it.
    """
    from scipy.stats import qmc

    from ._validation import check_rng

    func = "sample_truth"
    if not callable(sampler):
        raise TypeError(f"The 'sampler' parameter of {func} must be a callable mapping points in [0, 1)^d to "
                        f"(raw_mean, raw_var, fstar). Got {type(sampler).__name__} instead.")
    log2_n = check_int(log2_n, "log2_n", func, 1, 26)
    replicates = check_int(replicates, "replicates", func, 2, 1000)
    rng = check_rng(0 if rng is None else rng, "sample_truth")  # omitted: a fixed seed, the same truth each call
    truths = []
    dim = getattr(sampler, "dim", 5)
    for _ in range(replicates):
        u = qmc.Sobol(d=dim, scramble=True, seed=rng).random_base2(log2_n)
        truths.append(grid_truth(*sampler(u), h, shape=shape))
    avg = {k: np.mean([getattr(t, k) for t in truths], axis=0) for k in ("density", "eta1", "eta2")}
    ces = [t.ce2 for t in truths]
    return GridTruth(h, truths[0].t1, truths[0].t2, avg["density"], avg["eta1"], avg["eta2"],
                     float(np.mean(ces)), float(np.mean([t.ce1 for t in truths])),
                     float(max(ces) - min(ces)))


# -- the reference value of socal.evaluate: a perfectly calibrated raw predictor with given raw scores -----------
EXACT_ATOMS = 64  # up to this many distinct raw scores the reference is computed exactly; beyond, on the grid
_COARSE_GRID = ((GRID_SHAPE[0] + 1) // 2, (GRID_SHAPE[1] + 1) // 2)  # the grid's error: the change at half resolution


def _check_grid_resolution(func, h, shape):
    """Refuse a bandwidth below one spacing of the grid (:func:`grid_truth`) on either axis: the kernel matrices
    then hold a spike per node and the deposit's error is of the order of the value itself (40 continuous atoms at
    h = 1e-4: 0.0077 +- 0.057 against 0.0003; at one spacing, h = 1/1024, 0.0031 +- 0.0004 against 0.0030)."""
    h_mean, h_var = bandwidth_axes(h)
    for name, value, spacing in (("h_mean" if isinstance(h, tuple) else "h", h_mean, 1.0 / (shape[0] - 1)),
                                 ("h_var" if isinstance(h, tuple) else "h", h_var, 0.25 / (shape[1] - 1))):
        if value < spacing:
            raise ValueError(f"The 'h' parameter of {func} is below the reference grid's spacing: {name} = {value:g} "
                             f"< {spacing:.3g} (a {shape[0]} x {shape[1]} grid on [0, 1] x [0, 1/4], used for more "
                             f"than {EXACT_ATOMS} distinct raw scores); on it the reference would be as uncertain as "
                             f"it is large.  Use a larger h"
                             + (", or method='exact' (quadrature over the distinct scores; its cost grows with their "
                                "number)." if func == "calibrated_reference" else "."))


def _grid_parts(m, v, h, shape):
    """(CE2, mean term, moment term, CE1) of a calibrated raw predictor on the grid (see calibrated_reference)."""
    g = _grid_truth(m, v, m, m**2 + v, h, None, shape)
    w1, w2 = _trap(len(g.t1), 1.0), _trap(len(g.t2), 0.25)
    T1, T2 = np.meshgrid(g.t1, g.t2, indexing="ij")
    first = float(w1 @ (g.density * np.abs(g.eta1 - T1)) @ w2)
    second = float(w1 @ (g.density * np.abs(g.eta2 - T1**2 - T2)) @ w2)
    return g.ce2, first, second, g.ce1


@dataclass(frozen=True)
class CalibratedReference:
    """CE2^pert and CE1^pert of a perfectly calibrated raw predictor with given raw scores (see
    :func:`calibrated_reference`).  ``ce2`` is split into ``mean_term`` + ``moment_term`` as in Eq. (cehat);
    ``method`` is 'exact' (quadrature over the distinct raw scores) or 'grid' (bilinear deposit on the grid of R)."""

    h: float
    ce2: TruthValue
    mean_term: TruthValue
    moment_term: TruthValue
    ce1: TruthValue
    method: str
    atoms: int

    def __format__(self, spec):  # f"{ev.reference:.4f}" formats the reference CE2; an empty spec keeps the repr
        return format(float(self.ce2.value), spec) if spec else str(self)


def calibrated_reference(raw_mean: ArrayLike, raw_var: ArrayLike, h: float, *,
                         method: Literal["auto", "exact", "grid"] = "auto") -> CalibratedReference:
    """CE2^pert and CE1^pert that a perfectly calibrated raw predictor with these raw scores would have at ``h``.

    "Perfectly calibrated" means E[f* | raw score] = m and E[f*^2 | raw score] = m^2 + var at every raw score
    (m, var): the raw predictor is second-order calibrated, so its raw CE2 is 0.  Its *perturbed* CE2 is not:
    the perturbation reports t ~ k_h(. | raw) in place of the raw score, and E[f* | t] = E[m | t] differs from t.
    With the empirical distribution of the given raw scores as the population, this value is exactly computable
    (the atoms' e1 = m, e2 = m^2 + var go into :func:`discrete_ce2` and :func:`discrete_ce1`); it is the CE2 a
    predictor with nothing wrong would score at this h, the reference against which an estimate is read.

    Parameters
    ----------
    raw_mean, raw_var : array_like, shape (n,)
        Raw (unperturbed) scores: mean in [0, 1], var in [0, mean (1 - mean)].
    h : float or (float, float)
        The perturbation bandwidth, or one per axis (h_mean, h_var).
    method : {'auto', 'exact', 'grid'}
        'exact': quadrature over the distinct raw scores (cost grows with their number).  'grid': bilinear deposit
        of the raw scores on the 1025 x 257 grid of R, then exact kernel matrices (:func:`grid_truth`), cost
        independent of n; its error is that of the deposit (measured in the tests against 'exact').  'auto':
        'exact' up to 64 distinct scores, else 'grid'.  Each value carries an error estimate: the change with
        half the quadrature panels ('exact') or half the grid resolution ('grid').

    Returns
    -------
    CalibratedReference

    Examples
    --------
    >>> ref = calibrated_reference([0.2, 0.5, 0.8], [0.01, 0.05, 0.02], h=1/16)
    >>> ref.method, round(ref.ce2.value, 3) > 0
    ('exact', True)
    """
    from ._validation import check_bandwidth, check_choice, check_scores

    m, v = check_scores(raw_mean, raw_var, "calibrated_reference", raw=True, names=("raw_mean", "raw_var"))
    h = check_bandwidth(h, "calibrated_reference", per_axis=True)
    method = check_choice(method, "method", "calibrated_reference", ("auto", "exact", "grid"))
    return checked_reference(m, v, h, method, "calibrated_reference")


def checked_reference(m, v, h, method, func):
    """:func:`calibrated_reference` of scores and a bandwidth already checked (by :func:`socal.evaluate`, say);
    ``func`` names the caller in the errors of a bandwidth the reference cannot resolve."""
    # the distinct (m, v) pairs in lexicographic order, as np.unique(axis=0) gives them, from two 1-D sorts and
    # one of integer codes (a third of the time of sorting the rows as byte strings)
    m1, im = np.unique(m, return_inverse=True)
    v1, iv = np.unique(v, return_inverse=True)
    codes, counts = np.unique(im.ravel().astype(np.int64) * v1.size + iv.ravel(), return_counts=True)
    atoms = np.column_stack([m1[codes // v1.size], v1[codes % v1.size]])
    if method == "auto":
        method = "exact" if len(atoms) <= EXACT_ATOMS else "grid"
    if method == "exact":
        mu, vu = atoms[:, 0], atoms[:, 1]
        w = counts / counts.sum()
        # discrete_ce2's own checks, in the caller's name (CE1's 2,048 panels resolve whatever its 512 do)
        _check_resolution(func, h, CE2_PANELS, None, what="the calibrated reference's quadrature")
        _check_table_size(func, len(atoms), CE2_PANELS, name="method")
        tot, first, second = discrete_ce2(h, mu, vu, w, mu, mu**2 + vu, parts=True)
        c1 = np.bincount(im.ravel(), minlength=m1.size)
        ce1 = discrete_ce1(h, m1, c1 / c1.sum(), m1)
    else:
        _check_grid_resolution(func, h, GRID_SHAPE)
        fine, coarse = (_grid_parts(m, v, h, shape) for shape in (GRID_SHAPE, _COARSE_GRID))
        tot, first, second, ce1 = (TruthValue(a, abs(a - b)) for a, b in zip(fine, coarse))
    return CalibratedReference(h=h, ce2=tot, mean_term=first, moment_term=second, ce1=ce1, method=method,
                               atoms=len(atoms))
