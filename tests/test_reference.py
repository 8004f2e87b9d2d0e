"""The calibration test's simulated reference (socal.reference), its parts' own conditions, the regions' recount and
the inputs the null cannot describe (issue 73).  Full-size tables: benchmarks/tail.py (docs/calibration_test.md)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import socal
from socal import synthetic
from socal.reference import GROUP_COLS, GroupSums, _law, shapes, third_moments, two_point
from socal.synthetic import RareEventPopulation

from .conftest import family_alpha


def _rare(n=1500, rng=0, **kw):
    m, v, _, counts = RareEventPopulation(**kw).sample_counts(n, rng=rng)
    return m, v, counts


def test_law_is_the_nulls_pair_law_for_two_labels_and_a_beta_binomial_beyond():
    """k = 2: (1 - 2m + mu2, 2(m - mu2), mu2), whatever f*'s law; k >= 3: Beta-binomial with the null's moments
    (its first two factorial moments are k m and k (k - 1) mu2), a Binomial at no spread, two atoms at the most."""
    m, mu2 = np.array([0.1, 0.3, 0.02]), np.array([0.015, 0.2, 0.0004])
    assert _law(m, mu2, 2) == pytest.approx(np.stack([1 - 2 * m + mu2, 2 * (m - mu2), mu2], axis=1))
    for k in (3, 10, 100):
        p = _law(m, mu2, k)
        a = np.arange(k + 1)
        assert p @ a == pytest.approx(k * m) and p @ (a * (a - 1)) == pytest.approx(k * (k - 1) * mu2)
    assert _law(np.array([0.3]), np.array([0.09]), 5)[0] == pytest.approx(stats.binom.pmf(np.arange(6), 5, 0.3))
    two = _law(np.array([0.3]), np.array([0.3]), 5)[0]
    assert two[0] == pytest.approx(0.7) and two[5] == pytest.approx(0.3) and two[1:5].sum() == pytest.approx(0)


def test_group_sums_merge_in_any_order():
    rng = np.random.default_rng(0)
    cell, k, cols = rng.integers(0, 50, 300), rng.integers(2, 5, 300), [rng.random(300) for _ in GROUP_COLS]
    whole = GroupSums()
    whole.add(cell, k, cols)
    a, b = GroupSums(), GroupSums()
    a.add(cell[:100], k[:100], [c[:100] for c in cols])
    b.add(cell[100:], k[100:], [c[100:] for c in cols])
    for merged in (a.merged(b), b.merged(a)):
        assert np.array_equal(merged.keys, whole.keys)
        assert merged.sums == pytest.approx(whole.sums, rel=1e-12)


@pytest.mark.parametrize("kmode", [2, "mixed"])
def test_simulated_reference_is_the_same_in_any_order_chunking_or_dask_partitioning(kmode):
    """The law is read from mergeable per-(cell, k) sums and drawn group by group in key order, so the same data and
    seed give the same p-values for arrays, permuted rows, chunks and dask partitions."""
    da = pytest.importorskip("dask.array")
    m, v, (a, k) = _rare(1200, rng=3, k=kmode)
    kw = dict(reference="simulated", rng=5)
    whole = socal.calibration_test(m, v, counts=(a, k), **kw)
    assert whole.n_sim > 0
    perm = np.random.default_rng(1).permutation(len(m))
    others = [socal.calibration_test(m[perm], v[perm], counts=(a[perm], k[perm]), **kw),
              socal.calibration_test(chunks=[dict(mean=m[i::5], var=v[i::5], counts=(a[i::5], k[i::5]))
                                             for i in range(5)], **kw),
              socal.calibration_test(da.from_array(m, chunks=400), da.from_array(v, chunks=400),
                                     counts=(da.from_array(a, chunks=400), da.from_array(k, chunks=400)), **kw)]
    for other in others:
        got = (other.pvalue, other.mean_part.pvalue, other.variance_part.pvalue, other.n_sim)
        assert got == pytest.approx((whole.pvalue, whole.mean_part.pvalue, whole.variance_part.pvalue, whole.n_sim),
                                    rel=1e-12)
    # other seeds draw other replicates (the seed is read; two seeds may still tie on a count)
    seeds = {socal.calibration_test(m, v, counts=(a, k), reference="simulated", rng=s).pvalue for s in range(6)}
    assert len(seeds) > 1


def test_reference_auto_simulates_where_votes_are_rare_and_not_where_they_are_many():
    m, v, counts = _rare(2000, rng=1)
    rare = socal.calibration_test(m, v, counts=counts, reference="simulated")
    assert rare.events < socal.testing.EVENTS_MIN
    mm, vv, _, y = synthetic.EnsembleLikePopulation(0.05).sample_raw(200_000, rng=1)
    many = socal.calibration_test(mm, vv, y)
    assert many.events >= socal.testing.EVENTS_MIN and many.n_sim == 0 and many.reference == "chi-square"


def test_tail_size_reduced():
    """A reduced version of benchmarks/tail.py --size: 120 calibrated rare-event samples (n = 600, k = 2), where the
    chi-square reference rejected 0.08 at level 0.05 and 0.014 at 0.001.  The simulated reference's rejections at
    0.05 are a Binomial(120, <= 0.05) count under its claim; the bound below false-alarms at most
    family_alpha(2) per run."""
    ps = []
    for r in range(120):
        m, v, counts = _rare(600, rng=np.random.default_rng([73, r]))
        ps.append(socal.calibration_test(m, v, counts=counts).pvalue)
    ps = np.array(ps)
    bound = stats.binom.isf(family_alpha(2), 120, 0.05)
    assert np.sum(ps <= 0.05) <= bound
    assert np.sum(ps <= 0.001) <= stats.binom.isf(family_alpha(2), 120, 0.001)


def test_each_part_holds_its_level_under_the_others_error_reduced():
    """A reduced version of benchmarks/tail.py --cross: variances 5x too small with exact means (k = 10), and means
    shifted by 0.05 with exact variances (k = 2); 60 samples each.  The part whose condition holds rejects at 0.05 no
    more than a Binomial(60, 0.05) count allows (false alarm family_alpha(2) per run); the other part sees its
    error (its rate is above 0.5)."""
    cases = [(synthetic.EnsembleLikePopulation(0.01, var_factor=0.2), 10, "mean"),
             (synthetic.EnsembleLikePopulation(0.01, mean_shift=0.05), 2, "variance")]
    bound = stats.binom.isf(family_alpha(2), 60, 0.05)
    for c, (pop, k, holds) in enumerate(cases):
        hold, other = 0, 0
        for r in range(60):
            m, v, _, y = pop.sample_raw(2000, k=k, rng=np.random.default_rng([74, c, r]))
            res = socal.calibration_test(m, v, y, reference="chi2")
            ph, po = ((res.mean_part.pvalue, res.variance_part.pvalue) if holds == "mean" else
                      (res.variance_part.pvalue, res.mean_part.pvalue))
            hold += ph <= 0.05
            other += po <= 0.05
        assert hold <= bound, (holds, hold)
        assert other > 30, (holds, other)


def test_region_sentence_of_the_issues_synthetic_twin_agrees_with_the_votes():
    """The issue's twin (means too low, f* bimodal): it read 'too large (z = -76)' where the votes' E[f*^2] is ten
    times the claim; every variance region with |z| > 3 now says 'too small', as a direct count of its votes does."""
    m, var, counts = synthetic.bimodal_twin(rng=0)
    res = socal.calibration_test(m, var, counts=counts)
    strong = [r for r in res.regions if r.part == "variance" and abs(r.z) > 3]
    assert strong
    for r in strong:
        check = socal.vote_check(m, var, counts=counts, region=r)
        assert check.votes_var > check.var and r.direction == "too small" and "too small" in r.describe()
        assert r.agrees(check)
    # negative control: a recount that points the other way is not agreement
    flipped = socal.testing.VoteCheck(n=1, mean=0.5, frequency=0.5, var=1.0, votes_var=0.0)
    assert not strong[0].agrees(flipped)


def test_vote_check_refuses_what_it_cannot_count():
    m, v, _, y = synthetic.calibrated_population().sample_raw(500, rng=0)
    with pytest.raises(ValueError, match="'region' parameter of vote_check must be a Region"):
        socal.vote_check(m, v, y, region=(0, 1))
    with pytest.raises(ValueError, match="either 'region' or"):
        socal.vote_check(m, v, y, region=socal.calibration_test(m, v, y).regions[0], mean_range=(0, 1))
    with pytest.raises(ValueError, match="no item lies"):
        socal.vote_check(m, v, y, mean_range=(2.0, 3.0))
    with pytest.raises(ValueError, match="'labels'|'var'|'mean'"):
        socal.vote_check(m, v, y[:, :1] * 2)


def test_reference_options_are_checked_before_the_pass():
    m, v, _, y = synthetic.calibrated_population().sample_raw(300, rng=0)
    with pytest.raises(ValueError,
                       match="'reference' parameter of calibration_test must be 'auto', 'chi2', 'simulated' or 'beta'"):
        socal.calibration_test(m, v, y, reference="exact")
    with pytest.raises(ValueError, match="'simulated' only for order=2 with covariance='null'"):
        socal.calibration_test(m, v, y, reference="simulated", covariance="sandwich")
    with pytest.raises(ValueError, match="'simulated' only for order=2"):
        socal.calibration_test(m, v, y, reference="beta", order=1)
    with pytest.raises(ValueError, match="'rng' parameter of calibration_test"):
        socal.calibration_test(m, v, y, rng=-1)


def test_impossible_items_are_named_and_set_p_to_zero():
    m, v, _, y = synthetic.calibrated_population().sample_raw(400, rng=0)
    m, y = m.copy(), y.copy()
    m[[7, 42]] = 0.0
    v[[7, 42]] = 0.0
    y[[7, 42]] = 1.0  # a positive vote at mean 0
    res = socal.calibration_test(m, v, y)
    assert res.pvalue == 0.0 and res.impossible == 2 and res.impossible_items == (7, 42)
    assert "(items 7, 42)" in res.summary() and res.rest_pvalue > 0


def test_from_members_keeps_every_pair_law_a_probability():
    """ddof=1 scales the members' covariance by M / (M - 1), which can make m_c m_d + cov_cd < 0; the rule keeps the
    largest scale in [(M - 1)/M, 1] for which every pair is >= 0 (negative control: the plain unbiased estimate is
    negative on the same members)."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet([0.3, 0.3, 0.3], (400, 3))
    m, cov = socal.from_members(P, ddof=1)
    assert (m[:, :, None] * m[:, None, :] + cov).min() >= -1e-15
    m0, cov0 = socal.from_members(P, ddof=0)
    plain = cov0 * 3 / 2
    assert (m0[:, :, None] * m0[:, None, :] + plain).min() < -1e-3
    ratio = np.where(np.abs(cov0) > 1e-12, cov / np.where(np.abs(cov0) > 1e-12, cov0, 1.0), 1.0)
    assert ratio.min() >= 1.0 - 1e-12 and ratio.max() <= 1.5 + 1e-12


def test_from_members_does_not_zero_an_items_variances_where_a_pair_underflows():
    """Issue 72's rare classes: members with class probabilities from 1e-286 to 1e-10 beside 0.99.  The pair law
    m_c m_d + cov_cd came out below 0 by rounding alone, and read as broken it scaled the whole item's variances to
    0, at ddof=0 as at 1 (the verdict at C = 100 then rejected calibrated ensembles 0.10-0.40).  Now only a
    violation beyond rounding scales, and never below (M - 1) / M: ddof=1 is at least ddof=0 everywhere, and an
    item whose members differ keeps a variance (2 of these 2,000 items were zeroed before)."""
    rng = np.random.default_rng(0)
    b = rng.dirichlet(np.r_[5.0, 1.0, np.full(6, 0.2)], 2000)
    g = rng.gamma(20 * b[:, None, :] + 1e-3, size=(2000, 3, 8))
    P = g / g.sum(axis=2, keepdims=True)
    spread = (P.max(axis=1) - P.min(axis=1)).max(axis=1) > 1e-6
    for diagonal in (False, True):
        _, cov = socal.from_members(P, ddof=1, diagonal=diagonal)
        _, cov0 = socal.from_members(P, ddof=0, diagonal=diagonal)
        var, var0 = (cov, cov0) if diagonal else (np.diagonal(cov, axis1=1, axis2=2),
                                                  np.diagonal(cov0, axis1=1, axis2=2))
        assert np.all(var0.sum(axis=1)[spread] > 0)
        assert np.all(var >= var0 * (1 - 1e-9) - 1e-300)  # (subnormal variances round coarsely)
        ratio = var[spread].sum(axis=1) / var0[spread].sum(axis=1)
        assert ratio.min() >= 1 - 1e-9 and ratio.max() <= 1.5 + 1e-9


def test_simulated_pvalue_is_a_count_and_resolves_the_level_asked():
    """A statistic beyond every replicate gets 1 / (1 + L), never an extrapolated tail (which read 7.6e-33 from 200
    replicates where 999 gave 0.004 on a sparse calibrated class); ``resolution`` draws on until its level is
    decided by counts.  Negative control: the same statistics without ``resolution`` stop at the default floor."""
    rng = np.random.default_rng(5)
    n = 3000
    m = rng.beta(0.3, 30, n)
    v = 0.2 * m * (1 - m) * rng.uniform(0.1, 1, n)
    counts = np.zeros(n)
    counts[:30] = 2  # many more agreeing positive pairs than mu2 allows: far beyond every replicate
    stats_ = socal.CalibrationTestStats().update(m, v, counts=(counts, np.full(n, 2.0)))
    base = stats_.test(reference="simulated")
    assert base.n_sim == socal.testing.N_SIM and base.pvalue == 1 / (1 + socal.testing.N_SIM)
    assert "p <= 0.001" in base.summary()
    fine = stats_.test(reference="simulated", resolution=1e-4)
    assert fine.n_sim == 9999 and fine.pvalue == pytest.approx(1e-4)
    with pytest.raises(ValueError, match="'resolution' parameter of CalibrationTestStats.test must be a number in"):
        stats_.test(resolution=0.0)
    # under the null every simulated p-value is at least the count's floor
    m2, v2, c2 = _rare(600, rng=3)
    t = socal.calibration_test(m2, v2, counts=c2, reference="simulated")
    assert min(t.pvalue, t.mean_part.pvalue, t.variance_part.pvalue) >= 1 / (1 + t.n_sim)


def test_multiclass_refuses_a_negative_pair_law_and_a_covariance_of_strings():
    m = np.array([[0.1, 0.1, 0.8]] * 4)
    u = np.array([1.0, -1.0, 0.0])
    cov = np.repeat((0.05 * np.outer(u, u))[None], 4, axis=0)
    counts = np.array([[1, 1, 0]] * 4)
    with pytest.raises(ValueError, match=r"item 0, classes \(0, 1\): m_c m_d \+ cov_cd = -0.04"):
        socal.calibration_test(m, cov, counts=counts)
    with pytest.raises(ValueError, match="'cov' parameter of multiclass_test must be an array of real numbers"):
        socal.calibration_test(m, cov.astype(str), counts=counts)


def test_above_the_reference_needs_the_test_to_reject(monkeypatch):
    """'above reference' is a claim that an error exists: with the same interval, a test that does not reject at
    0.05 turns it into 'above reference, not confirmed', in words that say so."""
    import dataclasses

    m, v, _, y = synthetic.toy_population().sample_raw(4000, rng=1)
    ev = socal.evaluate(m, v, y, h=1 / 16, rng=0, n_boot=50)
    assert ev.verdict == "above reference"
    quiet = dataclasses.replace(ev, test=dataclasses.replace(ev.test, pvalue=0.3, rest_pvalue=0.3))
    assert quiet.verdict == "above reference, not confirmed"
    assert "not confirmed" in quiet.summary() and "is above the reference (the whole" not in quiet.summary()


@pytest.mark.parametrize("law", ["beta", "atom-0", "atom-1"])
def test_two_point_laws_have_the_reported_moments(law):
    """RareEventPopulation(law=): f* two-point with an atom at 0 or at 1 is calibrated like the Beta: E[f* - m] = 0
    and E[f*^2 - m^2 - var] = 0 (within 5 standard errors on 200,000 items), on the same scores as the Beta."""
    m, v, f, _ = RareEventPopulation("ties", k=3, law=law).sample_counts(200_000, rng=1)
    m0, v0, _, _ = RareEventPopulation("ties", k=3).sample_counts(200_000, rng=1)
    assert np.array_equal(m, m0) and np.array_equal(v, v0)
    for r in (f - m, f**2 - m**2 - v):
        assert abs(r.mean()) < 5 * r.std() / np.sqrt(r.size)
    assert f.min() >= 0 and f.max() <= 1


def test_two_point_laws_bracket_the_third_moment():
    """Given two moments on [0, 1], the atom at 0 gives the smallest E[f*^3] and the atom at 1 the largest: per item
    exactly (the laws' moments in closed form), and the Beta lies between.  An unknown law is refused."""
    m, v = np.array([0.02, 0.1, 0.5]), np.array([0.005, 0.02, 0.1])
    mu2 = m**2 + v
    low = mu2**2 / m  # {0, x}: x = mu2 / m with probability m / x
    g = 1 - m
    high = 1 - 3 * g + 3 * (g**2 + v) - ((g**2 + v) ** 2 / g)  # E (1 - g*)^3, g* = 1 - f* of 'atom-0' at 1 - m
    s = m * (1 - m) / v - 1
    a, b = m * s, (1 - m) * s
    beta3 = a * (a + 1) * (a + 2) / ((a + b) * (a + b + 1) * (a + b + 2))
    assert np.all(low < beta3) and np.all(beta3 < high)
    with pytest.raises(ValueError, match="'law' parameter of RareEventPopulation"):
        RareEventPopulation(law="gaussian")


def test_a_vote_check_without_spread_prints_no_negative_factor():
    """The votes' unbiased Var f* can fall below 0 where they show no spread; the recount then says so instead of a
    negative factor (it printed 'x-1.35e+04' on CIFAR-10H); with spread it prints the factor (control)."""
    m, v = np.full(200, 0.3), np.full(200, 0.01)
    flat = socal.vote_check(m, v, counts=(np.full(200, 1.0), np.full(200, 3.0)))  # a = 1 of 3 everywhere
    assert flat.votes_var <= 0 and "x-" not in str(flat) and "no spread of f*" in flat.summary()
    spread = socal.vote_check(m, v, counts=(np.r_[np.zeros(100), np.full(100, 3.0)], np.full(200, 3.0)))
    assert spread.votes_var > 0 and f"x{spread.var_factor:.3g}" in str(spread)


def _factorial_moments(p, k, j):
    a = np.arange(k + 1, dtype=float)
    f = np.ones_like(a)
    for i in range(j):
        f = f * (a - i) / (k - i)
    return p @ f


@given(m=st.floats(0.001, 0.999), rel=st.floats(0.01, 0.99), t=st.floats(-1.0, 1.0), k=st.integers(3, 40))
@settings(max_examples=150, deadline=None)
def test_a_shaped_law_keeps_the_nulls_two_moments_and_moves_the_third_between_its_ends(m, rel, t, k):
    """The law mixing the Beta with a two-point law (shape t) has the null's E f* and E f*^2 (its first two factorial
    moments), and its E f*^3 is the mixture's: (1 - |t|) of the Beta's plus |t| of the end's, inside the bracket
    [atom at 0, atom at 1] of :func:`third_moments`, at the ends exactly for t = -1 and t = 1."""
    v = rel * m * (1 - m)
    M, MU2 = np.array([m]), np.array([m * m + v])
    p = _law(M, MU2, k, np.array([t]))[0]
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    assert _factorial_moments(p, k, 1) == pytest.approx(m, rel=1e-7, abs=1e-12)
    assert _factorial_moments(p, k, 2) == pytest.approx(m * m + v, rel=1e-7, abs=1e-12)
    lo, mid, hi = (float(x[0]) for x in third_moments(M, MU2))
    assert lo <= mid * (1 + 1e-9) and mid <= hi * (1 + 1e-9)
    end = hi if t > 0 else lo
    assert _factorial_moments(p, k, 3) == pytest.approx((1 - abs(t)) * mid + abs(t) * end, rel=1e-6, abs=1e-12)


def test_two_point_laws_are_the_populations_atoms():
    """socal.reference.two_point is the law RareEventPopulation draws (its atom at 0: x = mu2 / m with probability
    m^2 / mu2; at 1 the mirror image), so the reference's ends are the laws measured in the benchmarks."""
    m, v = np.array([0.02, 0.1, 0.5]), np.array([0.005, 0.02, 0.1])
    mu2 = m * m + v
    x0, q0 = two_point(m, mu2, 0)
    assert x0 == pytest.approx(mu2 / m) and q0 == pytest.approx(m * m / mu2)
    x1, q1 = two_point(m, mu2, 1)
    for x, q, end in ((x0, q0, 0.0), (x1, q1, 1.0)):
        assert q * x + (1 - q) * end == pytest.approx(m) and q * x * x + (1 - q) * end == pytest.approx(mu2)


@pytest.mark.parametrize("law, inside", [("beta", 0.0), ("atom-1", 1.0), ("atom-0", -1.0)])
def test_the_third_moments_interval_covers_the_populations_shape(law, inside):
    """On 20,000 items with k = 10 votes, each pool's interval for the votes' third moment covers the population's
    own shape (0 for the Beta, +1 for the atom at 1, -1 for the atom at 0), and excludes what the votes can tell
    apart: the Beta's interval reaches neither end, the atom at 1's excludes the Beta (the atom at 0 and the Beta
    differ little in E f*^3 at these means, and its interval may hold both)."""
    m, v, (a, k) = _rare(20000, rng=4, kind="ties", k=10, law=law)
    stats_ = socal.CalibrationTestStats().update(m, v, counts=(a, k))
    g = stats_.groups
    pool = np.zeros(g.keys.size, np.intp)
    lo, hi = shapes(g, pool, 1)
    assert lo[0] - 1e-9 <= inside <= hi[0] + 1e-9
    if law == "beta":
        assert lo[0] > -1 and hi[0] < 1
    elif law == "atom-1":
        assert lo[0] > 0


def test_the_reference_holds_its_size_off_the_beta_and_the_beta_reference_does_not():
    """A reduced benchmarks/tail.py --laws: calibrated tied rare events whose f* has an atom at 1, k = 10 votes,
    n = 2,000, 40 samples.  The default reference (both ends of the third moment's interval) rejects at 0.05 no more
    than a Binomial(40, 0.05) count allows (false alarm family_alpha(2) per run); reference='beta' on the same
    samples rejects more often than a Binomial(40, 0.05) count exceeds with probability 0.01, and more often than the
    default (it read 0.25-0.40 at 0.05 in the benchmark): the negative control."""
    pop = RareEventPopulation("ties", k=10, law="atom-1")
    default = beta = 0
    for r in range(40):
        m, v, _, counts = pop.sample_counts(2000, rng=np.random.default_rng([75, r]))
        default += socal.calibration_test(m, v, counts=counts, reference="simulated").pvalue <= 0.05
        beta += socal.calibration_test(m, v, counts=counts, reference="beta").pvalue <= 0.05
    bound = stats.binom.isf(family_alpha(2), 40, 0.05)
    assert default <= bound, default
    assert beta > stats.binom.isf(0.01, 40, 0.05) and beta > default, (beta, default)


def test_group_sums_saved_without_the_third_moment_read_the_whole_bracket():
    """Sums pickled before the votes' z3 was kept (six rows) load with z3 unknown, and the reference then reads both
    ends of the bracket (t = -1 and +1) rather than a third moment of 0; the same sums with z3 read an interval."""
    m, v, (a, k) = _rare(20000, rng=4, kind="ties", k=10)
    g = socal.CalibrationTestStats().update(m, v, counts=(a, k)).groups
    old = GroupSums()
    old.__setstate__({"keys": g.keys, "sums": g.sums[:-1]})
    pool = np.zeros(g.keys.size, np.intp)
    lo, hi = shapes(old, pool, 1)
    assert lo[0] == -1 and hi[0] == 1
    lo, hi = shapes(g, pool, 1)
    assert (lo[0], hi[0]) != (-1, 1)


def test_group_laws_draw_at_the_variance_asked_and_the_means_part_reads_the_larger_p(monkeypatch):
    """The means part is also read against the partial null "means right, variances as the votes say"
    (socal.reference.group_laws(var_law=), socal.testing._simulated_pvalues): the laws there have the reported means
    and the variance asked (capped at m (1 - m)), and the part's p-value is the larger of the two, so it is never
    below the full null's (its size can only fall).  Control: with the votes' excess forced to 0 the re-read is
    skipped and the part reads the full null's p alone, which is smaller on these votes (variances 5x too small)."""
    from socal import testing
    from socal.reference import GroupSums, group_laws

    g = GroupSums()
    m, v = np.array([0.02, 0.3, 0.3]), np.array([0.001, 0.01, 0.01])
    zero = np.zeros(3)
    g.add(np.array([5, 9, 9]), np.array([10, 10, 2]), (np.ones(3), m, m * m + v, zero, zero, m * m - v, zero))
    asked = np.array([0.005, 0.5, 0.05])
    laws = group_laws(g, var_law=asked)
    assert sorted(laws) == [2, 10]
    for k, (idx, pmf, *_rest) in laws.items():
        a = np.arange(k + 1)
        mean = pmf @ a / k
        mu2 = pmf @ (a * (a - 1)) / (k * (k - 1))
        assert mean == pytest.approx(m[idx])
        assert mu2 - mean ** 2 == pytest.approx(np.minimum(asked, m * (1 - m))[idx])  # 0.5: capped at 0.21
    pop = synthetic.RareEventPopulation(var_factor=0.2, k=10)
    mc, vc, _, counts = pop.sample_counts(2000, rng=np.random.default_rng([7301, 4, 11]))
    both = socal.calibration_test(mc, vc, counts=counts, reference="simulated")
    monkeypatch.setattr(testing._Order2, "rho", lambda self, epi_u: np.zeros(self.npool))
    full = socal.calibration_test(mc, vc, counts=counts, reference="simulated")
    assert both.statistic == full.statistic and both.pvalue == full.pvalue  # T and its reference: unchanged
    assert both.mean_part.pvalue >= full.mean_part.pvalue


def test_a_region_sentence_claims_a_direction_only_for_a_part_that_rejects():
    """Issue 73: with T rejecting and neither part alone, the region sentence followed the part with the smaller
    p-value and said "the means are too high (z = -2.3)" with both parts above 0.2.  Now it names the largest residual
    and what the votes show there, and claims no direction.  Control: where the part rejects, it says which way."""
    pop = synthetic.RareEventPopulation(var_factor=0.2, k=10)
    m, v, _, counts = pop.sample_counts(2000, rng=np.random.default_rng([7301, 4, 0]))
    res = socal.calibration_test(m, v, counts=counts)
    assert res.pvalue <= 0.05 and min(res.mean_part.pvalue, res.variance_part.pvalue) > 0.05  # the case itself
    text = res.summary()
    assert "Neither the means nor the variances reject alone at level 0.05" in text
    for claim in ("too high", "too low", "too large", "too small"):
        assert claim not in text.split("Likely unseen")[0], claim
    m2, v2, _, y2 = synthetic.EnsembleLikePopulation(0.01, var_factor=0.2).sample_raw(3000, k=10,
                                                                                      rng=np.random.default_rng(3))
    loud = socal.calibration_test(m2, v2, y2)
    assert loud.variance_part.pvalue <= 0.05 and "The evidence is strongest in the variances" in loud.summary()
    assert "too small" in loud.summary().split("Likely unseen")[0]
