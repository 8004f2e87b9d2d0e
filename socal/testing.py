"""A test of calibration on the raw scores: moment conditions, mergeable statistics, a chi-square score test.

Under the null hypothesis that the predictor is second-order calibrated on its own level sets (Definition 1,
Eq. (calfns) of the paper: E[Y | S] = m and E[f*(X)^2 | S] = m^2 + var), the unbiased k-snapshot targets
z1 = a/k and z2 = a(a-1)/(k(k-1)) (a positives out of k labels) have conditional means m and m^2 + var, so every
moment condition

.. math::  E[(z_1 - m)\\,\\phi(S)] = 0, \\qquad E[(z_2 - m^2 - \\mathrm{var})\\,\\phi(S)] = 0

holds for every bounded :math:`\\phi`.  No perturbation is involved: the perturbation is what makes the *estimate* of
CE2 converge at the paper's rate (Proposition 1); a *test* needs none.

The statistic.  With residuals :math:`r_i = (z_{1i} - m_i, z_{2i} - m_i^2 - v_i)` and test functions
:math:`\\phi` (a tensor-Chebyshev basis, below), :math:`g = \\sum_i r_i \\otimes \\phi(S_i)` and

.. math::  T = g^\\top V^{+} g, \\qquad V = \\sum_i C_i \\otimes \\phi(S_i)\\phi(S_i)^\\top,

where :math:`C_i` is the covariance of :math:`r_i` given the scores *under the null* (a score test).  For k = 2 the
null fixes the law of the labels completely (P(a = 2) = m^2 + var, P(a = 1) = 2(m - m^2 - var)), so :math:`C_i` is
exact: Var z1 = (m - m^2 - var)/2 + var, Cov(z1, z2) = (m^2 + var)(1 - m), Var z2 = (m^2 + var)(1 - m^2 - var).
For k >= 3 the covariance also involves E[f*^3 | S] and E[f*^4 | S], which the null leaves free.  Such a row's
variance condition is first decorrelated from its mean condition, w = r2 - beta(S) r1 with beta = C12 / C11 of the
Beta law with the null's two moments (a function of the scores, so E[w phi(S)] = 0 is a condition of the null too);
then Var(r1) is exact (it has no free moment), and Cov(r1, w) and Var w are the Beta law's scaled by the ratio of
the rows' residual products to them, pooled (an atom of the scores on its own, other cells over equal-count bins of
the mean), the products centred at a fit of their conditional means on the scores, so that an alternative's misfit
is not read as variance, and each cell's block kept positive semidefinite, so that T >= T_mean
(:func:`_many_label_covariance`).  The pooled ratio is unbiased for its pool whatever f*'s law; pooling keeps a
row's own w^2, which correlates with its w, from studentizing it; and the decorrelation keeps the small difference
Var(r2 | r1) from being estimated as a difference of large terms (docs/calibration_test.md, "k >= 3 labels", for
what each of the other ways did to the size).
Given the scores, the rows are independent with mean-zero residuals under the null, so T is asymptotically
chi-square with df = rank V degrees of freedom (the p-value's reference).  The test is conditional on the scores:
any test function computed from the scores alone (not the labels) keeps it valid, which is what lets the basis
adapt to where the scores lie.

The test functions.  Each row's score is placed in a fine fixed grid (512 bins of the mean; 128 bins of the relative
variance var / (m (1 - m)) on a log scale from 1e-6 to 1, with one more bin below 1e-6); every sum above is a sum
over grid cells of per-cell sums, which is what makes the statistics mergeable (chunks, files, dask partitions add,
in any order).  After the pass, each axis is mapped to its marginal mid-rank in (-1, 1) and the basis is
:math:`T_a(x) T_b(y)`, a, b <= l: the ranks spread the scores evenly whatever their scale (an ensemble's variances of
1e-4 and a Bayesian network's of 0.05 get the same resolution), and the grid makes phi constant on each cell, so it
is a function of the scores.  The degree l is fixed by n in advance (:func:`default_degree`), not chosen from the data:
a larger degree sees narrower miscalibration but spreads the same evidence over more degrees of freedom.

Parts.  Besides T (the verdict), a means part and a variances part each test their own condition (:class:`_Order2`):
a variance error alone leaves the means part at its level, and a means error alone the variances part.  Where: the
scores are cut into 3 x 3 regions (terciles of the mean and of the relative variance), each reporting what its votes
say against the claim (:class:`Region`, recounted by :func:`vote_check`); the strongest is the place to look (a
description, not a second test).

Reference.  T and the parts are chi-square in the limit; where a score-only count of effective votes says the limit
is far (rare events, few labels), the p-values come from the statistics' parametric bootstrap under the null's law of
the votes (:mod:`socal.reference`, docs/calibration_test.md, "The tail").

Power.  For a named alternative whose residual means are :math:`\\delta\\,d(S)` (variances off by a factor
1 + delta: d = (0, var); means shifted by delta: d = (1, 2m); tempered means, m -> sigmoid(logit(m)/T) with
1/T = 1 + delta: d = m(1-m) logit(m) (1, 2m)), the statistic is asymptotically noncentral chi-square with
noncentrality :math:`\\delta^2 a^\\top V^+ a`, :math:`a = \\sum_i d(S_i) \\otimes \\phi(S_i)`; solving for 80% power
gives the smallest effect the test would likely see at this n (:attr:`CalibrationTest.detectable`).
"""

from __future__ import annotations

import math
import os
from typing import Any
from dataclasses import dataclass, field

import numpy as np

from .reference import GroupSums, effective_events, group_laws, shapes, simulate_columns, two_point
from .snapshots import beta_moments, target_covariance
from .sources import ArraySource, ChunkSource, DaskSource, check_rows, input_kind, is_empty_chunk
from ._typing import ArrayLike, Chunks, Counts
from .tables import Tabular
from ._validation import (FEASIBILITY_SLACK, Rule, bool_rule, check_float, check_parameters, check_rng,
                          check_scores, choice_rule, int_rule, level_rule)

__all__ = ["calibration_test", "p_value_words", "CalibrationTest", "CalibrationTestStats", "TestPart", "Region",
           "default_degree", "vote_check", "VoteCheck", "grid_bins", "reference_replicates"]

GRID_MEAN = 512  # bins of the mean on [0, 1]
GRID_RELVAR = 128  # bins of var / (m (1 - m)): one below 1e-6, the rest log-uniform on [1e-6, 1]
_RELVAR_FLOOR = 1e-6
_RANK_TOL = 1e-9  # eigenvalues of the standardized V below this fraction of the largest: numerically zero
# columns of the per-cell sums
_COLS2 = ("count", "r1", "r2", "c11", "c12", "c22", "var", "mean", "temper", "temper_m",
          "p12", "p22", "e12", "e22", "many", "r1_many", "w_many",  # from p12: rows with k >= 3
          "msum", "u", "cuu", "epi_u", "epi_q", "u_many", "u2_many", "cuu_many",  # the parts' own conditions
          "cuu_least")  # k >= 3 rows: the least Var u of the laws the reference draws from (_least_var_u)
_LABEL_COLS2 = ("r1", "r2", "u", "epi_u", "p12", "p22", "r1_many", "w_many", "u_many", "u2_many")  # set by the votes
_COLS1 = ("count", "r1", "aleatoric", "epi_weight", "epi", "temper", "msum")
_C2 = {name: j for j, name in enumerate(_COLS2)}  # the order-2 columns, read by name
_C1 = {name: j for j, name in enumerate(_COLS1)}  # the order-1 columns, read by name
_COLUMNS = {1: _C1, 2: _C2}
_CENTER_DEGREE = 3  # k >= 3: the residuals' conditional means are fitted on a basis of at least this degree per axis
_CENTER_ROWS = 20  # ... with at least this many rows per fitted coefficient (fewer rows: a smaller degree)
_POOL_ROWS, _POOL_BINS = 1000, 10  # order 1, k >= 2: Var f* / (m (1 - m)) pooled over equal-count bins of the
# mean with at least ~1,000 rows each (at most 10): a small bin's estimate correlates with its own rows' residuals
_ATOM_ROWS = 50  # order 2, k >= 3: a grid cell with this many such rows (an atom of the scores) pools on its own
_REGION_MIN_ROWS = 30  # a region with fewer rows reports no standardized residual
_ITEMS_KEPT = 10  # the impossible items named by position: the first this many
EVENTS_MIN = 500.0  # the chi-square reference where every basis direction collects at least this many effective
# votes (socal.reference.effective_events); fewer: the simulated reference (docs/calibration_test.md, "The tail")
N_SIM = 999  # the simulated reference's replicates at most: p-values resolve to 1 / 1000, so level 0.001 is exact
SIMULATED = ("simulated", "beta")  # the references drawn from the votes' law: k >= 3 rows over the third moment's
# interval ('simulated', the default where simulated) or at the Beta law ('beta': an assumption; socal.reference)
SIM_GATE = 0.2  # the reference is simulated only where a chi-square p-value is below this (module notes)
SIM_BATCH = 100  # replicates drawn at a time; the draws stop once every statistic has SIM_HITS exceedances
SIM_HITS = 20
MEANS_GATE = 0.01  # the variances part is read under the partial null (means as the votes' fit says) where the means
# part's simulated p-value is at most this (_simulated_pvalues)
DETECTABLE_POWER = 0.8
# the declarative table of the test's options, checked before its pass over the data
TEST_PARAMETERS = {
    "order": choice_rule(2, 1, words="1 or 2"),
    "alpha": level_rule(),
    "degree": int_rule(0, 20, allow_none=True),
    "covariance": choice_rule("null", "sandwich", words="'null' or 'sandwich'"),
    "reference": choice_rule("auto", "chi2", "simulated", "beta", words="'auto', 'chi2', 'simulated' or 'beta'"),
    "rng": Rule(lambda x, name, func, _: (check_rng(x, func, name), x)[1],
                "a numpy.random.Generator, an int seed >= 0 or None"),
    "progress": bool_rule(),
}


def reference_rng(rng):
    """The simulated reference's generator: a Generator as given; a seed (None: 0, so that the same data give the
    same p-value) through the stream 'test reference' of :data:`socal.weights.STREAMS`."""
    if isinstance(rng, np.random.Generator):
        return rng
    from .weights import stream_seed

    return np.random.default_rng(stream_seed(0 if rng is None else int(rng), "test reference"))


def default_degree(n: int, order: int = 2) -> int:
    """The basis degree per axis, fixed by n before the data are seen.

    Order 2: 1 below 2,000 rows, 2 below 20,000, 3 below 200,000, 4 beyond (df = 2 (l+1)^2 = 8, 18, 32, 50).
    Order 1: 2, 4, 6, 8 (df = l + 1 = 3, 5, 7, 9).  The steps keep at least ~100 rows per degree of freedom, where
    the chi-square reference is accurate for bounded residuals, while letting larger samples see narrower
    miscalibration.
    """
    step = 0 if n < 2_000 else 1 if n < 20_000 else 2 if n < 200_000 else 3
    return step + 1 if order == 2 else 2 * (step + 1)


@dataclass(frozen=True)
class TestPart:
    """One part of the statistic: its value, degrees of freedom and p-value."""

    statistic: float
    df: int
    pvalue: float

    __test__ = False  # not a pytest class

    def __format__(self, spec):  # f"{test.variance_part:.2g}" formats the p-value; an empty spec keeps the repr
        return format(float(self.pvalue), spec) if spec else str(self)


@dataclass(frozen=True)
class Region:
    """A region of the scores: what the votes say there against what the scores claim, and how strongly.

    ``part`` is 'mean' (the votes' frequency of 1 against the reported means) or 'variance' (the votes' variance of
    f* against the reported variances).  ``reported`` and ``observed`` are those two numbers averaged over the
    region's items (for 'variance', ``observed`` is mean(z2 - 2 m z1 + m^2) - mean(z1 - m)^2 from the votes: the
    spread of f* about the means, less the region's average error of the means), and ``z`` their difference in
    standard errors under calibration (positive when the votes exceed the claim).  :func:`vote_check` recounts both
    from the rows, so the sentence can be checked by hand.

    The regions are the 3 x 3 terciles of the ranks of the mean and of the relative variance var / (m (1 - m)) over
    the test's grid, so each holds a fair share of the items: ``mean_bins`` and ``relvar_bins`` are the first and
    last grid bins it spans (its exact membership, :func:`grid_bins`), ``mean_range`` and ``var_range`` bound its
    means and variances, ``var_mean`` is its average variance (NaN at order 1).
    """

    part: str
    z: float
    n: int
    mean_range: tuple[float, float]
    var_mean: float
    var_range: tuple[float, float] = (float("nan"), float("nan"))
    reported: float = float("nan")
    observed: float = float("nan")
    mean_bins: tuple[int, int] = (0, GRID_MEAN - 1)
    relvar_bins: tuple[int, int] = (0, GRID_RELVAR - 1)
    mean_core: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def factor(self) -> float:
        """observed / reported (inf where the claim is 0 and the votes are not; NaN where both are)."""
        if self.reported > 0:
            return self.observed / self.reported
        return math.inf if self.observed > 0 else float("nan")

    @property
    def direction(self) -> str:
        """'too small' or 'too large' (the claim against the votes: variances) or 'too low' / 'too high' (means),
        from the sign of observed - reported, which is the sign of ``z``."""
        over = self.observed > self.reported
        if self.part == "mean":
            return "too low" if over else "too high"
        return "too small" if over else "too large"

    def agrees(self, check: VoteCheck) -> bool:
        """Whether a direct count of the votes (:func:`vote_check`) points the way this region's sentence does."""
        if self.part == "mean":
            return (check.frequency > check.mean) == (self.direction == "too low")
        return (check.votes_var > check.var) == (self.direction == "too small")

    def where_words(self) -> str:
        """The region's place in words: its range of m and of var (and their average)."""
        lo, hi = self.mean_range
        mid = (lo + hi) / 2
        where = f"m {lo:.2f}-{hi:.2f}" if hi - lo >= 0.02 else f"m near {mid:.2f}" if 0.01 <= mid <= 0.99 else \
            f"m near {mid:.2g}"
        c_lo, c_hi = self.mean_core
        if math.isfinite(c_lo) and (c_hi - c_lo) <= 0.5 * (hi - lo) and hi - lo >= 0.02:
            # the range's ends can be a few items: say where most of them are (the grid's count-weighted 10th to
            # 90th percentile of the mean)
            core = f"{c_lo:.2f}-{c_hi:.2f}" if c_hi - c_lo >= 0.02 else f"near {(c_lo + c_hi) / 2:.2g}"
            where += f" (80% of its items at m {core})"
        if math.isfinite(self.var_mean):
            where += f" and var {_fmt_range(*self.var_range)} (mean {_sig(self.var_mean)})"
        return where

    def describe(self, claim: bool = True) -> str:
        """The region in words: where, which way and by how much the claim departs from the votes, z, items.
        ``claim`` False: what the votes show against what is reported, without saying which way the scores are
        wrong (for a part that does not reject alone: :meth:`CalibrationTest.summary`)."""
        f = self.factor
        times = (f"x{f:.2g}" if f < 10 else f"x{f:.0f}") if math.isfinite(f) and f > 0 else None
        if self.part == "mean":
            what = (f"the means are {self.direction}: the votes are 1 in {_pct(self.observed)} against a mean of "
                    f"{_pct(self.reported)}")
            shown = f"the votes are 1 in {_pct(self.observed)} against a mean of {_pct(self.reported)}"
        elif self.observed <= 0:
            what = (f"the reported variances are too large: the votes show no spread of f* (estimate "
                    f"{_sig(self.observed)}) against {_sig(self.reported)} reported")
            shown = (f"the votes show no spread of f* (estimate {_sig(self.observed)}) against {_sig(self.reported)} "
                     f"reported")
        else:
            by = ""
            if times is not None:
                by = f" by x{1 / f:.2g}" if f < 1 and 1 / f < 10 else f" by x{1 / f:.0f}" if f < 1 else \
                    f" by {times}"
            what = (f"the reported variances are {self.direction}{by}: the votes' Var f* is {_sig(self.observed)} "
                    f"against {_sig(self.reported)} reported")
            shown = f"the votes' Var f* is {_sig(self.observed)} against {_sig(self.reported)} reported"
        return f"at {self.where_words()}: {what if claim else shown} (z = {self.z:+.1f}, {self.n} items)"


def _pct(x):
    """A frequency as a percentage with two significant digits: 9.0%, 0.31%, 45%."""
    p = 100.0 * x
    if p == 0:
        return "0%"
    return f"{p:.0f}%" if abs(p) >= 10 else f"{p:.2g}%"


def _sig(x):
    """Two significant digits, without an exponent down to 1e-4: 0.42, 0.0063, 2.9e-06."""
    if x == 0:
        return "0"
    if abs(x) >= 0.1:
        return f"{x:.2f}"
    if abs(x) < 1e-4:
        return f"{x:.2g}"
    return f"{x:.{1 - math.floor(math.log10(abs(x)))}f}"


def _fmt_range(lo, hi):
    """'0.0012 to 0.015'; a range narrower than its digits show, 'near 0.0068'."""
    a, b = _sig(lo), _sig(hi)
    return f"near {_sig((lo + hi) / 2)}" if a == b else f"{a} to {b}"


@dataclass(frozen=True)
class CalibrationTest(Tabular):
    """What :func:`calibration_test` found.  ``frame()``: one row per part (joint, means, variances) and per region
    (:mod:`socal.tables`); in a notebook it shows as its summary above that table.

    Attributes
    ----------
    statistic, df, pvalue : float, int, float
        The score statistic T, its degrees of freedom and its p-value against chi-square(df).
    order : int
        2: second-order calibration (means and variances); 1: first-order (means only).
    n : int
    degree : int
        Basis degree per axis.
    mean_part, variance_part : TestPart
        The means part and the variances part, each a test of its own condition (``variance_part`` is None for
        order 1; they do not sum to T).
    regions : tuple of Region
        Standardized residuals by region, largest absolute z first.
    detectable : dict
        Smallest effects detected with 80% power at level ``alpha`` (0.05 when not given): ``'variance_factor'``
        (true variance / reported variance outside [1 - d, 1 + d]; order 2), ``'mean_shift'`` (E[Y] - m off by more
        than d) and ``'temperature'`` (1/T outside [1 - d, 1 + d] for means tempered as sigmoid(logit(m) / T)).
        inf where no effect in that direction changes the statistic (all means at 0.5, say; None in :meth:`to_dict`,
        as strict JSON has no infinity).
    alpha : float or None
        The level, if one was given; then :attr:`rejected` is defined.
    impossible : int
        Rows whose labels cannot occur under calibration (a positive label at mean 0, say); any such row rejects
        with p = 0.
    var_mean : float
        The items' average reported variance (NaN at order 1): the summary turns the variance factor that would
        likely pass unseen into true variances at this level.
    impossible_items : tuple of int
        The positions of the first 10 impossible rows (arrays in memory; empty for a stream of chunks, whose rows
        are counted, not numbered).
    rest_pvalue : float
        The p-value of the other rows (equal to ``pvalue`` when no row is impossible).
    n_sim : int
        0 where the p-values are chi-square tails; otherwise the number of replicates of the votes drawn under the
        null that they come from, per law (the simulated reference, :mod:`socal.reference`).
    n_laws : int
        The laws of the votes simulated: 0 (chi-square), 1 (k = 2 rows only, whose law the null fixes, or
        ``reference='beta'``), or 2 (the ends of the third moment's interval for rows with k >= 3; each p-value is
        the larger of the two laws').
    events : float
        The fewest effective votes any basis direction collects (:func:`socal.reference.effective_events`): below
        ``EVENTS_MIN`` the chi-square is light and the reference is simulated (inf at order 1 and for the sandwich).
    """

    statistic: float
    df: int
    pvalue: float
    order: int
    n: int
    degree: int
    mean_part: TestPart
    variance_part: TestPart | None
    regions: tuple = field(repr=False)
    detectable: dict = field(repr=False)
    alpha: float | None = None
    impossible: int = 0
    var_mean: float = float("nan")
    impossible_items: tuple = ()
    rest_pvalue: float = float("nan")
    n_sim: int = 0
    events: float = math.inf
    n_laws: int = 0

    __test__ = False

    def __bool__(self):
        """Refused: ``if calibration_test(...):`` reads as "if rejected" but would test the object, which is always
        true; the verdict needs a level."""
        raise TypeError("The truth value of a CalibrationTest is ambiguous: use test.pvalue < alpha, or pass alpha= "
                        "and read test.rejected.")

    @property
    def rejected(self) -> bool | None:
        """p-value below ``alpha`` (None when no level was given)."""
        return None if self.alpha is None else bool(self.pvalue < self.alpha)

    @property
    def null(self) -> str:
        what = (f"score test of {self.df} moment conditions, tensor-Chebyshev degree {self.degree} on the scores' "
                f"ranks")
        if self.n_sim:
            ends = (" at each end of the votes' third moment's interval (the larger p-value)" if self.n_laws > 1
                    else "")
            return (f"the statistic's law under {self.n_sim} simulations of the votes under the null{ends} ({what}; "
                    f"the chi-square is light here: {self.events:.3g} effective votes in the sparsest direction)")
        return f"chi-square with {self.df} degrees of freedom ({what})"

    @property
    def reference(self) -> str:
        """'chi-square' or 'simulated' (:attr:`n_sim` replicates): where the p-values come from."""
        return "simulated" if self.n_sim else "chi-square"

    @property
    def p_text(self) -> str:
        """The p-value as the summary prints it: 'p = 1.6e-18', or 'p <= 0.001' for a simulated reference's
        statistic beyond every replicate (a count's bound, not a value: compare such a p-value with another only
        as a bound)."""
        return fmt_p(self.pvalue, 1.0 / (1 + self.n_sim) if self.n_sim else 0.0)

    def where(self) -> Region | None:
        """The region with the largest standardized residual in the part with the stronger evidence (in either part
        where their p-values tie, as simulated ones at their floor do)."""
        parts = {"mean"}
        if self.variance_part is not None:
            pm, pv = self.mean_part.pvalue, self.variance_part.pvalue
            parts = {"variance"} if pv < pm else {"mean"} if pm < pv else {"mean", "variance"}  # a tie: both
        cands = [r for r in self.regions if r.part in parts]
        return max(cands, key=lambda r: abs(r.z)) if cands else None

    def summary(self, alpha: float | None = None) -> str:
        """The result in plain words; never calls a predictor calibrated.  ``alpha`` (default: the test's own, else
        0.05) is the level of the verdict; the effects named as likely unseen stay those at the test's level, and
        the sentence names that level where the two differ."""
        alpha = check_float(alpha, "alpha", "CalibrationTest.summary", 0.0, 1.0, lo_open=True, hi_open=True,
                            allow_none=True)
        alpha = self.alpha if alpha is None else alpha
        level = 0.05 if alpha is None else alpha
        own = 0.05 if self.alpha is None else self.alpha
        what = "second-order calibration" if self.order == 2 else "first-order calibration (of the means)"
        p = fmt_p(self.pvalue)
        lines = []
        floor = 1.0 / (1 + self.n_sim) if self.n_sim else 0.0
        fp = (lambda x: fmt_p(x, floor))
        rest = self.rest_pvalue if math.isfinite(self.rest_pvalue) else self.pvalue
        if self.impossible:
            named = ""
            if self.impossible_items:
                more = self.impossible > len(self.impossible_items)
                named = (" (item" + ("s" if self.impossible > 1 else "") + " " +
                         ", ".join(str(i) for i in self.impossible_items) + (", ..." if more else "") + ")")
            lines.append(f"{what} rejected, p = 0: {self.impossible} item(s){named} have labels that cannot occur "
                         f"if the scores are calibrated (a positive label at mean 0, a negative at mean 1, or "
                         f"disagreeing labels where var = m (1 - m)); one such item alone sets p to 0.  The other "
                         f"items:")
            p = fp(rest)
        else:
            p = fp(self.pvalue)
        ends = " at each end of the votes' third moment's interval, the larger p" if self.n_laws > 1 else ""
        ref = (f"; p-values from {self.n_sim:,} simulations of the votes under calibration{ends}, as the chi-square "
               f"is light here" if self.n_sim else "")
        if rest < level:
            head = f"{what} rejected at level {level:g}, {p} (T = {self.statistic:.1f} on {self.df} df{ref})"
            reg = self.where()
            if self.variance_part is not None:
                head += (f"; means: {fp(self.mean_part.pvalue)}, variances: "
                         f"{fp(self.variance_part.pvalue)}")
            lines.append(head + ".")
            if reg is not None:
                own_p = self.mean_part.pvalue if reg.part == "mean" else self.variance_part.pvalue
                if own_p <= level:
                    lines.append(f"The evidence is strongest in the {reg.part}s {reg.describe()}.")
                else:  # no part rejects alone: name the largest residual, claim no direction (issue 73)
                    lines.append(f"Neither the means nor the variances reject alone at level {level:g}: the evidence "
                                 f"is in the two together.  The largest residual, not significant alone, is in the "
                                 f"{reg.part}s {reg.describe(claim=False)}.")
        else:
            lines.append(f"No evidence against {what} at level {level:g} ({p}, T = {self.statistic:.1f} on "
                         f"{self.df} df{ref}).  That is not a proof of calibration: the test sees only errors large "
                         f"enough for n = {self.n}.")
        power = "80% power" if level == own else f"80% power at level {own:g}"
        lines.append(f"Likely unseen at this n ({power}): " + self.unseen() + ".")
        return "\n".join(lines)

    def unseen(self) -> str:
        """The effects the test would likely miss, in words (see :attr:`detectable`)."""
        out = []
        d = self.detectable
        if d and all(x == 0 for x in d.values()):  # a level of at least the power (see _noncentrality)
            return ("nothing: at this level the test rejects with probability at least 80% even where the scores "
                    "are calibrated")
        if "variance_factor" in d and np.isfinite(d["variance_factor"]):
            dv = d["variance_factor"]
            v = self.var_mean
            known = math.isfinite(v) and v > 0  # the factor in true variances at the average reported one
            if dv < 1:
                at = (f" (at the average reported variance {_sig(v)}: a true variance between {_sig(v * (1.0 - dv))} "
                      f"and {_sig(v * (1.0 + dv))})") if known else ""
                out.append(f"variances reported between x{1.0 / (1.0 + dv):.2f} and x{1.0 / (1.0 - dv):.2f} of "
                           f"the truth{at}")
            else:
                at = (f"; at the average reported variance {_sig(v)}: a true variance below {_sig(v * (1.0 + dv))}"
                      if known else "")
                out.append(f"variances reported above x{1.0 / (1.0 + dv):.2f} of the truth (too small by less than "
                           f"a factor {1.0 + dv:.1f}, or too large by any factor{at})")
        if "mean_shift" in d and np.isfinite(d["mean_shift"]):
            ms = d["mean_shift"]
            out.append(f"means off by less than {ms:.3f}" if ms >= 0.001 else f"means off by less than {ms:.2g}")
        if "temperature" in d and np.isfinite(d["temperature"]):
            dt = d["temperature"]
            hi = "above" if dt >= 1 else f"{1.0 / (1.0 - dt):.2f}"
            out.append(f"means tempered by T between {1.0 / (1.0 + dt):.2f} and {hi}")
        return "; ".join(out) if out else "nothing could be computed (too few distinct scores)"

    def __str__(self) -> str:
        return self.summary()

    def __format__(self, spec):
        """``f"{test:.3g}"`` formats the p-value; an empty spec is str() (the summary)."""
        return format(float(self.pvalue), spec) if spec else str(self)

    def _rows(self):
        parts = [("joint (the verdict)", self.statistic, self.df, self.pvalue), ("means", self.mean_part.statistic,
                                                                                 self.mean_part.df,
                                                                                 self.mean_part.pvalue)]
        if self.variance_part is not None:
            parts.append(("variances", self.variance_part.statistic, self.variance_part.df,
                          self.variance_part.pvalue))
        out = [{"kind": "test", "part": name, "statistic": t, "df": df, "pvalue": p, "reference": self.reference,
                "where": "", "direction": "", "reported": float("nan"), "observed": float("nan"),
                "factor": float("nan"), "z": float("nan"), "items": self.n} for name, t, df, p in parts]
        for r in self.regions:
            out.append({"kind": "region", "part": r.part, "statistic": float("nan"), "df": None,
                        "pvalue": float("nan"), "reference": "", "where": r.where_words(), "direction": r.direction,
                        "reported": r.reported, "observed": r.observed, "factor": r.factor, "z": r.z, "items": r.n})
        return out

    def to_dict(self) -> dict:
        """JSON-safe summary: the statistic and its parts, the verdict at ``alpha``, where the evidence is, and the
        detectable effects (None where none is detectable)."""
        part = (lambda p: None if p is None else {"statistic": p.statistic, "df": p.df, "pvalue": p.pvalue})
        reg = self.where()
        return {"order": self.order, "n": self.n, "statistic": self.statistic, "df": self.df, "pvalue": self.pvalue,
                "degree": self.degree, "alpha": self.alpha, "rejected": self.rejected, "impossible": self.impossible,
                "var_mean": self.var_mean if math.isfinite(self.var_mean) else None,
                "impossible_items": list(self.impossible_items), "reference": self.reference, "n_sim": self.n_sim,
                "n_laws": self.n_laws, "events": self.events if math.isfinite(self.events) else None,
                "mean_part": part(self.mean_part), "variance_part": part(self.variance_part),
                "where": None if reg is None else reg.describe(),
                # strict JSON has no Infinity: a direction no effect of which is detectable at this n is None
                "detectable": {k: (float(d) if math.isfinite(d) else None) for k, d in self.detectable.items()}}


def grid_bins(mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's bin of the test's grid: the mean's (512 equal bins of [0, 1]) and the relative variance's
    (var / (m (1 - m)): bin 0 below 1e-6, then 127 log-uniform bins up to 1).  The test sums every row into its cell,
    and a :class:`Region` is a rectangle of these bins."""
    m, v = np.asarray(mean, float), np.asarray(var, float)
    mi = np.minimum((m * GRID_MEAN).astype(np.intp), GRID_MEAN - 1)
    q = m * (1.0 - m)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(q > 0, v / np.where(q > 0, q, 1.0), 0.0)
    logt = np.log10(np.maximum(t, _RELVAR_FLOOR))  # in [-6, 0]
    ti = np.where(t < _RELVAR_FLOOR, 0, 1 + ((logt + 6.0) / 6.0 * (GRID_RELVAR - 1)).astype(np.intp))
    return mi, np.minimum(ti, GRID_RELVAR - 1)


@dataclass(frozen=True)
class VoteCheck(Tabular):
    """What the votes say about a set of items, counted directly (:func:`vote_check`).

    ``mean`` and ``frequency``: the reported means' average and the votes' frequency of 1 (sum of a / k over the
    items, / n); ``var`` and ``votes_var``: the reported variances' average and the votes' variance of f*,
    mean(z2 - 2 m z1 + m^2) - mean(z1 - m)^2 with z1 = a / k and z2 = a (a - 1) / (k (k - 1)) (unbiased for
    E[(f* - m)^2] less the items' average error of the means).  ``mean_factor`` and ``var_factor`` are the votes'
    over the claim's."""

    n: int
    mean: float
    frequency: float
    var: float
    votes_var: float

    @property
    def mean_factor(self) -> float:
        return self.frequency / self.mean if self.mean > 0 else float("nan")

    @property
    def var_factor(self) -> float:
        return self.votes_var / self.var if self.var > 0 else float("nan")

    @property
    def var_words(self) -> str:
        """The variance factor in words: ``x29`` or, where the unbiased Var f* of the votes is at or below 0 (no
        spread of f* to compare with), that phrase: a negative factor would read as nonsense."""
        return f"x{self.var_factor:.3g}" if self.votes_var > 0 else "no spread of f* in the votes"

    def summary(self) -> str:
        """The recount in one sentence: the votes' frequency against the mean, their Var f* against var."""
        return (f"{self.n} items: votes' frequency {self.frequency:.4g} against the mean {self.mean:.4g}; votes' Var f* "
                f"{self.votes_var:.3g} against var {self.var:.3g} ({self.var_words}).")

    def _rows(self):
        return [{"items": self.n, "mean": self.mean, "frequency": self.frequency, "mean_factor": self.mean_factor,
                 "var": self.var, "votes_var": self.votes_var, "var_factor": self.var_factor}]

    def __str__(self):
        return (f"{self.n} items: votes 1 in {_pct(self.frequency)} against a mean of {_pct(self.mean)} (x"
                f"{self.mean_factor:.3g}); the votes' Var f* {_sig(self.votes_var)} against {_sig(self.var)} "
                f"reported ({self.var_words})")


def vote_check(mean: ArrayLike, var: ArrayLike, labels: ArrayLike | None = None, *, counts: Counts | None = None,
               region: Region | None = None, mean_range: tuple[float, float] | None = None,
               var_range: tuple[float, float] | None = None) -> VoteCheck:
    """Count what the votes say about the items of a region, directly from the rows: the check of a sentence the
    calibration test prints ("the reported variances are too small by x29 ...", :meth:`Region.describe`).

    Parameters
    ----------
    mean, var : array_like, shape (n,)
        The raw scores, as given to :func:`calibration_test`.
    labels : array_like, shape (n, k), or counts=(positives, trials)
        The votes (k >= 2).
    region : Region, optional
        A region of a test's :attr:`CalibrationTest.regions`: its items exactly (the rows in its grid bins,
        :func:`grid_bins`); the numbers equal the region's ``reported`` and ``observed`` up to rounding.
    mean_range, var_range : (low, high), optional
        Instead of ``region``: the items with mean and variance in these closed ranges (all items when none is
        given).

    Examples
    --------
    >>> import numpy as np, socal
    >>> m, v, f, y = socal.synthetic.overconfident_population().sample_raw(5000, rng=0)
    >>> test = socal.calibration_test(m, v, y)
    >>> r = [r for r in test.regions if r.part == "variance"][0]
    >>> check = socal.vote_check(m, v, y, region=r)
    >>> bool(np.isclose(check.votes_var, r.observed)), bool(np.isclose(check.var, r.reported))
    (True, True)
    """
    func = "vote_check"
    m, v, a, k = check_rows(func, 2, mean, var, labels, counts, 2, raw=True)
    if region is not None and (mean_range is not None or var_range is not None):
        raise ValueError(f"Pass either 'region' or 'mean_range' / 'var_range' to {func}, not both.")
    keep = np.ones(m.shape[0], bool)
    if region is not None:
        if not isinstance(region, Region):
            raise ValueError(f"The 'region' parameter of {func} must be a Region of a CalibrationTest. Got "
                             f"{type(region).__name__} instead.")
        mi, ti = grid_bins(m, v)
        keep = ((mi >= region.mean_bins[0]) & (mi <= region.mean_bins[1]) & (ti >= region.relvar_bins[0])
                & (ti <= region.relvar_bins[1]))
    for rng_, x, name in ((mean_range, m, "mean_range"), (var_range, v, "var_range")):
        if rng_ is not None:
            lo, hi = (check_float(b, name, func, -math.inf, math.inf) for b in rng_)
            keep &= (x >= lo) & (x <= hi)
    n = int(keep.sum())
    if n == 0:
        raise ValueError(f"{func}: no item lies in the region or ranges given.")
    keep &= ~impossible_rows(m, v, a, k)  # as the test's statistics, which count them apart
    n = int(keep.sum())
    if n == 0:
        raise ValueError(f"{func}: every item in the region or ranges given has votes the null calls impossible.")
    m, v, a, k = m[keep], v[keep], a[keep], k[keep]
    z1, z2 = a / k, _falling(a, k, 2)
    r1 = float(np.mean(z1 - m))
    spread = float(np.mean(z2 - 2.0 * m * z1 + m * m))
    return VoteCheck(n=n, mean=float(m.mean()), frequency=float(z1.mean()), var=float(v.mean()),
                     votes_var=spread - r1 * r1)


def impossible_rows(m, v, a, k):
    """Rows whose votes cannot occur under second-order calibration: a positive vote at mean 0, a negative at mean
    1, disagreeing votes where var = m (1 - m) (f* is then 0 or 1), or a variance above m (1 - m)."""
    q = m * (1.0 - m)
    bad = ((m == 0) & (a > 0)) | ((m == 1) & (a < k))
    bad |= (q > 0) & (v >= q * (1.0 - 1e-12)) & (a > 0) & (a < k)
    return bad | (v > q + FEASIBILITY_SLACK)


def chi2_sf(t, df):
    """The chi-square tail of a statistic (1 with no degrees of freedom)."""
    from scipy import stats  # on first use: scipy.stats is slow to import, and import socal stays fast

    return float(stats.chi2.sf(t, df)) if df > 0 else 1.0


def p_value_words(p, floor=0.0):
    """:func:`fmt_p` without its leading "p = " or "p " ('0.003', '< 1e-300', '<= 0.001'), for a table's cell."""
    return fmt_p(p, floor).removeprefix("p = ").removeprefix("p ")


def fmt_p(p, floor=0.0):
    """'p = 0.003', 'p = 1.6e-33', or 'p < 1e-300' where the chi-square tail underflows; with a simulated reference
    whose smallest count-based p-value is ``floor`` (1 / (1 + replicates)), 'p <= 0.001' at that floor."""
    if floor and p <= floor:  # at the replicates' floor: beyond every replicate, a bound
        return f"p <= {floor:.2g}"
    return "p < 1e-300" if p == 0 else f"p = {p:.2g}" if p < 0.001 else f"p = {p:.3f}"


def _logit_slope(m):
    """m (1 - m) logit(m): d m / d(1/T) at T = 1 for m -> sigmoid(logit(m) / T) (0 at m in {0, 1})."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = m * (1.0 - m) * (np.log(m) - np.log1p(-m))
    return np.where((m > 0) & (m < 1), g, 0.0)


def _least_var_u(m, mu2, k, c11):
    """Per row with k >= 3 labels, the least Var u = Var z2 - 4 m Cov(z1, z2) + 4 m^2 Var z1 over three laws of f*
    with the null's two moments: the Beta law and the two with an atom at 0 or at 1
    (:func:`socal.reference.two_point`).

    With E f* and E f*^2 fixed, Cov(z1, z2) and Var z2 are linear in E f*^3 and E f*^4
    (:func:`socal.snapshots.target_covariance`; Var z1 has no free moment), and a mixture of laws with the same two
    moments has their averages.  So Var u is linear along the segments from the Beta law to the two-point laws,
    which the simulated reference draws from (:func:`socal.reference.shapes`), and its least there is at one of the
    three.  (Other laws can have less: f* = m -+ sqrt(var) has the least spread of (f* - m)^2.  A floor at this
    least is a choice of statistic, not a bound the test's size rests on: :meth:`_Order2.lam_u`.)"""
    def var_u(moments):
        _, t12, t22 = target_covariance(*moments, k)
        return t22 - 4.0 * m * t12 + 4.0 * m * m * c11

    least = var_u(beta_moments(m, mu2))
    for end in (0, 1):
        x, q = two_point(m, mu2, end)
        least = np.minimum(least, var_u((m, mu2, q * x ** 3 + (1.0 - q) * end, q * x ** 4 + (1.0 - q) * end)))
    return np.maximum(least, 0.0)


def _decorrelate(m, mu2, k, c11, r1, r2):
    """Rows with k >= 3 labels: (beta, w = r2 - beta r1, Var w) under :func:`socal.snapshots.beta_law` with the
    null's two moments (a Beta law; a point mass or a Bernoulli at the ends).

    Cov(z1, z2 | S) and Var(z2 | S) involve E[f*^3 | S] and E[f*^4 | S] (:func:`socal.snapshots.target_covariance`),
    which the null leaves free; the Beta law's fill them in here.  beta = C12 / C11 makes w uncorrelated with r1
    under that law, and beta is a function of the scores, so E[w phi(S)] = 0 is a moment condition of the null
    whatever f*'s law."""
    _, c12, c22 = target_covariance(*beta_moments(m, mu2), k)
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(c11 > 0, c12 / np.where(c11 > 0, c11, 1.0), 0.0)
    return beta, r2 - beta * r1, np.maximum(c22 - beta * c12, 0.0)


def _falling(a, k, j):
    """a (a-1) ... (a-j+1) / (k (k-1) ... (k-j+1)): the unbiased estimate of E[f*^j] (0 where k < j)."""
    num = np.ones_like(a)
    den = np.ones_like(k)
    for i in range(j):
        num = num * (a - i)
        den = den * (k - i)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k >= j, num / np.where(k >= j, den, 1.0), 0.0)


class CalibrationTestStats:
    """Mergeable statistics of the calibration test: per-cell sums on a fixed grid of the scores.

    Parameters
    ----------
    order : {2, 1}
        2: second-order (scores (mean, var), labels with k >= 2); 1: first-order (means, labels with k >= 1).

    Every row adds to one cell of a fixed grid (module docstring) sums that are linear in it: residuals, null
    covariances and the alternatives' directions.  Chunks, files and dask partitions therefore merge exactly (up to
    float summation order) in any order; memory is 5 MB whatever n.

    Examples
    --------
    >>> import numpy as np, socal
    >>> m, v, f, y = socal.synthetic.calibrated_population().sample_raw(4000, rng=0)
    >>> a = socal.CalibrationTestStats().update(m[:1000], v[:1000], y[:1000])
    >>> b = socal.CalibrationTestStats().update(m[1000:], v[1000:], y[1000:])
    >>> whole = socal.CalibrationTestStats().update(m, v, y)
    >>> bool(np.allclose((a + b).sums, whole.sums)), (a + b).n
    (True, 4000)
    """

    def __init__(self, *, order: int = 2, covariance: str = "null") -> None:
        if isinstance(order, bool) or order not in (1, 2):
            raise ValueError(f"The 'order' parameter of CalibrationTestStats must be 1 or 2. Got {order!r} instead.")
        if covariance not in ("null", "sandwich"):
            raise ValueError(f"The 'covariance' parameter of CalibrationTestStats must be 'null' or 'sandwich'. Got "
                             f"{covariance!r} instead.")
        self.order = int(order)
        self.covariance = covariance
        cols = _COLS2 if self.order == 2 else _COLS1
        cells = GRID_MEAN * (GRID_RELVAR if self.order == 2 else 1)
        self.sums = np.zeros((len(cols), cells))
        self.impossible = 0
        self.impossible_items = ()  # the first _ITEMS_KEPT such rows' positions
        self.groups = GroupSums()  # order 2, null covariance: per (cell, k) sums for the simulated reference

    @property
    def n(self) -> int:
        return int(round(float(self.sums[_COLUMNS[self.order]["count"]].sum())))

    def update(self, mean: ArrayLike, var: ArrayLike | None = None, labels: ArrayLike | None = None, *,
               counts: Counts | None = None) -> CalibrationTestStats:
        """Add a chunk of raw scores and labels (or ``counts=(positives, trials)``); returns ``self``.  At order 1
        ``var`` must be None, as in :func:`calibration_test`: the means alone are tested, and a variance passed
        here would be silently unread."""
        if self.order == 1 and var is not None:
            raise ValueError("The 'var' parameter of CalibrationTestStats.update must be None for order=1 (the means "
                             "alone are tested): call update(mean, labels=labels) or update(mean, None, labels).")
        if is_empty_chunk(mean, var, labels, counts):  # adds nothing, as in calibration_test's chunks
            return self
        rows = check_rows("CalibrationTestStats.update", self.order, mean, var, labels, counts, self.order, raw=True)
        return self.add_validated(*rows)

    def add_validated(self, m: np.ndarray, v: np.ndarray | None, a: np.ndarray,
                      k: np.ndarray, offset: int | None = 0) -> CalibrationTestStats:
        """Accumulate validated float arrays (the pass of :func:`calibration_test` over any source); ``offset`` is
        the position of the first row in the whole data (the items named as impossible are counted from it; None: not
        known, and no item is named)."""
        if m.shape[0] == 0:
            return self
        z1 = a / k
        mi = np.minimum((m * GRID_MEAN).astype(np.intp), GRID_MEAN - 1)
        g = _logit_slope(m)
        # labels impossible under the null: a positive at m = 0, a negative at m = 1
        bad = ((m == 0) & (a > 0)) | ((m == 1) & (a < k))
        if self.order == 1:
            # Var(a/k | S) = m (1 - m) / k + (1 - 1/k) Var(f* | S), and the first-order null leaves Var f*
            # free.  A row's own estimate is far noisier than Var(a/k) near m = 0 or 1, which made the
            # test liberal; so the epistemic part is pooled after the pass, as a ratio to m (1 - m) over
            # equal-count bins of the mean (_pooled_variance).  The row's estimate z2 - 2 m z1 + m^2 is
            # unbiased for E[(f* - m)^2] = Var f* under the null, less correlated with the residual z1 - m
            # than z2 - m^2 is (for k = 2, (1 - 2 m) Var f* against (1 - m)(m^2 + Var f*)), and unchanged
            # by swapping the classes (m -> 1 - m, a -> k - a).
            q = m * (1.0 - m)
            w = 1.0 - 1.0 / k
            r1 = z1 - m
            cols = dict(count=np.ones_like(m), r1=r1, aleatoric=q / k, epi_weight=w * q,
                        epi=w * (_falling(a, k, 2) - 2.0 * m * z1 + m * m), temper=g, msum=m)
            if self.covariance == "sandwich":  # the row's own squared residual, no pooled epistemic part
                cols.update(aleatoric=r1 ** 2, epi_weight=np.zeros_like(m), epi=np.zeros_like(m))
            cell = mi
        else:
            q = m * (1.0 - m)
            mi, ti = grid_bins(m, v)
            cell = mi * GRID_RELVAR + ti
            mu2 = m * m + v  # the null's E[f*^2 | S]
            z2 = _falling(a, k, 2)
            # k = 2: the null's exact covariance (module notes); rows with k >= 3 are decorrelated below
            c11 = (m - mu2) / k + mu2 - m * m  # Var(a/k | S) = E[f* (1 - f*)]/k + Var f*: no free moment, any k
            c12 = mu2 - m * mu2
            c22 = mu2 - mu2 * mu2
            # where var = m (1 - m), f* is 0 or 1: disagreeing labels are impossible; and a score with var above
            # m (1 - m) (a perturbed one: raw scores are refused there) cannot be calibrated, as E[f*^2 | S] <= m
            bad |= impossible_rows(m, v, a, k)
            r1, r2 = z1 - m, z2 - mu2
            # the variance's own condition: u = z2 - 2 m z1 + m^2 - var estimates E[(f* - m)^2 | S] - var, which is
            # Var(f* | S) - var when the means are right; its null variance from the targets' covariance (exact for
            # k = 2; the Beta law's moments for k >= 3, as for w below)
            u = z2 - 2.0 * m * z1 + m * m - v
            three = k >= 3
            if three.any():
                _, t12, t22 = target_covariance(*beta_moments(m, mu2), k)
                t12, t22 = np.where(three, t12, c12), np.where(three, t22, c22)
            else:
                t12, t22 = c12, c22
            cuu = np.maximum(t22 - 4.0 * m * t12 + 4.0 * m * m * c11, 0.0)
            epi = 1.0 - 1.0 / k
            manyf = three.astype(float)
            extra = dict(msum=m, u=u, cuu=cuu, epi_u=epi * u, epi_q=epi * q, u_many=manyf * u,
                         u2_many=manyf * u * u, cuu_many=manyf * cuu)
            if three.any():
                extra["cuu_least"] = manyf * _least_var_u(m, mu2, np.maximum(k, 3), c11)
            beta_g = np.zeros_like(m)
            mb = m  # m - beta / 2 (below)
            p12 = p22 = e12 = e22 = many = r1m = wm = None  # no row with k >= 3: those sums stay 0 (not added)
            if self.covariance == "sandwich":  # the rows' own residual products: consistent under any k, estimated
                c11, c12, c22 = r1 * r1, r1 * r2, r2 * r2
            elif (k >= 3).any():
                three = k >= 3
                beta, w, cond = _decorrelate(m, mu2, k, c11, r1, r2)
                beta_g = np.where(three, beta, 0.0)
                # the rows' residual products, and the Beta law's Var w and sqrt(C11 Var w): the pooled ratios'
                # parts (_many_label_covariance); the cells' Cov(r1, w) and Var w are the Beta law's until then
                p12, p22, e12, e22 = r1 * w, w * w, np.sqrt(np.maximum(c11, 0.0) * cond), cond
                if three.all():  # every row (the usual case: one k for all items)
                    r2, mb, c12, c22, many = w, m - beta / 2.0, np.zeros_like(m), cond, np.ones_like(m)
                    r1m, wm = r1, w
                else:
                    many = three.astype(float)
                    p12, p22, e12, e22 = many * p12, many * p22, many * e12, many * e22
                    r1m, wm = many * r1, many * w
                    r2, mb = np.where(three, w, r2), m - np.where(three, beta, 0.0) / 2.0
                    c12, c22 = np.where(three, 0.0, c12), np.where(three, cond, c22)
            # the alternatives' directions (1, 2 m) and g (1, 2 m) read, for w = r2 - beta r1, 2 m - beta and
            # g (2 m - beta): the columns hold m - beta / 2 (m itself for k = 2)
            cols = dict(count=np.ones_like(m), r1=r1, r2=r2, c11=c11, c12=c12, c22=c22, var=v, mean=mb, temper=g,
                        temper_m=mb * g, p12=p12, p22=p22, e12=e12, e22=e22, many=many, r1_many=r1m, w_many=wm,
                        **extra)
            if self.covariance == "null":  # the law the simulated reference draws from (socal.reference)
                group_cols = (np.ones_like(m), m, mu2, beta_g, beta_g * m, m * m - v, _falling(a, k, 3))
        size = self.sums.shape[1]
        if self.groups is not None and self.order == 2 and self.covariance == "null":
            ok = ~bad
            self.groups.add(cell[ok], k[ok], [c[ok] for c in group_cols])
        if bad.any():  # counted apart: they decide the p-value (0) but would distort the statistic of the rest
            ok = ~bad
            if offset is not None:  # positions are known for arrays in memory, not for a stream of chunks
                where = np.flatnonzero(bad)[:_ITEMS_KEPT] + offset
                self.impossible_items = tuple(sorted(set(self.impossible_items) | set(map(int, where))))[:_ITEMS_KEPT]
            cell, cols = cell[ok], {name: None if w is None else w[ok] for name, w in cols.items()}
        index = _COLUMNS[self.order]
        for name, w in cols.items():
            if w is not None:
                self.sums[index[name]] += np.bincount(cell, weights=w, minlength=size)
        self.impossible += int(np.count_nonzero(bad))
        return self

    def __getstate__(self):
        """Pickled (a checkpoint, a dask transfer) with the occupied cells only: the grid has 65,536 cells at order
        2, most of them empty; an empty cell's sums are all 0, so the state is exact."""
        occ = np.flatnonzero(self.sums[_COLUMNS[self.order]["count"]])
        return {"order": self.order, "covariance": self.covariance, "impossible": self.impossible,
                "impossible_items": self.impossible_items, "cells": self.sums.shape[1], "occ": occ,
                "sums": self.sums[:, occ], "groups": self.groups}

    def __setstate__(self, state):
        self.order, self.covariance, self.impossible = state["order"], state["covariance"], state["impossible"]
        self.impossible_items = tuple(state.get("impossible_items", ()))
        self.groups = state.get("groups")
        width = len(_COLUMNS[self.order])  # a state pickled before a column was added: its new columns are 0
        self.sums = np.zeros((max(width, state["sums"].shape[0]), state["cells"]))
        self.sums[:state["sums"].shape[0], state["occ"]] = state["sums"]

    def merge(self, other: CalibrationTestStats) -> CalibrationTestStats:
        """Exact, associative merge."""
        if not isinstance(other, CalibrationTestStats) or other.order != self.order or \
                other.covariance != self.covariance:
            raise ValueError("Only CalibrationTestStats of the same order and covariance can be merged. Got "
                             f"{type(other).__name__}" + (f" of order {other.order}" if
                                                           isinstance(other, CalibrationTestStats) else "") + ".")
        if other is self:
            raise ValueError("CalibrationTestStats merged with themselves would count every row twice; merge "
                             "statistics of different chunks.")
        out = CalibrationTestStats(order=self.order, covariance=self.covariance)
        out.sums = self.sums + other.sums
        out.impossible = self.impossible + other.impossible
        out.impossible_items = tuple(sorted(set(self.impossible_items) | set(other.impossible_items)))[:_ITEMS_KEPT]
        out.groups = None if self.groups is None or other.groups is None else self.groups.merged(other.groups)
        return out

    __add__ = merge

    def __radd__(self, other):
        """``0 + stats``: the start of Python's ``sum(parts)``, so that the parts of a stream add up with ``sum``."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self.merge(CalibrationTestStats(order=self.order, covariance=self.covariance))
        return NotImplemented

    def test(self, *, alpha: float | None = None, degree: int | None = None, reference: str = "auto",
             rng: int | np.random.Generator | None = None, gate: float | None = None,
             resolution: float | None = None) -> CalibrationTest:
        """The test from these statistics (see :func:`calibration_test`).  ``gate``: with ``reference='auto'``, the
        chi-square p-value below which the reference is simulated (default SIM_GATE, 0.2); a caller that reads the
        p-value only at a smaller level, as the multiclass verdict does, may lower it (a p-value above the gate is
        the chi-square's).  ``resolution``: the smallest level the caller reads the p-value at (default 1 / (1 +
        N_SIM), 0.001); a statistic beyond every one of the first N_SIM replicates draws on until one reaches it or
        1 / resolution - 1 are drawn, so that the level is decided by a count of replicates
        (:func:`_replicate_pvalues`).  The multiclass verdict reads each class at
        its weight times its level, 2.5e-4 at C = 100."""
        for name, x in (("gate", gate), ("resolution", resolution)):
            if x is not None and not (isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 1):
                raise ValueError(f"The '{name}' parameter of CalibrationTestStats.test must be a number in (0, 1]. "
                                 f"Got {x!r} instead.")
        return self._test("CalibrationTestStats.test", alpha, degree, reference=reference, rng=rng, gate=gate,
                          resolution=resolution)

    def _test(self, func, alpha, degree, checked=False, reference="auto", rng=None, gate=None, resolution=None):
        """:meth:`test`, with ``func`` (the caller the user called) in the messages; ``checked``: ``alpha``,
        ``degree``, ``reference`` and ``rng`` were validated by the caller (:data:`TEST_PARAMETERS`, before its
        pass); ``gate``: the chi-square p-value below which ``reference='auto'`` simulates (default SIM_GATE; a
        caller that reads the p-value at a smaller level only, as the multiclass verdict does, may lower it)."""
        if not checked:
            got = check_parameters(TEST_PARAMETERS, func, dict(alpha=alpha, degree=degree, reference=reference,
                                                                 rng=rng))
            alpha, degree = got["alpha"], got["degree"]
        n = self.n + self.impossible
        if n < 10:
            what = "the statistics hold" if func.startswith("CalibrationTestStats") else "the data hold"
            raise ValueError(f"{func} needs at least 10 items; {what} {n}.")
        degree = default_degree(n, self.order) if degree is None else degree
        if reference in SIMULATED and (self.order != 2 or self.covariance != "null"):
            raise ValueError(f"The 'reference' parameter of {func} can be 'simulated' only for order=2 with "
                             f"covariance='null' (the simulation draws the votes under the null's law of a label "
                             f"pair). Got order={self.order}, covariance={self.covariance!r}.")
        return _score_test(self, n, degree, alpha, reference, reference_rng(rng), gate, resolution)

    def __repr__(self):
        return f"CalibrationTestStats(order={self.order}, n={self.n})"


def _mid_ranks(counts):
    """Marginal mid-ranks in (-1, 1) of the bins of an axis (only occupied bins are used)."""
    c = counts.astype(float)
    if not c.sum() > 0:  # no rows left to rank (every item's labels were impossible under its scores)
        return np.zeros_like(c)
    cdf = (np.cumsum(c) - c / 2.0) / c.sum()
    return 2.0 * cdf - 1.0


def quad_form(vec, evecs, evals):
    """vec' V^+ vec in the eigenbasis kept."""
    proj = evecs.T @ vec
    return float(np.sum(proj * proj / evals))


def pinv_parts(V):
    """Eigenvectors and eigenvalues of V kept (standardized by its diagonal): V^+ acts as D E diag(1/l) E' D."""
    d = np.sqrt(np.clip(np.diag(V), 0.0, None))
    keep_diag = d > 0
    D = np.where(keep_diag, 1.0 / np.where(keep_diag, d, 1.0), 0.0)
    Vs = V * D[:, None] * D[None, :]
    evals, evecs = np.linalg.eigh(Vs)
    top = evals.max() if evals.size else 0.0
    keep = evals > _RANK_TOL * top if top > 0 else np.zeros_like(evals, dtype=bool)
    return D[:, None] * evecs[:, keep], evals[keep]


def _mirror_bins(cnt, bins):
    """Equal-count bins of cells in order (counts ``cnt``): each cell's bin, its other bin and its share in its own.

    Each cell's bin comes from the share s of rows below its middle, counted from the nearer end: swapping the
    classes (m -> 1 - m) mirrors the cells and their shares (s -> 1 - s), so it mirrors the bins too, a cell on a bin
    boundary included (the shares at the cells' right ends put the same cell in another bin the other way round).
    A cell at s = 1/2 exactly, with an even number of bins, lies on the middle boundary, which has no mirror-image
    side: it counts half in each of the two middle bins.  2 N s is an integer (counts of rows): no rounding decides."""
    total = cnt.sum()
    twice = 2.0 * np.cumsum(cnt) - cnt  # 2 N s
    low = np.floor(twice * bins / (2.0 * total)).astype(np.intp)
    high = bins - 1 - np.floor((2.0 * total - twice) * bins / (2.0 * total)).astype(np.intp)
    b = np.clip(np.where(twice < total, low, high), 0, bins - 1)
    middle = (twice == total) & (bins % 2 == 0)
    b2 = np.where(middle, bins // 2, b)  # the middle cell's other bin (the cell's own elsewhere)
    b = np.where(middle, bins // 2 - 1, b)
    return b, b2, np.where(middle, 0.5, 1.0)


def _bin_ratio(num, den, b, b2, share, bins, clip=None):
    """Per cell, sum num / sum den over its bin (a middle cell: the mean of its two bins' ratios; 0 for an empty
    bin)."""
    tops = np.bincount(b, weights=share * num, minlength=bins) + np.bincount(b2, weights=(1.0 - share) * num,
                                                                           minlength=bins)
    bots = np.bincount(b, weights=share * den, minlength=bins) + np.bincount(b2, weights=(1.0 - share) * den,
                                                                           minlength=bins)
    ratio = _ratio(tops, bots, 0.0)
    if clip is not None:
        ratio = np.clip(ratio, *clip)
    return share * ratio[b] + (1.0 - share) * ratio[b2]


def _pooled_variance(S, occ):
    """Order 1: per-cell Var(sum of a/k) = sum m (1 - m)/k + rho sum (1 - 1/k) m (1 - m), with the epistemic ratio
    rho = Var f* / (m (1 - m)) estimated in equal-count bins of the mean.  The estimate is unbiased, and is kept so
    (clipped to [-0.5, 1], not at 0: clipping a noisy estimate of a small rho at 0 biased V up and the test
    conservative); a cell's variance is floored at half its aleatoric part."""
    C = _C1
    cnt = S[C["count"], occ]
    bins = int(min(_POOL_BINS, max(1, cnt.sum() // _POOL_ROWS)))
    b, b2, share = _mirror_bins(cnt, bins)
    cell_rho = _bin_ratio(S[C["epi"], occ], S[C["epi_weight"], occ], b, b2, share, bins, clip=(-0.5, 1.0))
    aleatoric = S[C["aleatoric"], occ]
    return np.maximum(aleatoric + cell_rho * S[C["epi_weight"], occ], 0.5 * aleatoric)


def _centered_products(So, x, y, degree):
    """Order 2, rows with k >= 3 labels: per occupied cell, the sums of (r1 - r1^) (w - w^) and (w - w^)^2, with the
    residuals centred at estimates of their conditional means given the scores, and the atoms' flags.

    An atom (a cell with at least _ATOM_ROWS such rows) is centred at its own mean and its sums scaled by
    n_c / (n_c - 1); the other cells at a least-squares fit of r1 and w on a tensor-Chebyshev basis of the scores'
    ranks (degree ``max(_CENTER_DEGREE, degree)`` per axis, lowered until every coefficient has _CENTER_ROWS rows),
    their sums scaled by N / (N - p) (N rows, p the fit's rank).  Because the basis is constant on each cell, every
    fit and every centred sum comes from the cells' sums of r1, w, r1 w and w^2: the statistics stay mergeable.

    Why centred: under the null the conditional means are 0, so the centred products estimate the covariance of
    (r1, w) as the raw ones do, up to the fit's degrees of freedom, which the scaling returns.  Under an alternative
    they are not 0, and raw products estimate covariance + misfit^2: with many labels the covariance is small and
    the misfit (means shifted by 0.15, say) dwarfs it, so the raw products made Var w as large as the variance
    misfit itself and the variance conditions read as noise (T_var = 0 at k = 10-100 in the issue's example).  The
    fit removes the part of the misfit that is smooth in the scores, which includes everything the test's own basis
    (degree ``degree``) can see."""
    cent = _Centring(So[_C2["many"]], x, y, degree)
    q12, q22 = cent.products(*(So[_C2[name]][None, :] for name in ("r1_many", "w_many", "p12", "p22")))
    return q12[0], q22[0], cent.atom


def _many_label_covariance(So, mi, x, y, degree):
    """Order 2, rows with k >= 3 labels: the cells' Cov(r1, w) and Var w (w the decorrelated variance residual,
    :func:`_decorrelate`), as the Beta law's scaled by the ratio of the rows' centred residual products
    (:func:`_centered_products`) to it, pooled; each cell's 2 x 2 block then made positive semidefinite.

    The pools: a cell with at least _ATOM_ROWS such rows (an atom of the scores) on its own; the other cells in
    equal-count bins of the mean with at least _POOL_ROWS rows each (at most _POOL_BINS), as order 1 pools Var f*.
    The ratio is unbiased for the pool's average whatever f*'s law (E[w^2 | S] = Var w under the null), and corrects
    the Beta law's where f*'s law is far from it (two atoms, a Bernoulli mixture).  Why pooled, not the rows' own
    products: a row's w^2 correlates with its w, which enters the statistic, and at k = 10-50 labels the test on the
    rows' own products rejected up to 0.087 at level 0.05; why decorrelated: Var(r2 | r1) is a small difference of
    large terms at many labels, and a few percent of error in C12 against C22 there (a pooled ratio each, or the
    rows' estimates of E f*^3 and E f*^4) made the test reject up to 0.15-0.24 (docs/calibration_test.md).

    Why each cell's block is made positive semidefinite (|C12| <= sqrt(C11 C22), C22 >= 0): Var r1 is the null's
    exact one while Cov(r1, w) and Var w are estimated, so under an alternative the block can lose definiteness;
    V = sum_cells C_c (x) phi_c phi_c' then has negative directions, and T could fall below T_mean (it did, on real
    ensembles with 100 labels per item: docs/calibration_test.md).  With every block PSD, V is PSD and T >= T_mean
    (a Schur complement): the split is nested.
    Returns the cells' C12 and C22 (k = 2 rows' exact parts included)."""
    c12, c22 = _ManyLabelCovariance(So, mi, x, y, degree)({name: So[_C2[name]][None, :] for name in _LABEL_COLS2})
    return c12[0], c22[0]


def _offset_bincount(idx, weights, size):
    """Row by row of ``weights`` (b, n): np.bincount(idx, weights=row, minlength=size), as one (b, size) array."""
    b = weights.shape[0]
    flat = (np.arange(b)[:, None] * size + idx[None, :]).ravel()
    return np.bincount(flat, weights=weights.ravel(), minlength=b * size).reshape(b, size)


class _Centring:
    """The scores' part of :func:`_centered_products`, fixed once for every replicate of the simulated reference:
    the atoms, and the least-squares fit's basis and inverse Gram matrix on the other cells (the rows with k >= 3
    per cell, ``many``, are set by the scores, not the votes).  :meth:`products` then centres a batch of the votes'
    sums, (b, cells) each."""

    def __init__(self, many, x, y, degree):
        self.atom = atom = many >= _ATOM_ROWS
        self.safe = np.where(atom, many, 2.0)
        self.own = np.where(atom, self.safe / (self.safe - 1.0), 0.0)  # an atom's rows, centred at its own means
        rest = (~atom) & (many > 0)
        self.rest = np.flatnonzero(rest)
        self.fit = None  # (Psi, the map from sums to coefficients, rows per cell, N / (N - p)), or None
        N = float(many[rest].sum())
        if N > 0:
            lc = max(_CENTER_DEGREE, degree)
            while lc > 0 and (lc + 1) ** 2 * _CENTER_ROWS > N:
                lc -= 1
            xs, ys = x[rest], y[rest]
            Psi = (np.polynomial.chebyshev.chebvander(xs, lc)[:, :, None]
                   * np.polynomial.chebyshev.chebvander(ys, lc)[:, None, :]).reshape(xs.size, (lc + 1) ** 2)
            G = (Psi * many[rest][:, None]).T @ Psi
            evals, evecs = np.linalg.eigh(G)
            keep = evals > _RANK_TOL * evals.max()
            p = int(keep.sum())
            if N > p:
                Ginv = (evecs[:, keep] / evals[keep]) @ evecs[:, keep].T
                self.fit = (Psi, Ginv @ Psi.T, many[rest], N / (N - p))

    def products(self, R1, W, P12, P22):
        """The centred sums (q12, q22), each (b, cells), from the cells' sums of r1, w, r1 w and w^2 (b, cells)."""
        q12 = (P12 - R1 * W / self.safe) * self.own  # 0 off the atoms, filled below
        q22 = (P22 - W * W / self.safe) * self.own
        r = self.rest
        if self.fit is not None:
            Psi, K, nr, scale = self.fit
            R1r, Wr = R1[:, r], W[:, r]
            f1, fw = (R1r @ K.T) @ Psi.T, (Wr @ K.T) @ Psi.T
            q12[:, r] = (P12[:, r] - f1 * Wr - fw * R1r + nr * f1 * fw) * scale
            q22[:, r] = (P22[:, r] - 2.0 * fw * Wr + nr * fw * fw) * scale
        elif r.size:  # as many coefficients as rows: nothing to centre with (only at a handful of items)
            q12[:, r], q22[:, r] = P12[:, r], P22[:, r]
        return q12, q22


class _ManyLabelCovariance:
    """:func:`_many_label_covariance` for a batch of the votes' sums: the scores' parts (the centring fit, the pools
    and their Beta-law denominators) are fixed once, so each replicate of the simulated reference costs array
    operations, not a fit."""

    def __init__(self, So, mi, x, y, degree):
        C = _C2
        self.c11, self.c12, self.c22 = So[C["c11"]], So[C["c12"]], So[C["c22"]]
        self.e12, self.e22 = So[C["e12"]], So[C["e22"]]
        many = So[C["many"]]
        self.active = bool(many.sum() > 0)
        self.mi = mi
        self.cent = _Centring(many, x, y, degree) if self.active else None
        self.pool = None  # the other cells' pools: (bin, other bin, share, bins, Beta-law sums of C12 and C22)
        if self.active:
            self.rest_weight = np.where(self.cent.atom, 0.0, 1.0)
            col = (lambda w: np.bincount(mi, weights=self.rest_weight * w, minlength=GRID_MEAN)[None])
            cnt = col(many)[0]
            if cnt.sum() > 0:
                bins = int(min(_POOL_BINS, max(1, cnt.sum() // _POOL_ROWS)))
                b, b2, share = _mirror_bins(cnt, bins)
                self.pool = (b, b2, share, bins, _bin_sums(col(self.e12), b, b2, share, bins),
                             _bin_sums(col(self.e22), b, b2, share, bins))

    def __call__(self, L):
        """The cells' C12 and C22, (b, cells) each, for a batch of the votes' sums ``L`` ((b, cells) each)."""
        b = L["r1"].shape[0]
        if not self.active:
            return np.broadcast_to(self.c12, (b, self.c12.size)), np.broadcast_to(self.c22, (b, self.c22.size))
        q12, q22 = self.cent.products(L["r1_many"], L["w_many"], L["p12"], L["p22"])
        t12, t22 = np.zeros_like(q12), np.ones_like(q22)
        if self.pool is not None:
            bm, bm2, share, bins, bot12, bot22 = self.pool
            for t, q, bot in ((t12, q12, bot12), (t22, q22, bot22)):
                tops = _bin_sums(_offset_bincount(self.mi, self.rest_weight * q, GRID_MEAN), bm, bm2, share, bins)
                ratio = _ratio(tops, bot, 0.0)
                t[:] = (share * ratio[:, bm] + (1.0 - share) * ratio[:, bm2])[:, self.mi]
        atom = self.cent.atom
        own12, own22 = _ratio(q12, self.e12, 0.0), _ratio(q22, self.e22, 1.0)
        t12, t22 = np.where(atom, own12, t12), np.maximum(np.where(atom, own22, t22), 0.0)
        c12, c22 = self.c12 + t12 * self.e12, self.c22 + (t22 - 1.0) * self.e22
        bound = np.sqrt(np.maximum(self.c11, 0.0) * np.maximum(c22, 0.0))
        return np.clip(c12, -bound, bound), np.maximum(c22, 0.0)


def _bin_sums(per_mean_bin, b, b2, share, bins):
    """Per pool bin, the sums of (b, GRID_MEAN) values over its mean bins (a middle mean bin split by its share)."""
    return (_offset_bincount(b, share * per_mean_bin, bins)
            + _offset_bincount(b2, (1.0 - share) * per_mean_bin, bins))


def _ratio(num, den, empty):
    """num / den, ``empty`` where den is 0."""
    with np.errstate(over="ignore", invalid="ignore"):  # a denormal den (a score next to 0) overflows: no ratio
        r = num / np.where(den > 0, den, 1.0)
    return np.where((den > 0) & np.isfinite(r), r, empty)


def _noncentrality(df, alpha, power):
    """lambda with P(chi2_df(lambda) > chi2_df's upper alpha quantile) = power; 0 where alpha >= power, since the
    test then rejects with probability alpha >= power with no error at all.  The quantile is ``chi2.isf(alpha)``:
    ``chi2.ppf(1 - alpha)`` rounds 1 - alpha to 1 for alpha below about 1e-16, and its infinite quantile left the
    search below without an end."""
    if alpha >= power:
        return 0.0
    from scipy import optimize, stats

    crit = stats.chi2.isf(alpha, df)
    f = (lambda lam: stats.ncx2.sf(crit, df, lam) - power)
    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
    return optimize.brentq(f, 1e-9, hi, xtol=1e-10)


def _score_test(stats, n, degree, alpha, reference="auto", rng=None, gate=None, resolution=None):
    if stats.order == 2:
        return _score_test2(stats, n, degree, alpha, reference, rng, SIM_GATE if gate is None else gate, resolution)
    S = stats.sums
    col = _C1
    cnt = S[col["count"]]
    xm = _mid_ranks(cnt)
    occ = np.flatnonzero(cnt > 0)
    x = xm[occ]
    P = np.polynomial.chebyshev.chebvander(x, degree)
    R = S[col["r1"], occ][None]
    C = _pooled_variance(S, occ)[None, None]
    dirs = {"mean_shift": cnt[occ][None], "temperature": S[col["temper"], occ][None]}
    g = (R @ P).ravel()
    V = (P * C[0, 0][:, None]).T @ P
    E, lam = pinv_parts(V)
    T, df = quad_form(g, E, lam), int(lam.size)
    pval = 0.0 if stats.impossible else chi2_sf(T, df)
    detectable = _detectable(dirs, P, E, lam, df, alpha)
    regions = _regions1(S, occ, x, C[0, 0])
    return CalibrationTest(statistic=T, df=df, pvalue=pval, order=1, n=n, degree=degree,
                           mean_part=TestPart(T, df, chi2_sf(T, df)), variance_part=None, regions=regions,
                           detectable=detectable, alpha=alpha, impossible=stats.impossible,
                           impossible_items=stats.impossible_items, rest_pvalue=chi2_sf(T, df))


def _detectable(dirs, P, E, lam, df, alpha):
    """The smallest effect of each named alternative that the joint statistic detects with 80% power at ``alpha``
    (0.05 when None): the noncentrality of chi-square(df) for that power over the effect's per-unit noncentrality."""
    out = {}
    if df > 0:
        lam_star = _noncentrality(df, 0.05 if alpha is None else alpha, DETECTABLE_POWER)
        for name, D in dirs.items():
            q = quad_form((D @ P).ravel(), E, lam)
            out[name] = math.sqrt(lam_star / q) if q > 0 else math.inf
    return out


def _pinv_quad(g, V):
    """g' V^+ g and rank V for a batch: g (b, d), V (d, d) or (b, d, d) (each standardized by its diagonal and cut at
    _RANK_TOL as :func:`pinv_parts` does; the rank returned is the last replicate's)."""
    if V.ndim == 2:
        E, lam = pinv_parts(V)
        proj = g @ E
        return (proj * proj / lam).sum(axis=1), int(lam.size)
    if not g.shape[0]:
        return np.zeros(0), 0
    d = np.sqrt(np.clip(np.diagonal(V, axis1=1, axis2=2), 0.0, None))
    D = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
    evals, evecs = np.linalg.eigh(V * D[:, :, None] * D[:, None, :])
    top = evals.max(axis=1, initial=0.0)[:, None]
    keep = (evals > _RANK_TOL * top) & (top > 0)
    proj = np.einsum("bij,bi->bj", evecs, D * g)
    out = np.where(keep, proj * proj / np.where(keep, evals, 1.0), 0.0).sum(axis=1)
    return out, int(keep[-1].sum())


class _Order2:
    """The order-2 statistics: what the scores alone set, computed once, and the three statistics from the cell sums
    the votes set (the observed ones, or a batch of simulated replicates': :func:`socal.reference.simulate_columns`).

    The joint statistic T (the verdict) is the score test of the module notes.  Its parts each test their own
    condition:

    * the means part reads the mean conditions E[(z1 - m) phi(S)] = 0 with a covariance that does not take the
      reported variances at their word: Var(z1 | S) = m (1 - m)/k + (1 - 1/k) Var(f* | S), the last term the
      reported var plus the votes' excess over it, (1 - 1/k) rho m (1 - m), with rho >= 0 pooled over the pools of
      :meth:`pools` (the votes' E[(f* - m)^2] - var per unit of m (1 - m)).  A variance error alone then leaves the
      means part at its level (docs/calibration_test.md, "Each part tests its own condition");
    * the variances part reads u = z2 - 2 m z1 + m^2 - var, whose conditional mean is Var(f* | S) - var +
      (E[Y | S] - m)^2, with the last term removed by the means' own fit on the basis: per cell,
      n_c (d_c^2 - Var d_c) with d = the least-squares fit of z1 - m on the basis.  A means error alone then leaves
      it at its level.  Its covariance is the null's Var u (exact for k = 2; for k >= 3 the Beta law's, scaled by the
      pooled ratio of the rows' centred u^2 to it, as the joint statistic's w).
    """

    def __init__(self, S, degree):
        col = _C2
        self.S, self.degree = S, degree
        cnt = S[col["count"]]
        grid = cnt.reshape(GRID_MEAN, GRID_RELVAR)
        xm, xt = _mid_ranks(grid.sum(axis=1)), _mid_ranks(grid.sum(axis=0))
        occ = np.flatnonzero(cnt > 0)
        self.occ = occ
        self.x, self.y = xm[occ // GRID_RELVAR], xt[occ % GRID_RELVAR]
        P = (np.polynomial.chebyshev.chebvander(self.x, degree)[:, :, None]
             * np.polynomial.chebyshev.chebvander(self.y, degree)[:, None, :]).reshape(occ.size, (degree + 1) ** 2)
        self.P = P
        self.count = cnt[occ]
        self.So = S[:, occ]  # the occupied cells' sums
        self.c11 = S[col["c11"], occ]
        self.many = S[col["many"], occ]
        self.has_many = bool(self.many.sum() > 0)
        self.pool, self.npool = self.pools(grid.sum(axis=1), occ, self.y)
        pool_sum = (lambda w: np.bincount(self.pool, weights=w, minlength=self.npool))
        self.pool_sum = pool_sum
        members = [np.flatnonzero(self.pool == j) for j in range(self.npool)]
        blocks = (lambda w: np.stack([(P[i] * w[i, None]).T @ P[i] for i in members]))  # each pool's P' diag(w) P
        epi_q = S[col["epi_q"], occ]
        self.epi_q = epi_q
        self.epi_q_pool = pool_sum(epi_q)
        self.V11 = (P * self.c11[:, None]).T @ P
        self.A = blocks(epi_q)
        cuu, cuum = S[col["cuu"], occ], S[col["cuu_many"], occ]
        self.cuu2, self.cuum = cuu - cuum, cuum
        self.Vu2 = (P * self.cuu2[:, None]).T @ P
        self.B = blocks(cuum) if self.has_many else None
        self.cuum_pool, self.many_pool = pool_sum(cuum), pool_sum(self.many)
        self.lam_floor = _ratio(pool_sum(S[col["cuu_least"], occ]), self.cuum_pool, 0.0)  # lam_u's floor, per pool
        G = (P * self.count[:, None]).T @ P
        Eg, lg = pinv_parts(G)
        Ginv = (Eg / lg) @ Eg.T
        self.fit = Ginv @ P.T  # d x occ: the means' coefficients from the cells' sums of z1 - m
        HV = Ginv @ self.V11 @ Ginv
        self.var_fit = np.einsum("ij,jk,ik->i", P, HV, P)  # Var of the fitted mean residual per cell, under the null
        if not self.has_many:  # k = 2 only: the joint covariance is the scores' alone
            self.C = np.array([[self.c11, S[col["c12"], occ]], [S[col["c12"], occ], S[col["c22"], occ]]])
            self.E, self.lam = pinv_parts(self._joint_V(self.C))
        else:  # the pooled covariance's score-only parts, fixed once for the observed sums and every replicate
            self.many_cov = _ManyLabelCovariance(self.So, occ // GRID_RELVAR, self.x, self.y, degree)
            self.V_c11 = self._block(self.c11)

    @staticmethod
    def pools(mean_counts, occ, y):
        """Each occupied cell's pool for the parts' pooled ratios: equal-count bins of the mean (at least _POOL_ROWS
        rows each, at most _POOL_BINS; :func:`_mirror_bins`) times terciles of the relative variance's ranks."""
        if not mean_counts.sum() > 0:  # no row left (every item's votes impossible under its scores)
            return np.zeros(occ.size, np.intp), 1
        bins = int(min(_POOL_BINS, max(1, mean_counts.sum() // _POOL_ROWS)))
        b, _, _ = _mirror_bins(mean_counts, bins)
        tercile = np.digitize(y, [-1 / 3, 1 / 3])
        return b[occ // GRID_RELVAR] * 3 + tercile, bins * 3

    def _block(self, c):
        """P' diag(c) P: one block of V from the cells' covariances ``c``."""
        return (self.P * c[:, None]).T @ self.P

    def _joint_V(self, C):
        """V from the cells' 2 x 2 blocks ``C`` (C[r][s] per cell)."""
        return self._assemble(self._block(C[0][0]), C[0][1], C[1][1])

    def _assemble(self, V11, c12, c22):
        """V from its (1, 1) block and the cells' C12 and C22."""
        dphi = self.P.shape[1]
        V = np.empty((2 * dphi, 2 * dphi))
        V[:dphi, :dphi] = V11
        V[:dphi, dphi:] = self._block(c12)
        V[dphi:, :dphi] = V[:dphi, dphi:].T
        V[dphi:, dphi:] = self._block(c22)
        return V

    def joint_C(self, L=None):
        """The cells' 2 x 2 covariance blocks of (z1, z2 or w): the null's for k = 2; rows with k >= 3 pooled from
        the votes (:func:`_many_label_covariance`), from the observed sums or a replicate's ``L``."""
        if not self.has_many:
            return self.C
        if L is None:
            L = {name: self.So[_C2[name]] for name in _LABEL_COLS2}
        c12, c22 = self.many_cov({name: np.asarray(v, float)[None, :] for name, v in L.items()})
        return np.array([[self.c11, c12[0]], [c12[0], c22[0]]])

    def rho(self, epi_u):
        """The votes' excess of E[(f* - m)^2] over the reported var per unit of m (1 - m), pooled, in [0, 1]."""
        return np.clip(_ratio(self.pool_sum(epi_u), self.epi_q_pool, 0.0), 0.0, 1.0)

    def lam_u(self, u_many, u2_many):
        """Rows with k >= 3: per pool, their centred sum of u^2 over the Beta law's sum of Var u (1 without such
        rows), at least the pool's ``lam_floor``: the same ratio for the least Var u of the laws the simulated
        reference draws from (:func:`_least_var_u`).

        Why the floor: where an event is rare and f* may have an atom at 1, most draws of a pool show no item at the
        atom; its rows' u then barely vary, the centred sum reads near 0, and the part divided a sum of u's that is
        off by the atom's missing share by almost nothing.  Drawn at that law, the part's 95th percentile was 170 on
        9 df (the Beta law's: 26), so the reference's larger p-value over the two laws left the part no power at all
        against variances 5x too small on rare votes at k = 10 (docs/calibration_test.md, "Each part tests its own
        condition").  With the floor it is 39.  The floor only makes V larger: against the chi-square reference the
        part can only get more conservative, and a simulated reference is valid for any statistic of the votes."""
        N = self.many_pool
        su, su2 = self.pool_sum(u_many), self.pool_sum(u2_many)
        with np.errstate(divide="ignore", invalid="ignore"):
            centred = np.where(N > 1, (su2 - su * su / np.where(N > 0, N, 1.0)) * N / np.where(N > 1, N - 1.0, 1.0),
                               0.0)
        return np.where(N > 1, np.maximum(_ratio(centred, self.cuum_pool, 1.0), self.lam_floor), 1.0)

    def cell_covariances(self, L):
        """The cells' Var z1 for the means part and Var u for the variances part (observed sums ``L``)."""
        rho, lam = self.rho(L["epi_u"]), self.lam_u(L["u_many"], L["u2_many"])
        return self.c11 + rho[self.pool] * self.epi_q, self.cuu2 + lam[self.pool] * self.cuum

    def statistics(self, L):
        """(T, df), (T_mean, df), (T_var, df) for a batch: each value of ``L`` is (b, occ)."""
        return self.joint(L), self.means(L), self.variances(L)

    def means(self, L):
        """The means part (T_mean, df) for a batch."""
        rho = np.stack([self.rho(x) for x in L["epi_u"]])
        V1 = self.V11[None] + np.einsum("bj,jde->bde", rho, self.A)
        return _pinv_quad(L["r1"] @ self.P, V1)

    def fitted_misfit(self, r1):
        """Per cell, the means' least-squares fit of the per-row residual z1 - m on the basis (b, occ)."""
        return (r1 @ self.fit.T) @ self.P.T

    def variances(self, L):
        """The variances part (T_var, df) for a batch: u less the means' fitted misfit."""
        d = self.fitted_misfit(L["r1"])
        u = L["u"] - self.count[None, :] * (d * d - self.var_fit[None, :])
        if self.has_many:
            lam = np.stack([self.lam_u(x, y) for x, y in zip(L["u_many"], L["u2_many"])])
            Vu = self.Vu2[None] + np.einsum("bj,jde->bde", lam, self.B)
        else:
            Vu = self.Vu2
        return _pinv_quad(u @ self.P, Vu)

    def joint(self, L):
        """The joint statistic (T, df) for a batch."""
        P = self.P
        g = np.concatenate([L["r1"] @ P, L["r2"] @ P], axis=1)
        if not self.has_many:
            proj = g @ self.E
            return (proj * proj / self.lam).sum(axis=1), int(self.lam.size)
        c12, c22 = self.many_cov({name: np.asarray(L[name], float) for name in _LABEL_COLS2})
        V = np.stack([self._assemble(self.V_c11, c12[i], c22[i]) for i in range(g.shape[0])])
        return _pinv_quad(g, V)


def _score_test2(stats, n, degree, alpha, reference, rng, gate=SIM_GATE, resolution=None):
    S = stats.sums
    col = _C2
    ctx = _Order2(S, degree)
    occ = ctx.occ
    obs = {name: S[col[name], occ][None, :] for name in _LABEL_COLS2}
    (T, df), (T1, df1), (Tu, dfu) = ctx.statistics(obs)
    T, T1, Tu = float(T[0]), float(T1[0]), float(Tu[0])
    p = [chi2_sf(T, df), chi2_sf(T1, df1), chi2_sf(Tu, dfu)]
    events, n_sim, n_laws = math.inf, 0, 0
    groups = stats.groups if stats.covariance == "null" else None
    if groups is None and reference in SIMULATED:
        raise ValueError("The 'reference' parameter can be 'simulated' only for statistics that kept the votes' law "
                         "(CalibrationTestStats made with the default covariance='null').")
    if groups is not None and occ.size and groups.keys.size:
        cell_index = np.searchsorted(occ, groups.cells)
        events = effective_events(groups, cell_index, ctx.P)
        simulate = reference in SIMULATED or (reference == "auto" and events < EVENTS_MIN and min(p) < gate)
        if simulate:
            p, n_sim, n_laws = _simulated_pvalues(ctx, groups, cell_index, (T, T1, Tu), rng, resolution,
                                                  beta=reference == "beta")
    elif reference in SIMULATED:
        raise ValueError("The 'reference' parameter of calibration_test can be 'simulated' only with "
                         "covariance='null' (the simulation draws the votes under the null's law). Got "
                         "covariance='sandwich'.")
    C = ctx.joint_C()
    E, lam = pinv_parts(ctx._joint_V(C))
    dirs = {"variance_factor": np.stack([np.zeros(occ.size), S[col["var"], occ]]),
            "mean_shift": np.stack([ctx.count, 2.0 * S[col["mean"], occ]]),
            "temperature": np.stack([S[col["temper"], occ], 2.0 * S[col["temper_m"], occ]])}
    detectable = _detectable(dirs, ctx.P, E, lam, int(lam.size), alpha)
    c11s, cuus = ctx.cell_covariances({name: v[0] for name, v in obs.items()})
    regions = _regions2(S, occ, ctx.x, ctx.y, c11s, cuus)
    var_mean = float(S[col["var"], occ].sum() / ctx.count.sum()) if occ.size else float("nan")
    return CalibrationTest(statistic=T, df=df, pvalue=0.0 if stats.impossible else p[0], order=2, n=n,
                           degree=degree, mean_part=TestPart(T1, df1, p[1]), variance_part=TestPart(Tu, dfu, p[2]),
                           regions=regions, detectable=detectable, alpha=alpha, impossible=stats.impossible,
                           var_mean=var_mean, impossible_items=stats.impossible_items, rest_pvalue=p[0],
                           n_sim=n_sim, events=events, n_laws=n_laws)


def reference_replicates(stats: CalibrationTestStats, reps: int, *, degree: int | None = None,
                         rng: int | np.random.Generator | None = None,
                         one_at_a_time: bool = False) -> dict[str, np.ndarray]:
    """Replicates of the order-2 statistics under the null's law of the votes at the Beta law (what
    ``reference='beta'`` reads): {'joint': T, 'means': T_mean, 'variances': T_var}, each of shape (reps,).

    To look at the reference's spread (against the observed statistics, or against chi-square), and to time it.
    ``one_at_a_time=True`` computes each replicate alone, the way the reference did before it was batched: the
    pooled covariance of the rows with k >= 3 built again for every replicate (its centring fit included) and one
    eigendecomposition each.  Both ways give the same numbers to rounding (``tests/test_testing.py``); the batched
    default fixes the scores' parts once (benchmarks/reference_batch.py times the two)."""
    if not isinstance(stats, CalibrationTestStats) or stats.order != 2 or stats.covariance != "null" \
            or stats.groups is None:
        raise ValueError("The 'stats' argument of reference_replicates must be order-2 CalibrationTestStats with "
                         "covariance='null' (they keep the votes' law).")
    opts = check_parameters({"reps": int_rule(1, 10**7), "degree": int_rule(0, 20, allow_none=True)},
                            "reference_replicates", {"reps": reps, "degree": degree})
    reps, rng = opts["reps"], check_rng(rng)
    degree = default_degree(int(round(stats.sums[_C2["count"]].sum()))) if opts["degree"] is None else opts["degree"]
    ctx = _Order2(stats.sums, degree)
    cells = np.searchsorted(ctx.occ, stats.groups.cells)
    L = simulate_columns(stats.groups, group_laws(stats.groups), cells, ctx.occ.size, int(reps), rng)
    L = {name: L[name] for name in _LABEL_COLS2}
    if not one_at_a_time:
        return {name: np.asarray(fn(L)[0], float) for name, fn in
                (("joint", ctx.joint), ("means", ctx.means), ("variances", ctx.variances))}
    out = {"joint": np.empty(int(reps)), "means": np.empty(int(reps)), "variances": np.empty(int(reps))}
    P = ctx.P
    for i in range(int(reps)):
        one = {name: L[name][i:i + 1] for name in _LABEL_COLS2}
        if ctx.has_many:  # the pooled covariance from scratch for this replicate's sums, and its V alone
            So = ctx.So.copy()
            for name in _LABEL_COLS2:
                So[_C2[name]] = L[name][i]
            c12, c22 = _many_label_covariance(So, ctx.occ // GRID_RELVAR, ctx.x, ctx.y, degree)
            E, lam = pinv_parts(ctx._joint_V(np.array([[ctx.c11, c12], [c12, c22]])))
            g = np.concatenate([one["r1"][0] @ P, one["r2"][0] @ P])
            out["joint"][i] = quad_form(g, E, lam)
        else:
            out["joint"][i] = ctx.joint(one)[0][0]
        out["means"][i] = ctx.means(one)[0][0]
        out["variances"][i] = ctx.variances(one)[0][0]
    return out


def _simulated_pvalues(ctx, groups, cell_index, observed, rng, resolution=None, beta=False):
    """Monte Carlo p-values of (T, T_mean, T_var) under the groups' laws (:mod:`socal.reference`): (1 + X) / (1 + L)
    with X the replicates at or above the observed value among the L drawn when that statistic stopped
    (:func:`_replicate_pvalues`: at SIM_HITS exceedances, at N_SIM replicates, or, for a statistic beyond every
    replicate with ``resolution`` below 1 / (1 + N_SIM), at its first exceedance or 1 / resolution - 1 replicates).
    With the law exact the p-value is valid at every level (the observed statistic is then one more draw of the same
    law: P(p <= a) <= a; the stops only make it larger than Besag and Clifford's sequential p-value h / L, which is
    valid too).

    The variances part where the means are off.  The part tests Var(f* | S) = var whatever the means; drawn at the
    reported means, a means error alone made it reject 0.23 at level 0.05 on rare votes (means +0.01 near 0.02,
    k = 10: the votes' law there has other higher moments than the full null's).  So where the means part rejects
    at MEANS_GATE, the variances part is read again against replicates drawn at the means the votes' own fit gives
    (m + d, d the least-squares fit of z1 - m on the basis, per cell) with the reported variances
    (:func:`socal.reference.group_laws`, ``shift``): a parametric bootstrap under the partial null "variances right,
    means as the votes say", on a stream of its own (spawned from ``rng``).  Elsewhere the full null's replicates
    serve: there d is noise, and drawing at m + d (a mean of 0 where a rare cell has no positive vote) made the part
    reject 0.086 at 0.05 on calibrated tied scores where the full null's exact law gave 0.070 (docs/calibration_test.md,
    "Each part tests its own condition")."""
    ends = [None] if beta else _shape_ends(ctx, groups, cell_index)
    out, drawn = [0.0, 0.0, 0.0], 0
    for shape in ends:  # the larger p-value over the ends of the third moment's interval (socal.reference.shapes)
        p, d_ = _replicate_pvalues(ctx, groups, cell_index, observed, rng, group_laws(groups, shape=shape),
                                   (ctx.joint, ctx.means, ctx.variances), resolution)
        out, drawn = [max(a, b) for a, b in zip(out, p)], max(drawn, d_)
    full = list(out)  # the full null's p-values: each gate below reads these, not the other's re-read
    if full[1] <= MEANS_GATE:
        d = ctx.fitted_misfit(np.asarray(ctx.So[_C2["r1"]], float)[None, :])[0]
        try:  # the partial null's own stream: T's and the means part's draws stay rng's alone
            rng_v = rng.spawn(1)[0]
        except (TypeError, ValueError):  # a Generator whose bit generator has no seed sequence to spawn from
            rng_v = np.random.default_rng(rng.integers(2**63))
        pv = 0.0
        for shape in ends:
            (p,), _ = _replicate_pvalues(ctx, groups, cell_index, observed[2:], rng_v,
                                         group_laws(groups, shift=d[cell_index], shape=shape), (ctx.variances,),
                                         resolution)
            pv = max(pv, p)
        out[2] = pv
    # the means part, also against the partial null "means right, variances as the votes say": its replicates drawn
    # at Var f* = var + rho m (1 - m), rho the votes' pooled excess (the part's own normalisation, clipped to
    # [0, 1]); the larger p-value of the two is read.  Variances 5x too small on rare votes at k = 10 made the part
    # reject 0.075 at 0.05 against the full null alone, which draws at the reported variances
    # (docs/calibration_test.md, "Each part tests its own condition"); the larger p can only lower its size.
    rho = ctx.rho(np.asarray(ctx.So[_C2["epi_u"]], float))[ctx.pool[cell_index]]
    if np.any(rho > 0):
        S = groups.sums
        m_g = S[1] / S[0]
        var_law = S[2] / S[0] - m_g * m_g + rho * m_g * (1.0 - m_g)
        try:
            rng_m = rng.spawn(1)[0]
        except (TypeError, ValueError):
            rng_m = np.random.default_rng(rng.integers(2**63))
        pm = full[1]
        for shape in ends:
            (p,), _ = _replicate_pvalues(ctx, groups, cell_index, observed[1:2], rng_m,
                                         group_laws(groups, shape=shape, var_law=var_law), (ctx.means,), resolution)
            pm = max(pm, p)
        out[1] = pm
    return out, drawn, len(ends)


def _shape_ends(ctx, groups, cell_index):
    """The shapes of the k >= 3 rows' laws the reference is drawn at: [None] (the Beta law; only k = 2 rows, whose
    law the null fixes) or the distinct ends of each pool's interval for the votes' third moment of f*
    (:func:`socal.reference.shapes`)."""
    if not ctx.has_many:
        return [None]
    lo, hi = shapes(groups, ctx.pool[cell_index], ctx.npool)
    return [lo] if np.array_equal(lo, hi) else [lo, hi]


def _replicate_pvalues(ctx, groups, cell_index, observed, rng, laws, stats_of, resolution=None):
    """The replicate loop of :func:`_simulated_pvalues` for the statistics ``stats_of`` computes (one function of the
    replicates' label columns per observed statistic, returning (values, df)); a stopped statistic is no longer
    computed.

    Each statistic keeps its own count: h replicates at or above it among the L drawn when it stopped, p = (1 + h) /
    (1 + L), a count and nothing else.  It stops at SIM_HITS exceedances, or at N_SIM replicates if it has an
    exceedance by then; one beyond all N_SIM draws on (``resolution`` r below 1 / (1 + N_SIM)) until its first
    exceedance or 1 / r - 1 replicates.  Under the null the observed statistic is one more exchangeable draw, so
    P(p <= r) = P(it beats all 1 / r - 1) = r, and at a level above r the stops only make p larger than Besag and
    Clifford's sequential p-value h / L, which is valid.  Under the null the extension costs little: a statistic is
    still beyond all L replicates with probability 1 / (1 + L).

    No tail beyond the replicates: a statistic beyond every one gets p = 1 / (1 + L), printed as a bound ("p <=
    0.001").  A moment-matched chi-square tail used to extrapolate there, and to stop a statistic beyond its first
    100 replicates once it put it below 1e-6.  Where votes are sparse the statistic's law is heavy-tailed (a vote
    for a class at m = 1e-5 scores like 1 / m): on a calibrated 100-class ensemble one class read 7.6e-33 from 200
    replicates where 999 gave 0.004, and the verdict rejected 0.10-0.40 at 0.05."""
    n_max = N_SIM if resolution is None else max(N_SIM, int(math.ceil(1.0 / resolution - 1e-9)) - 1)
    k = len(observed)
    hits = np.zeros(k, np.int64)
    stop = np.zeros(k, np.int64)  # 0: still drawing; else the replicates drawn when the statistic stopped
    drawn = 0
    obs = np.array(observed, float)
    tol = 1e-9 * np.maximum(np.abs(obs), 1.0)  # a tie counts as an exceedance
    while drawn < n_max and not stop.all():
        if drawn < N_SIM:  # SIM_BATCH at a time up to N_SIM
            b = min(SIM_BATCH, N_SIM - drawn)
        else:  # beyond it, batches that double
            b = min(max(SIM_BATCH, drawn), n_max - drawn)
        L = simulate_columns(groups, laws, cell_index, ctx.occ.size, b, rng)
        cols = {name: L[name] for name in _LABEL_COLS2}
        drawn += b
        for j, stat in enumerate(stats_of):
            if stop[j]:
                continue
            vals, _ = stat(cols)
            hits[j] += int(np.count_nonzero(np.asarray(vals, float) >= obs[j] - tol[j]))
            if hits[j] >= SIM_HITS or (drawn >= N_SIM and (hits[j] > 0 or drawn >= n_max)):
                stop[j] = drawn
    stop[stop == 0] = drawn
    return [float((1 + h) / (1 + L)) for h, L in zip(hits, stop)], int(drawn)


def _cell_var_bounds(cells):
    """The smallest and largest variance a row of each order-2 grid cell can have: the cell is a bin of m times a
    bin of var / (m (1 - m)) (``CalibrationTestStats.add``), so var lies within the product of the bin's relative
    variance bounds and the bounds of m (1 - m) on its mean bin."""
    mi, ti = cells // GRID_RELVAR, cells % GRID_RELVAR
    a, b = mi / GRID_MEAN, (mi + 1) / GRID_MEAN
    qa, qb = a * (1 - a), b * (1 - b)
    q_lo = np.minimum(qa, qb)
    q_hi = np.where((a <= 0.5) & (b >= 0.5), 0.25, np.maximum(qa, qb))
    step = 6.0 / (GRID_RELVAR - 1)
    t_lo = np.where(ti == 0, 0.0, 10.0 ** (-6.0 + (ti - 1) * step))
    t_hi = np.where(ti == 0, _RELVAR_FLOOR, np.minimum(10.0 ** (-6.0 + ti * step), 1.0))
    return t_lo * q_lo, t_hi * q_hi


def _region_cells(x, y):
    """The 3 x 3 regions of the occupied cells: terciles of the mean's and of the relative variance's ranks."""
    return np.digitize(x, [-1 / 3, 1 / 3]), (np.zeros(x.size, np.intp) if y is None else np.digitize(y, [-1 / 3, 1 / 3]))


def _region_bounds(cells, order):
    """The region's grid bins: (first and last bin of the mean, first and last of the relative variance)."""
    mi = cells // GRID_RELVAR if order == 2 else cells
    ti = cells % GRID_RELVAR if order == 2 else np.zeros_like(cells)
    return (int(mi.min()), int(mi.max())), (int(ti.min()), int(ti.max()))


def _mean_core(counts, cells, order):
    """(low, high): the count-weighted 10th to 90th percentile of a region's cells' mean bins, as bin edges."""
    mi = cells // GRID_RELVAR if order == 2 else cells
    idx = np.argsort(mi, kind="stable")
    cum = np.cumsum(counts[idx])
    if cum.size == 0 or cum[-1] <= 0:
        return float("nan"), float("nan")
    lo = mi[idx][np.searchsorted(cum, 0.1 * cum[-1], side="left")]
    hi = mi[idx][min(np.searchsorted(cum, 0.9 * cum[-1], side="left"), cum.size - 1)]
    return float(lo / GRID_MEAN), float((hi + 1) / GRID_MEAN)


def _regions1(S, occ, x, c11):
    """Order 1: the means' standardized residual in the terciles of the mean's ranks, with the votes' frequency."""
    col = _C1
    bm, _ = _region_cells(x, None)
    out = []
    for i in range(3):
        sel = bm == i
        cells = occ[sel]
        cnt = S[col["count"], cells].sum()
        if cnt < _REGION_MIN_ROWS or not c11[sel].sum() > 0:
            continue
        mb, tb = _region_bounds(cells, 1)
        r1, msum = S[col["r1"], cells].sum(), S[col["msum"], cells].sum()
        out.append(Region("mean", float(r1 / math.sqrt(c11[sel].sum())), int(round(cnt)),
                          (mb[0] / GRID_MEAN, (mb[1] + 1) / GRID_MEAN), float("nan"), reported=float(msum / cnt),
                          observed=float((r1 + msum) / cnt), mean_bins=mb, relvar_bins=tb,
                          mean_core=_mean_core(S[col["count"], cells], cells, 1)))
    return tuple(sorted(out, key=lambda r: -abs(r.z)))


def _regions2(S, occ, x, y, c11s, cuus):
    """Order 2, per region: the votes' frequency of 1 against the mean, and the votes' variance of f* against the
    reported one, each with its standardized residual (``c11s``, ``cuus``: the cells' variances of z1 and u, as the
    parts' statistics use them).

    The votes' variance of f* in a region is mean(z2 - 2 m z1 + m^2) - mean(z1 - m)^2: the first term is unbiased
    for E[(f* - m)^2], the second removes the region's average error of the means, so that means that are off do not
    read as variance (the spread of that error within the region stays in it).  Its z is (that - mean var) n / sd,
    so its sign is the sign of the difference the sentence states: the words are what :func:`vote_check` counts."""
    col = _C2
    bm, bt = _region_cells(x, y)
    out = []
    for i in range(3):
        for j in range(3):
            sel = (bm == i) & (bt == j)
            cells = occ[sel]
            cnt = S[col["count"], cells].sum()
            if cnt < _REGION_MIN_ROWS:
                continue
            mb, tb = _region_bounds(cells, 2)
            mr = (mb[0] / GRID_MEAN, (mb[1] + 1) / GRID_MEAN)
            vmean = float(S[col["var"], cells].sum() / cnt)
            v_lo, v_hi = _cell_var_bounds(cells)
            vr = (float(v_lo.min()), float(v_hi.max()))
            r1, msum, u = S[col["r1"], cells].sum(), S[col["msum"], cells].sum(), S[col["u"], cells].sum()
            shared = dict(mean_bins=mb, relvar_bins=tb, mean_core=_mean_core(S[col["count"], cells], cells, 2))
            c11 = float(c11s[sel].sum())
            if c11 > 0:
                out.append(Region("mean", float(r1 / math.sqrt(c11)), int(round(cnt)), mr, vmean, vr,
                                  reported=float(msum / cnt), observed=float((r1 + msum) / cnt), **shared))
            votes = float((u + vmean * cnt) / cnt - (r1 / cnt) ** 2)
            cuu = float(cuus[sel].sum())
            if cuu > 0:
                out.append(Region("variance", float((votes - vmean) * cnt / math.sqrt(cuu)), int(round(cnt)), mr,
                                  vmean, vr, reported=vmean, observed=votes, **shared))
    return tuple(sorted(out, key=lambda r: -abs(r.z)))


class TestPass:
    """The test's pass over a source: each chunk's :class:`CalibrationTestStats` (``checked``: the rows are validated
    already, e.g. perturbed scores for the CE interval's test of CE = 0, which may lie outside the feasible
    region; such rows count as impossible under the null)."""

    __test__ = False

    def __init__(self, order, checked=False, covariance="null", groups=True):
        self.order, self.checked, self.covariance, self.groups = order, checked, covariance, groups
        self.whole = False  # set by ArraySource: one chunk holds every row, and impossible items are named by position

    def __call__(self, index, m, v, a, k):
        if self.order == 2 and not self.checked and m.shape[0]:  # an empty chunk or partition adds nothing
            m, v = check_scores(m, v, "calibration_test", raw=True)  # sources check var <= 1/4; raw needs m (1 - m)
        stats = CalibrationTestStats(order=self.order, covariance=self.covariance)
        if not self.groups:  # a caller that reads the chi-square reference only: no law to keep
            stats.groups = None
        if self.order == 2 and self.checked:
            outside = int(np.count_nonzero(v > m * (1.0 - m) + FEASIBILITY_SLACK))
            if outside:  # p = 0 whatever the other rows hold: their sums are not needed (nor paid for)
                stats.impossible = outside
                return stats
        return stats.add_validated(m, v, a, k, offset=0 if self.whole else None)


def calibration_test(mean: ArrayLike | CalibrationTestStats | None = None, var: ArrayLike | None = None,
                     labels: ArrayLike | None = None, *, counts: Counts | None = None, order: int = 2,
                     alpha: float | None = None, degree: int | None = None, chunks: Chunks | None = None,
                     covariance: str = "null", reference: str = "auto",
                     rng: int | np.random.Generator | None = None, progress: bool = False,
                     checkpoint: str | os.PathLike | Any | None = None) -> CalibrationTest:
    """Test whether a predictor's raw (mean, variance) are calibrated, and say where they are not.

    The null hypothesis (order 2) is second-order calibration of the raw scores (the paper's Definition 1, Eq.
    (calfns)): E[Y | S] = mean and E[f*(X)^2 | S] = mean^2 + var on the predictor's level sets S = (mean, var).
    Order 1 tests E[Y | mean] = mean alone.  The statistic is a score test of moment conditions with the null's own
    covariance (module :mod:`socal.testing`); no perturbation is involved.

    Why this statistic: with k = 2 labels the null fixes the labels' law given the scores, so the covariance of the
    moment conditions is known rather than estimated; a sandwich (estimated) covariance made the chi-square
    reference too liberal at small n, and a basis on the scores' ranks gives small and large variances the same
    resolution.  Items with k >= 3 labels (order 2) leave the third and fourth moments of f* free: their variance
    condition is decorrelated from the mean condition and its covariance pooled from their residual products,
    centred at a fit of their conditional means (module :mod:`socal.testing`), so that its power does not fall with
    the labels when the means are off too.  Its size and power, measured against Spiegelhalter's z and
    Hosmer-Lemeshow on the same draws and in k, are in docs/calibration_test.md (``benchmarks/size_power.py``).

    Which reference (``reference='auto'``): the chi-square where every basis direction collects enough effective
    votes, else a parametric bootstrap of the statistic under the null's law of the votes.  With k = 2 that law is
    exact whatever f*'s law, so the p-value is valid at every level by exchangeability (the observed statistic is one
    more draw of the replicates' law).  With k >= 3 the statistic's law also depends on E[f*^3 | S] and E[f*^4 | S],
    which the null leaves free.  The votes identify the third moment (a(a-1)(a-2) / (k(k-1)(k-2)) is unbiased for
    it), but where the reference is needed they are sparse: so f* is drawn from laws that keep the null's two moments
    and put each pool's third moment at either end of a 99% interval from the votes, between the least and the
    largest the null allows (a Beta mixed with a two-point law with an atom at 0 or at 1:
    :func:`socal.reference.shapes`), and the p-value is the larger of the two (a Berger-Boos p-value over that
    nuisance).  Drawing f* from the Beta alone (``reference='beta'``) assumes what the null does not say: where f* is
    two-point with an atom at 1 it rejected calibrated predictors up to 8x too often; the interval's ends hold the
    size there, and cost power where votes are sparse (both measured in docs/calibration_test.md, "Off the Beta").

    Parameters
    ----------
    mean : array_like, shape (n,), or CalibrationTestStats
        Raw means in [0, 1]; or statistics built with :class:`CalibrationTestStats` (then no other data).
    var : array_like, shape (n,)
        Raw epistemic variances in [0, mean (1 - mean)] (order 2; None for order 1).
    labels : array_like, shape (n, k)
        0/1 labels, k >= 2 for order 2 (k >= 1 for order 1).
    counts : tuple (positives, trials), optional
        Instead of ``labels``: per-item counts (trials may vary).
    order : {2, 1}
    alpha : float in (0, 1), optional
        A level: sets :attr:`CalibrationTest.rejected` and the level of the detectable effects (0.05 otherwise).
    degree : int, optional
        Basis degree per axis; default :func:`default_degree` (n), fixed in advance.
    covariance : {'null', 'sandwich'}
        'null' (the default): the covariance of the moment conditions under the null (exact for k = 2; at order 2
        items with k >= 3 labels pool their residual products, as the null leaves f*'s higher moments free).
        'sandwich': the rows' own residual products (valid for any law of the labels, but estimated; measured too
        liberal at small n, see the docs page of the test).
    reference : {'auto', 'chi2', 'simulated', 'beta'}
        Where the p-values come from (above): 'auto' simulates where a direction of the basis collects fewer than
        EVENTS_MIN effective votes and a chi-square p-value is below SIM_GATE, else reads the chi-square; 'chi2' and
        'simulated' always read the one named; 'beta' simulates with f* Beta for k >= 3 rows (more power where votes
        are sparse, valid only if f* is near a Beta).
    rng : numpy.random.Generator or int, optional
        The simulated reference's stream (None: seed 0, so the same data give the same p-value).
    chunks : iterable of chunks, optional
        Instead of arrays: chunks (mappings with 'mean', 'var', 'labels' or 'counts'), a callable returning them, or
        a :mod:`socal.io` reader; the test reads them once, so a generator will do.  Dask collections are accepted
        as ``mean``, ``var``, ``labels``.
    progress : bool
        A progress bar over the chunks.
    checkpoint : str, PathLike or socal.Checkpoint, optional
        Make the pass resumable, as in :func:`socal.ce2` (:mod:`socal.checkpoint`): the per-cell sums are saved as
        they grow; a rerun with the same file resumes after the last chunk saved, bit-identically.

    Returns
    -------
    CalibrationTest
        ``statistic``, ``pvalue``, ``df``, the mean and variance parts, the regions, the detectable effects;
        ``print(result)`` reads it in words.
    (For C >= 3 classes, ``socal.calibration_test`` routes to :func:`socal.multiclass.multiclass_test`:
    :mod:`socal.dispatch`.)

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.overconfident_population()   # variances reported at a tenth of the truth
    >>> m, v, f, y = pop.sample_raw(5000, rng=0)
    >>> res = socal.calibration_test(m, v, y)
    >>> res.pvalue < 1e-6, res.variance_part.pvalue < res.mean_part.pvalue
    (True, True)
    """
    func = "calibration_test"
    got = check_parameters(TEST_PARAMETERS, func, dict(order=order, alpha=alpha, degree=degree,
                                                         covariance=covariance, reference=reference, rng=rng,
                                                         progress=progress))
    alpha, degree = got["alpha"], got["degree"]
    if reference in SIMULATED and (order != 2 or covariance != "null"):
        raise ValueError(f"The 'reference' parameter of {func} can be 'simulated' only for order=2 with "
                         f"covariance='null' (the simulation draws the votes under the null's law of a label pair). "
                         f"Got order={order}, covariance={covariance!r}.")
    ndim = order
    if isinstance(mean, CalibrationTestStats):
        if any(x is not None for x in (var, labels, counts, chunks)):
            raise ValueError(f"With CalibrationTestStats as the first argument of {func}, 'var', 'labels', 'counts' "
                             f"and 'chunks' must be None.")
        if mean.order != order:
            raise ValueError(f"The 'order' parameter of {func} must match the statistics' order ({mean.order}). "
                             f"Got {order} instead.")
        return mean._test(func, alpha, degree, checked=True, reference=reference, rng=rng)
    if order == 1 and var is not None:
        raise ValueError(f"The 'var' parameter of {func} must be None for order=1 (the means alone are tested). "
                         f"Got an array instead.")
    from .checkpoint import as_checkpoint

    cp = as_checkpoint(checkpoint, func)
    if cp is not None:
        cp.start(func, dict(order=order, degree=degree, covariance=covariance))  # alpha: read after the pass
    kind = input_kind(func, (mean, var, labels, counts), chunks)  # the prebuilt statistics: read above
    if kind == "chunks":
        source = ChunkSource(chunks, func, ndim, order, one_pass=True, checkpoint=cp)  # the test reads the data once
    elif kind == "dask":
        if cp is not None:
            raise ValueError(f"The 'checkpoint' parameter of {func} is for chunks and in-memory arrays; a dask run "
                             f"recomputes the partitions a lost worker held by itself. Got dask collections.")
        source = DaskSource(mean, var, labels, counts, func, ndim, order)
    else:
        rows = mean.astuple() if kind == "validated" else check_rows(func, order, mean, var, labels, counts, order,
                                                                      raw=True)
        source = ArraySource(*rows) if cp is None else \
            ChunkSource.from_arrays(*rows, func, ndim, order, rows=cp.rows, checkpoint=cp)
    stats = source.map_reduce(TestPass(order, isinstance(source, ArraySource), covariance), progress=progress,
                           desc=f"calibration test (order {order})")
    return stats._test(func, alpha, degree, checked=True, reference=reference, rng=rng)
