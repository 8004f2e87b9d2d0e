"""Synthetic populations with exactly known perturbed calibration error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_array, check_bandwidth, check_bool, check_float, check_int, check_rng, check_scores
from .perturb import perturb_from_stream
from .truth import CE2_PANELS, discrete_calibration_functions, discrete_ce1, discrete_ce2, discrete_recalibrated_ce2

__all__ = ["DiscretePopulation", "toy_population", "calibrated_population", "overconfident_population",
           "beta_calibrated_sample", "ZooMember", "validation_zoo", "sharp_population", "SHARP_KINDS",
           "EnsembleLikePopulation", "DirichletEnsemble", "RareEventPopulation", "RARE_KINDS", "RARE_LAWS",
           "bimodal_twin"]


@dataclass(frozen=True)
class DiscretePopulation:
    """A population with finitely many raw scores and, at each, finitely many values of f*.

    Atom j has raw score (means[j], vars[j]) with probability weights[j]; given atom j, f* = fstar[j, r] with
    probability fprobs[j, r].  The perturbed CE2 and CE1 are then explicit (see :mod:`socal.truth`).
    """

    means: np.ndarray
    vars: np.ndarray
    weights: np.ndarray
    fstar: np.ndarray
    fprobs: np.ndarray

    def __post_init__(self):
        func = "DiscretePopulation"
        m, v = check_scores(self.means, self.vars, func, raw=True, names=("means", "vars"))
        w = check_array(self.weights, "weights", func, lo=0.0, rule=">= 0 (one probability per atom)")
        fs = check_array(np.atleast_2d(np.asarray(self.fstar, dtype=float)), "fstar", func, ndim=2, lo=0.0, hi=1.0,
                         rule="in [0, 1] (the values of f* at each atom)")
        fp = check_array(np.atleast_2d(np.asarray(self.fprobs, dtype=float)), "fprobs", func, ndim=2, lo=0.0,
                         rule=">= 0 (the probabilities of fstar's values)")
        if w.shape != m.shape or not np.isclose(w.sum(), 1.0):
            raise ValueError(f"The 'weights' parameter of {func} must be non-negative, one per atom, summing to 1. "
                             f"Got {w!r} instead.")
        if fs.shape != fp.shape or fs.shape[0] != m.shape[0]:
            raise ValueError(f"The 'fstar' parameter of {func} must have one row per atom ({m.shape[0]}) and the "
                             f"shape of 'fprobs' {fp.shape}. Got shape {fs.shape} instead.")
        if not np.allclose(fp.sum(axis=1), 1.0):
            raise ValueError(f"The 'fprobs' parameter of {func} must have rows summing to 1. Got row sums "
                             f"{fp.sum(axis=1)!r} instead.")
        # probabilities given to a few digits (sums within np.isclose of 1) are divided by their sum, so that the
        # exact truth (socal.truth, which holds sums to 1e-9) is that of the population meant; sums off by
        # round-off alone keep their bits
        if abs(w.sum() - 1.0) > 1e-12:
            w = w / w.sum()
        off = np.abs(fp.sum(axis=1) - 1.0) > 1e-12
        if off.any():
            fp = fp.copy()
            fp[off] /= fp[off].sum(axis=1, keepdims=True)
        for name, val in (("means", m), ("vars", v), ("weights", w), ("fstar", fs), ("fprobs", fp)):
            object.__setattr__(self, name, val)

    @property
    def eta_orig(self):
        """(e1, e2): E[f* | atom] and E[f*^2 | atom]."""
        return (self.fprobs * self.fstar).sum(axis=1), (self.fprobs * self.fstar**2).sum(axis=1)

    def raw_ce2(self):
        """CE2 of the unperturbed predictor (a finite sum)."""
        e1, e2 = self.eta_orig
        return float(self.weights @ (np.abs(e1 - self.means) + np.abs(e2 - self.means**2 - self.vars)))

    def ce2(self, h, *, parts=False, panels=CE2_PANELS):
        """CE2^pert at ``h`` (:func:`socal.truth.discrete_ce2`: quadrature on ``panels`` panels, with its error)."""
        e1, e2 = self.eta_orig
        return discrete_ce2(check_bandwidth(h, "ce2", per_axis=True), self.means, self.vars, self.weights, e1, e2,
                            parts=parts, panels=panels)

    def ce1(self, h, *, panels=2048):
        """CE1^pert at ``h`` (:func:`socal.truth.discrete_ce1`: quadrature on ``panels`` panels, with its error)."""
        e1, _ = self.eta_orig
        return discrete_ce1(check_bandwidth(h, "ce1", per_axis=True), self.means, self.weights, e1, panels=panels)

    def recalibrated_ce2(self, h, moments, *, panels=256):
        """CE2 of a recalibrated predictor whose claimed moments at perturbed scores are ``moments(m, var)``
        (e.g. ``SecondOrderPlatt.predict_moments``); see :func:`socal.truth.discrete_recalibrated_ce2`."""
        e1, e2 = self.eta_orig
        return discrete_recalibrated_ce2(check_bandwidth(h, "recalibrated_ce2", per_axis=True), self.means, self.vars,
                                         self.weights, e1, e2, moments, panels=panels)

    def calibration_functions(self, h, mean, var):
        """The exact perturbed (eta1, eta2) at the points (mean, var), at bandwidth ``h``
        (:func:`socal.truth.discrete_calibration_functions`)."""
        e1, e2 = self.eta_orig
        return discrete_calibration_functions(h, self.means, self.vars, self.weights, e1, e2, mean, var)

    def sample_raw(self, n, *, k=2, rng=None):
        """Raw scores, f* values and (n, k) labels."""
        n = check_int(n, "n", "DiscretePopulation.sample_raw", 1, 10**9)
        k = check_int(k, "k", "DiscretePopulation.sample_raw", 1, 10**6)
        rng = check_rng(rng, "DiscretePopulation.sample_raw")
        j = rng.choice(self.means.shape[0], size=n, p=self.weights)
        cum = np.cumsum(self.fprobs[j], axis=1)
        r = (rng.random(n)[:, None] > cum).sum(axis=1)
        r = np.minimum(r, self.fstar.shape[1] - 1)
        f = self.fstar[j, r]
        labels = (rng.random((n, k)) < f[:, None]).astype(float)
        return self.means[j], self.vars[j], f, labels

    def sample(self, n, *, h, k=2, rng=None):
        """Perturbed scores and labels: (mean_t, var_t, labels), the inputs of :func:`socal.ce2`."""
        n = check_int(n, "n", "DiscretePopulation.sample", 1, 10**9)
        k = check_int(k, "k", "DiscretePopulation.sample", 1, 10**6)
        rng = check_rng(rng, "DiscretePopulation.sample")
        m, v, _, labels = self.sample_raw(n, k=k, rng=rng)
        mt, vt = perturb_from_stream(m, v, h=h, rng=rng)
        return mt, vt, labels


def toy_population():
    """Six atoms, miscalibrated in both the mean and the variance (raw CE2 about 0.2)."""
    return DiscretePopulation(
        means=[0.15, 0.30, 0.50, 0.50, 0.70, 0.90],
        vars=[0.01, 0.05, 0.02, 0.20, 0.10, 0.03],
        weights=[0.15, 0.20, 0.15, 0.20, 0.15, 0.15],
        fstar=[[0.05, 0.35], [0.20, 0.60], [0.10, 0.90], [0.45, 0.55], [0.60, 0.95], [0.80, 0.99]],
        fprobs=[[0.5, 0.5], [0.7, 0.3], [0.5, 0.5], [0.5, 0.5], [0.6, 0.4], [0.5, 0.5]],
    )


def calibrated_population():
    """Raw-calibrated: at each atom f* = m +- sqrt(var) with probability 1/2, so E f* = m and Var f* = var.

    Its raw CE2 is 0; the perturbed CE2 is small but not 0 (the perturbation moves the reported score).
    """
    means = np.array([0.2, 0.35, 0.5, 0.5, 0.65, 0.8])
    vars_ = np.array([0.01, 0.04, 0.0025, 0.09, 0.0225, 0.0064])
    sd = np.sqrt(vars_)
    return DiscretePopulation(means=means, vars=vars_, weights=np.full(6, 1 / 6),
                              fstar=np.column_stack([means - sd, means + sd]), fprobs=np.full((6, 2), 0.5))


def beta_calibrated_sample(n, rng=None, k=2):
    """(mean, var, f*, labels) of n items whose scores are second-order calibrated, with a continuum of them.

    m ~ U(0.05, 0.95), var = U(0, 1/2) m (1 - m), and f* | (m, var) ~ Beta(m c, (1 - m) c) with c = m (1 - m)/var
    - 1, whose mean is m and variance var: E[Y | S] = m and E[f*^2 | S] = m^2 + var, so CE2 = CE1 = 0 exactly for
    these scores as given (unperturbed; ``benchmarks/calibrated_coverage.py``).  ``k`` labels per item.
    """
    n = check_int(n, "n", "beta_calibrated_sample", 1, 10**9)
    k = check_int(k, "k", "beta_calibrated_sample", 1, 10**6)
    rng = check_rng(rng, "beta_calibrated_sample")
    m = rng.uniform(0.05, 0.95, n)
    v = rng.uniform(0.0, 0.5, n) * m * (1 - m)
    c = m * (1 - m) / np.maximum(v, 1e-300) - 1
    f = rng.beta(m * c, (1 - m) * c)
    y = (rng.random((n, k)) < f[:, None]).astype(float)
    return m, v, f, y


def overconfident_population():
    """Means calibrated, variances reported at a tenth of the truth (an ensemble that agrees too much)."""
    means = np.array([0.25, 0.4, 0.5, 0.6, 0.75])
    true_var = np.array([0.04, 0.09, 0.16, 0.09, 0.04])
    sd = np.sqrt(true_var)
    return DiscretePopulation(means=means, vars=true_var / 10, weights=np.full(5, 0.2),
                              fstar=np.column_stack([means - sd, means + sd]), fprobs=np.full((5, 2), 0.5))


def _two_point(means, true_var):
    """f* in {m (1 - t), m + t (1 - m)} with probabilities (1 - m, m), t = sqrt(var / (m (1 - m))): E f* = m,
    Var f* = var, both points in [0, 1] for any var <= m (1 - m)."""
    m = np.asarray(means, dtype=float)
    t = np.sqrt(np.asarray(true_var, dtype=float) / (m * (1 - m)))
    return np.column_stack([m * (1 - t), m + t * (1 - m)]), np.column_stack([1 - m, m])


def _grid_population(means, reported_var, true_mean, true_var, weights=None):
    fstar, fprobs = _two_point(true_mean, true_var)
    w = np.full(len(means), 1.0 / len(means)) if weights is None else np.asarray(weights, dtype=float)
    return DiscretePopulation(means=means, vars=reported_var, weights=w / w.sum(), fstar=fstar, fprobs=fprobs)


@dataclass(frozen=True)
class ZooMember:
    """One population of :func:`validation_zoo`: exact CE2^pert and CE1^pert via ``population``, at any h its
    quadrature resolves."""

    name: str
    population: DiscretePopulation
    description: str
    held_out: bool


def validation_zoo(*, include_held_out=True):
    """Populations with exactly computable CE2^pert and CE1^pert, for validating estimators and intervals.

    Eight tuning members span what an estimator meets: calibrated raw predictors with few (6) and many (48) score
    atoms; small truth (CE2^pert < 0.04 at h = 1/64) and large (> 0.15); miscalibration in the variance only (too
    small, too large) and in the mean only; many atoms from a smooth density, like an ensemble's scores.  Two held-out
    members (``held_out=True``) are for reporting only: choose estimator settings on the others.  Truth is exact up
    to quadrature (:func:`socal.truth.discrete_ce2`), at any h the quadrature resolves (a tenth of a panel).

    Returns a dict name -> :class:`ZooMember`.

    Examples
    --------
    >>> import socal
    >>> zoo = socal.synthetic.validation_zoo()
    >>> len([z for z in zoo.values() if not z.held_out]), len(zoo)
    (8, 10)
    >>> round(zoo["toy"].population.ce2(h=1/16).value, 3)
    0.119
    """
    check_bool(include_held_out, "include_held_out", "validation_zoo")
    g = np.linspace(0.08, 0.92, 48)
    smooth_rng = np.random.default_rng(20261126)  # fixed: the members are data, not random
    sm = np.sort(np.clip(smooth_rng.beta(2.0, 2.5, 120), 0.03, 0.97))
    sv = 0.35 * sm * (1 - sm) * smooth_rng.uniform(0.2, 1.0, 120)
    members = [
        ZooMember("calibrated-few", calibrated_population(), "raw-calibrated, 6 atoms", False),
        ZooMember("calibrated-many", _grid_population(g, 0.3 * g * (1 - g), g, 0.3 * g * (1 - g)),
                  "raw-calibrated, 48 atoms on a grid of means, Var f* = 0.3 m (1 - m)", False),
        ZooMember("nearly-calibrated", _grid_population(g, 0.05 * g * (1 - g), g, 0.05 * g * (1 - g)),
                  "raw-calibrated, 48 atoms, little epistemic variance (small CE2^pert)", False),
        ZooMember("toy", toy_population(), "6 atoms, miscalibrated in mean and variance (large CE2^pert)", False),
        ZooMember("overconfident", overconfident_population(), "variance only: reported at a tenth of the truth",
                  False),
        ZooMember("underconfident", _grid_population(g[::4], 0.9 * g[::4] * (1 - g[::4]), g[::4],
                                                     0.1 * g[::4] * (1 - g[::4])),
                  "variance only: reported at 9 times the truth, 12 atoms", False),
        ZooMember("mean-shifted", _grid_population(g[::2], 0.2 * g[::2] * (1 - g[::2]),
                                                   0.15 + 0.7 * g[::2], 0.2 * g[::2] * (1 - g[::2])),
                  "mean only: the true mean is 0.15 + 0.7 m (over-extreme means), variance right", False),
        ZooMember("smooth", _grid_population(sm, sv, sm, sv * 1.5),
                  "120 atoms from a smooth density (Beta(2, 2.5) means), variances 2/3 of the truth", False),
        ZooMember("held-out-flipped", _grid_population(g[::3], 0.1 * g[::3] * (1 - g[::3]), 1 - g[::3],
                                                       0.1 * g[::3] * (1 - g[::3])),
                  "held out: means reversed (true mean 1 - m), 16 atoms", True),
        ZooMember("held-out-mixed", _grid_population(g[1::3], 0.02 + 0.0 * g[1::3], 0.05 + 0.9 * g[1::3],
                                                     0.25 * g[1::3] * (1 - g[1::3]),
                                                     weights=1 + np.sin(6 * g[1::3]) ** 2),
                  "held out: constant reported variance, shrunk means, uneven weights, 16 atoms", True),
    ]
    return {z.name: z for z in members if include_held_out or not z.held_out}


SHARP_KINDS = ("calibrated", "overconfident", "mean-shifted")


def sharp_population(median_var, kind="calibrated"):
    """A sharp predictor with exact truth: 60 score atoms whose reported variances have median ``median_var``.

    The means are 60 fixed draws of Beta(2, 2.5) clipped to [0.03, 0.97] (equal weights); the reported variances
    are ``median_var`` exp(z) for fixed standard normal z, each capped at m (1 - m) / 2, so their interquartile
    range is about 1.4 ``median_var`` (a sharp ensemble: the members agree to within a few sqrt(median_var)).
    f* takes the two values of a two-point law at each atom (:func:`_grid_population`), with

    - ``'calibrated'``: E f* = m, Var f* = the reported variance (CE2^pert equals its calibrated reference);
    - ``'overconfident'``: E f* = m, Var f* = 10 times the reported variance (capped at 0.9 m (1 - m)): the variances
      too small, the means right;
    - ``'mean-shifted'``: E f* = 0.15 + 0.7 m, Var f* = the reported variance: the means over-extreme.

    Used to measure :func:`socal.evaluate`'s bandwidth rule where the reported variances spread over less than a
    kernel's width (``benchmarks/bandwidth.py --auto``).

    Examples
    --------
    >>> import numpy as np, socal
    >>> pop = socal.synthetic.sharp_population(1e-4, "overconfident")
    >>> round(float(np.median(pop.vars)) / 1e-4, 2), pop.means.size
    (1.0, 60)
    """
    median_var = check_float(median_var, "median_var", "sharp_population", 0.0, 0.01, lo_open=True)
    if kind not in SHARP_KINDS:
        raise ValueError(f"The 'kind' parameter of sharp_population must be one of {SHARP_KINDS}. Got {kind!r} "
                         f"instead.")
    rng = np.random.default_rng(20261202)  # fixed: the atoms are data, not random
    m = np.sort(np.clip(rng.beta(2.0, 2.5, 60), 0.03, 0.97))
    z = rng.standard_normal(60)
    v = np.minimum(median_var * np.exp(z - np.median(z)), m * (1 - m) / 2)
    true_mean = 0.15 + 0.7 * m if kind == "mean-shifted" else m
    true_var = np.minimum(10 * v, 0.9 * m * (1 - m)) if kind == "overconfident" else v
    return _grid_population(m, v, true_mean, true_var)


@dataclass(frozen=True)
class EnsembleLikePopulation:
    """Smooth scores like an ensemble's, with a known way of being miscalibrated (for the calibration test's size and
    power).

    The true mean is m ~ Beta(2, 2) (clipped to [0.01, 0.99]); given it, f* ~ Beta with mean m and variance c u m (1
    - m), with c = ``var_level`` / E[m (1 - m)] = 5 ``var_level`` and u ~ Uniform(0.25, 1.75) per item (the relative
    variance spreads, as an ensemble's does), so the average Var f* is ``var_level`` (at most 0.1). The *reported*
    scores distort the truth: the mean is tempered (sigmoid(logit(m) / temperature)) and shifted by ``mean_shift``
    (clipped to [0.001, 0.999]); the variance is the true one times ``var_factor`` (only where the true mean is at
    least ``region_from``, when given), capped at the feasible m (1 - m). The defaults report the truth: a
    calibrated predictor.
    """

    var_level: float = 0.01
    var_factor: float = 1.0
    mean_shift: float = 0.0
    temperature: float = 1.0
    region_from: float | None = None

    def __post_init__(self):
        # checked when built, so that a population is never a recipe for invalid scores (a negative var_factor gave
        # negative variances, temperature 0 divided by zero)
        func = "EnsembleLikePopulation"
        check_float(self.var_level, "var_level", func, 0.0, 0.1, lo_open=True)
        check_float(self.var_factor, "var_factor", func, 0.0, 1e6)
        check_float(self.mean_shift, "mean_shift", func, -1.0, 1.0)
        check_float(self.temperature, "temperature", func, 0.0, 1e6, lo_open=True)
        check_float(self.region_from, "region_from", func, 0.0, 1.0, allow_none=True)

    def sample_raw(self, n, *, k=2, rng=None):
        """Reported means and variances, f* values and (n, k) labels."""
        n = check_int(n, "n", "EnsembleLikePopulation.sample_raw", 1, 10**9)
        k = check_int(k, "k", "EnsembleLikePopulation.sample_raw", 1, 10**6)
        rng = check_rng(rng, "EnsembleLikePopulation.sample_raw")
        m = np.clip(rng.beta(2.0, 2.0, n), 0.01, 0.99)
        c = 5.0 * self.var_level * rng.uniform(0.25, 1.75, n)
        s = 1.0 / c - 1.0  # alpha + beta of the Beta law of f*: variance m (1 - m) / (s + 1) = c m (1 - m)
        f = rng.beta(m * s, (1.0 - m) * s)
        labels = (rng.random((n, k)) < f[:, None]).astype(float)
        v = c * m * (1.0 - m)
        mr = m
        if self.temperature != 1.0:
            mr = 1.0 / (1.0 + np.exp(-(np.log(m) - np.log1p(-m)) / self.temperature))
        mr = np.clip(mr + self.mean_shift, 0.001, 0.999) if self.mean_shift else mr
        factor = self.var_factor if self.region_from is None else np.where(m >= self.region_from,
                                                                           self.var_factor, 1.0)
        vr = np.minimum(v * factor, mr * (1.0 - mr))
        return mr, vr, f, labels


RARE_KINDS = ("beta(0.5, 20)", "beta(1, 50)", "log-uniform", "ties")
RARE_LAWS = ("beta", "atom-0", "atom-1")


@dataclass(frozen=True)
class RareEventPopulation:
    """Calibrated binary predictors with rare events, where the calibration test's chi-square reference is light
    (docs/calibration_test.md, "The tail").  f* given the reported scores is Beta with exactly the reported mean and
    variance, so the predictor is second-order calibrated; its errors are ``var_factor`` (the reported variance is
    the true one times it) and ``mean_shift`` (added to the reported mean), both off by default.

    ``kind``: the means m ~ Beta(0.5, 20) ('beta(0.5, 20)') or Beta(1, 50) ('beta(1, 50)') with relative variances
    var / (m (1 - m)) ~ Uniform(0.02, 0.5); the same means with log-uniform relative variances on [1e-4, 1]
    ('log-uniform'); or tree-like ties, 30 leaves with log-uniform means on [0.001, 0.1] and one relative variance
    each ('ties').  ``k``: labels per item, an int or 'mixed' (each item's k drawn from {2, 3, 5, 10, 100}).

    ``law``: the law of f* given the scores: 'beta' (default); 'atom-0', two points with one at 0 (f* = (m^2 + var)
    / m with probability m^2 / (m^2 + var), else 0); or 'atom-1', its mirror image (1 - f* is 'atom-0' at 1 - m).
    All three have exactly the reported mean and variance, so all are calibrated; they differ from the third moment
    on, which the null does not fix and the votes of k >= 3 see.  Given two moments on [0, 1], E f*^3 is smallest
    under 'atom-0' and largest under 'atom-1' (a two-point law with an atom at an end of the interval is extreme for
    the third moment), so the pair brackets every law the null allows, as far from the Beta as two moments permit:
    where the simulated reference, which draws f* from the Beta, would be wrong if anywhere."""

    kind: str = "beta(0.5, 20)"
    k: int | str = 2
    var_factor: float = 1.0
    mean_shift: float = 0.0
    law: str = "beta"

    def __post_init__(self):
        func = "RareEventPopulation"
        if self.law not in RARE_LAWS:
            raise ValueError(f"The 'law' parameter of {func} must be one of {', '.join(map(repr, RARE_LAWS))}. Got "
                             f"{self.law!r} instead.")
        if self.kind not in RARE_KINDS:
            raise ValueError(f"The 'kind' parameter of {func} must be one of {', '.join(map(repr, RARE_KINDS))}. "
                             f"Got {self.kind!r} instead.")
        if self.k != "mixed":
            check_int(self.k, "k", func, 2, 10**6)
        check_float(self.var_factor, "var_factor", func, 0.0, 1e6, lo_open=True)
        check_float(self.mean_shift, "mean_shift", func, -0.5, 0.5)

    def sample_counts(self, n, *, rng=None):
        """Reported means and variances, f* and the votes as counts (positives, trials), each of shape (n,)."""
        func = "RareEventPopulation.sample_counts"
        n = check_int(n, "n", func, 1, 10**9)
        rng = check_rng(rng, func)
        if self.kind == "ties":
            leaves = np.exp(rng.uniform(np.log(1e-3), np.log(0.1), 30))
            rel = rng.uniform(0.02, 0.5, 30)
            leaf = rng.integers(0, 30, n)
            m, t = leaves[leaf], rel[leaf]
        else:
            a, b = (1.0, 50.0) if self.kind == "beta(1, 50)" else (0.5, 20.0)
            m = np.clip(rng.beta(a, b, n), 1e-4, 1.0 - 1e-4)
            t = 10.0 ** rng.uniform(-4.0, 0.0, n) * 0.999 if self.kind == "log-uniform" else rng.uniform(0.02, 0.5, n)
        v = t * m * (1.0 - m)
        f = m.copy()
        pos = v > 1e-15
        if self.law == "beta":
            s = m[pos] * (1.0 - m[pos]) / v[pos] - 1.0  # alpha + beta: Beta with mean m and variance v
            f[pos] = rng.beta(m[pos] * s, (1.0 - m[pos]) * s)
        else:  # {0, x} with p x = mu and p x^2 = mu^2 + v, for mu = m ('atom-0') or 1 - m ('atom-1'); x <= 1
            mu = m[pos] if self.law == "atom-0" else 1.0 - m[pos]
            x = np.minimum((mu ** 2 + v[pos]) / mu, 1.0)
            g = np.where(rng.random(int(pos.sum())) < mu / x, x, 0.0)
            f[pos] = g if self.law == "atom-0" else 1.0 - g
        k = rng.choice([2, 3, 5, 10, 100], n) if self.k == "mixed" else np.full(n, int(self.k))
        votes = rng.binomial(k, f).astype(float)
        mr = np.clip(m + self.mean_shift, 1e-4, 1.0 - 1e-4)
        vr = np.minimum(v * self.var_factor, mr * (1.0 - mr))
        return mr, vr, f, (votes, k.astype(float))


def bimodal_twin(n=3000, k=5, rng=0):
    """Issue 73's synthetic twin of a real TF-IDF ensemble: means too low and f* bimodal (hard items f* ~ Beta(7, 3),
    the rest Beta(0.5, 12)), variances reported at 0.05 m (1 - m) U(0.2, 1).  Returns (mean, var, (positives, trials))
    with k votes per item.  The calibration test once read its variance regions as 'too large' where the votes'
    E[f*^2] is ten times m^2 + var."""
    rng = check_rng(rng, "bimodal_twin")
    m = rng.beta(0.8, 4, n)
    var = 0.05 * m * (1 - m) * rng.uniform(0.2, 1, n)
    hard = rng.random(n) < np.clip(0.1 + 0.5 * m, 0, 1)
    f = np.where(hard, rng.beta(7, 3, n), rng.beta(0.5, 12, n))
    return m, var, (rng.binomial(k, f).astype(float), np.full(n, float(k)))


class GaussianMixtureTask:
    """The paper's DGP (Appendix "Experiment 1"): X in R^4 from a 10-component isotropic Gaussian mixture (centres
    ~ N(0, 1.5^2 I), unit variance), f*(x) = sigmoid(w.x) with w ~ N(0, I/2); centres and w drawn from ``rng``."""

    dim = 5  # Sobol dimension: one coordinate for the component, four for the Gaussian

    def __init__(self, rng=0, *, components=10, d=4):
        components = check_int(components, "components", "GaussianMixtureTask", 1, 10**6)
        d = check_int(d, "d", "GaussianMixtureTask", 1, 10**4)
        rng = check_rng(rng, "GaussianMixtureTask")
        self.centres = rng.normal(0.0, 1.5, size=(components, d))
        self.w = rng.normal(0.0, np.sqrt(0.5), size=d)

    def fstar(self, x):
        return 1.0 / (1.0 + np.exp(-(x @ self.w)))

    def sample_x(self, n, rng=None):
        n = check_int(n, "n", "GaussianMixtureTask.sample_x", 1, 10**9)
        rng = check_rng(rng, "GaussianMixtureTask.sample_x")
        c = rng.integers(0, len(self.centres), size=n)
        return self.centres[c] + rng.normal(size=(n, self.centres.shape[1]))

    def from_uniform(self, u):
        """Map points of [0, 1)^5 (e.g. Sobol) to draws of X: component from u[:, 0], Gaussian from u[:, 1:]."""
        from scipy.special import ndtri

        c = np.minimum((u[:, 0] * len(self.centres)).astype(int), len(self.centres) - 1)
        z = ndtri(np.clip(u[:, 1:], 1e-16, 1 - 1e-16))
        return self.centres[c] + z

    def labels(self, x, k=2, rng=None):
        k = check_int(k, "k", "GaussianMixtureTask.labels", 1, 10**6)
        rng = check_rng(rng, "GaussianMixtureTask.labels")
        return (rng.random((x.shape[0], k)) < self.fstar(x)[:, None]).astype(float)


@dataclass(frozen=True)
class DirichletEnsemble:
    """A C-class ensemble with a known way of being miscalibrated, for the multiclass test's size and power.

    Per item: a base vector b, M vectors q_j ~ Dirichlet(s b), and the truth f* = q_J for J uniform on the M: then
    E[f* | q_1..q_M] = q-bar and Cov(f* | q_1..q_M) = the q_j's covariance with ``ddof=0``, and by the tower
    property the same on any coarser level set.  The members the predictor reports are the q_j themselves with
    ``ddof=0``, or q-bar + sqrt((M - 1) / M) (q_j - q-bar) with ``ddof=1`` (shrunk so that the unbiased covariance,
    sum / (M - 1), is exactly the truth's: m m^T + cov is then the q_j's average q q^T >= 0, so
    :func:`socal.from_members` scales nothing).  Either way ``kind='calibrated'`` is exactly canonically calibrated.

    ``base='balanced'``: b ~ Dirichlet(``alpha`` 1_C), s = ``spread``.  ``base='rare'``: b ~ Dirichlet(5, 1, 0.2,
    ..., 0.2) and s ~ U(5, 50) per item (issue 72's rare classes: C - 2 classes with means near 0.2 / (6 + 0.2 (C -
    2))).  The alternatives change the truth or the reported covariance:

    - ``'tempered'``: f* = softmax(log q_J / ``temperature``): the reported means over-confident for T > 1;
    - ``'overconfident'``: the reported covariance is ``var_factor`` times the members' (variances too small);
    - ``'misscaled'``: class 0's probability in the truth is multiplied by ``scale`` and the vector renormalised.

    :meth:`sample` draws k votes per item from Categorical(f*).
    """

    C: int = 3
    M: int = 5
    alpha: float = 2.0
    spread: float = 20.0
    kind: str = "calibrated"
    temperature: float = 1.5
    var_factor: float = 0.3
    scale: float = 1.3
    base: str = "balanced"
    ddof: int = 0

    def __post_init__(self):
        check_int(self.C, "C", "DirichletEnsemble", 3, 100_000)
        check_int(self.M, "M", "DirichletEnsemble", 2, 10_000)
        check_int(self.ddof, "ddof", "DirichletEnsemble", 0, 1)
        if self.kind not in ("calibrated", "tempered", "overconfident", "misscaled"):
            raise ValueError(f"The 'kind' parameter of DirichletEnsemble must be 'calibrated', 'tempered', "
                             f"'overconfident' or 'misscaled'. Got {self.kind!r} instead.")
        if self.base not in ("balanced", "rare"):
            raise ValueError(f"The 'base' parameter of DirichletEnsemble must be 'balanced' or 'rare'. Got "
                             f"{self.base!r} instead.")

    MIXED_K = (2, 3, 5, 10, 100)  # k='mixed': each item's number of votes drawn from these

    def sample(self, n, *, k=2, rng=None, diagonal=False, counts=False):
        """(mean (n, C), cov (n, C, C), votes (n, k)) for n items.

        ``k``: votes per item, or 'mixed' (each item's k drawn uniformly from :attr:`MIXED_K`; missing votes are
        -1).  ``diagonal``: the class variances (n, C) in place of the covariance.  ``counts``: votes per class
        (n, C) in place of the votes (what C = 1,000 needs)."""
        from .members import from_members

        n = check_int(n, "n", "DirichletEnsemble.sample", 1, 10**8)
        if not (isinstance(k, str) and k == "mixed"):
            k = check_int(k, "k", "DirichletEnsemble.sample", 1, 10**6)
        rng = check_rng(rng, "DirichletEnsemble.sample")
        C, M = self.C, self.M
        if self.base == "rare":
            b = rng.dirichlet(np.r_[5.0, 1.0, np.full(C - 2, 0.2)], n)
            s = rng.uniform(5.0, 50.0, n)[:, None, None]
        else:
            b = rng.dirichlet(np.full(C, self.alpha), n)
            s = self.spread
        g = rng.gamma(s * b[:, None, :] + 1e-3, size=(n, M, C))
        q = g / g.sum(axis=2, keepdims=True)
        del g
        f = q[np.arange(n), rng.integers(0, M, n)]
        if self.ddof == 1:
            qbar = q.mean(axis=1, keepdims=True)
            q = qbar + np.sqrt((M - 1) / M) * (q - qbar)  # a convex combination: still in the simplex
        m, cov = from_members(q, ddof=self.ddof, diagonal=diagonal)
        del q
        if self.kind == "tempered":
            z = np.log(np.clip(f, 1e-300, None)) / self.temperature
            f = np.exp(z - z.max(axis=1, keepdims=True))
            f /= f.sum(axis=1, keepdims=True)
        elif self.kind == "misscaled":
            f = f.copy()
            f[:, 0] *= self.scale
            f /= f.sum(axis=1, keepdims=True)
        elif self.kind == "overconfident":
            cov = cov * self.var_factor
        kk = rng.choice(self.MIXED_K, n) if isinstance(k, str) else np.full(n, k)
        if counts:
            A = np.empty((n, C))
            for lo in range(0, n, 4096):
                A[lo:lo + 4096] = rng.multinomial(kk[lo:lo + 4096], f[lo:lo + 4096])
            return m, cov, A
        K = int(kk.max())
        cdf = np.cumsum(f, axis=1)
        votes = np.empty((n, K), dtype=np.int64)
        for j in range(K):
            votes[:, j] = np.minimum((rng.random((n, 1)) > cdf).sum(axis=1), C - 1)
        votes[np.arange(K)[None, :] >= kk[:, None]] = -1
        return m, cov, votes
