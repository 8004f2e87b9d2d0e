"""The headline estimate, its interval and its upper bound on the validation zoo (issue 10).

Each cell draws R samples of a zoo member with exact CE2^pert / CE1^pert and counts how often the interval and the
bound hold the truth.  A cell passes when the count is not too small for a true coverage of level - 0.02: the
acceptance threshold is the binomial quantile with false-alarm rate ALPHA per cell (a correct interval fails a cell
with probability <= ALPHA).  The default suite runs three cells (two at n = 1000, one at 5000) with R = 40; the
slow marker runs the tuning and held-out members at both h and n in {1000, 5000} with R = 200 (docs/numbers.md,
"Trustworthy numbers", has the whole grid, from benchmarks/coverage.py, with n = 50,000 too).
"""

import zlib

import numpy as np
import pytest
from scipy import stats

import socal

ALPHA = 1e-3
LEVEL, UPPER = 0.9, 0.95


def threshold(reps, level, alpha=ALPHA):
    """Least count of covering replicates accepted: P(Binomial(reps, level - 0.02) < threshold) <= alpha."""
    p = level - 0.02
    c = int(stats.binom.ppf(alpha, reps, p))
    while stats.binom.cdf(c - 1, reps, p) > alpha:  # ppf gives cdf(c) >= alpha; we need cdf(c - 1) <= alpha
        c -= 1
    return c


def _cell(kind, name, h, n, reps, n_boot=100):
    pop = socal.synthetic.validation_zoo()[name].population
    truth = float((pop.ce2(h) if kind == "ce2" else pop.ce1(h)).value)
    rows = []
    for rep in range(reps):
        m, v, y = pop.sample(n, h=h, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, rep]))
        if kind == "ce2":
            r = socal.ce2(m, v, y, h=h, ci=LEVEL, upper=UPPER, n_boot=n_boot, rng=rep)
        else:
            r = socal.ce1(m, y, h=h, ci=LEVEL, upper=UPPER, n_boot=n_boot, rng=rep)
        rows.append((r.estimate, r.ci.low, r.ci.high, r.upper.value))
    est, lo, hi, up = np.array(rows).T
    return truth, est, lo, hi, up


def _check(kind, name, h, n, reps, n_boot=100):
    truth, est, lo, hi, up = _cell(kind, name, h, n, reps, n_boot)
    assert np.all((lo <= est) & (est <= hi) & (est <= up)), "the interval and the bound must hold the estimate"
    covered, covered_up = int(np.sum((lo <= truth) & (truth <= hi))), int(np.sum(truth <= up))
    assert covered >= threshold(reps, LEVEL), (kind, name, h, n, covered, reps)
    assert covered_up >= threshold(reps, UPPER), (kind, name, h, n, covered_up, reps)


def test_threshold_is_a_binomial_quantile_and_rejects_undercoverage():
    c = threshold(40, 0.9)
    assert stats.binom.cdf(c - 1, 40, 0.88) <= ALPHA < stats.binom.cdf(c, 40, 0.88)
    # the power of a 40-replicate cell: an interval that covers 60% of the time fails it with probability > 0.8
    # (70%: 0.42), one at the edge (88%) with probability <= ALPHA
    assert stats.binom.cdf(c - 1, 40, 0.60) > 0.8
    rng = np.random.default_rng(0)
    assert np.mean(rng.binomial(40, 0.60, size=2000) < c) > 0.8
    assert np.mean(rng.binomial(40, 0.88, size=2000) < c) < 0.01


def test_check_fails_an_interval_that_misses_the_truth(monkeypatch):
    """Negative control of the harness itself: shift every interval away from the truth and it must fail."""
    real = _cell

    def shifted(*args):
        truth, est, lo, hi, up = real(*args)
        d = hi - lo + 0.05
        return truth, est + d, lo + d, hi + d, up + d

    monkeypatch.setitem(globals(), "_cell", shifted)
    with pytest.raises(AssertionError):
        _check("ce2", "toy", 1 / 16, 1000, 10)


@pytest.mark.parametrize("kind, name, h, n", [("ce2", "calibrated-many", 1 / 64, 1000),
                                              ("ce1", "underconfident", 1 / 16, 1000),
                                              # the bound covered 0.91 of 200 before Lepski's rule looked finer
                                              ("ce1", "toy", 1 / 16, 5000)])
def test_interval_and_upper_bound_cover_reduced(kind, name, h, n):
    _check(kind, name, h, n, 40)


# cells where the bracket interval is known to under-cover (docs/numbers.md), marked strict so that a fix shows up as
# an unexpected pass.  None at n <= 5,000 now: CE1 calibrated-many at h = 1/64, n = 5,000 (truth 0.0014) covered 159
# of 200 while CE1's bootstrap world left out the spread of f* among items of one score, and 185 with it
UNDERCOVER = {}


@pytest.mark.slow
@pytest.mark.parametrize("n", [1000, 5000])
@pytest.mark.parametrize("h", [1 / 16, 1 / 64])
@pytest.mark.parametrize("kind", ["ce2", "ce1"])
@pytest.mark.parametrize("name", list(socal.synthetic.validation_zoo()))
def test_interval_and_upper_bound_cover_full(name, kind, h, n, request):
    """The docs' grid at n <= 5,000, cell by cell (the same seeds and n_boot as benchmarks/coverage.py)."""
    if (name, kind, h, n) in UNDERCOVER:
        request.applymarker(pytest.mark.xfail(strict=True, reason=UNDERCOVER[name, kind, h, n]))
    _check(kind, name, h, n, 200, n_boot=200)


def test_the_interval_holds_zero_on_calibrated_scores():
    """At CE2 = 0 the bracket fails (both bootstrap worlds keep part of the noise as miscalibration and correct
    less than the plug-in's bias): on calibrated Beta scores at n = 1,000 the bracket union held 0 in 38 of these
    60 samples, fewer than a 0.88-coverage interval gives with probability 1 - ALPHA.  Joined with the calibration
    test's confidence set {0} (ce2's Notes) it holds 0 in enough; the control is the bracket union alone, read
    from the candidates of the same calls."""
    reps = 60
    rows = []
    for rep in range(reps):
        m, v, _, y = socal.synthetic.beta_calibrated_sample(1000, rng=np.random.default_rng([2, 1000, rep]))
        r = socal.ce2(m, v, y, ci=LEVEL, upper=UPPER, rng=rep)
        bracket = min(c.ci.low for c in r.candidates)
        if bracket > 0:  # the test is run only where it can move the lower end
            # the same test on the same rows, read against the chi-square as the interval's 0-join reads it
            assert r.null_pvalue == socal.calibration_test(m, v, y, reference="chi2").pvalue
            assert (r.ci.low == 0) == (r.null_pvalue >= 1 - LEVEL)
        else:
            assert r.null_pvalue is None and r.ci.low == 0
        rows.append((bracket, r.ci.low, r.upper.value))
    bracket, low, up = np.array(rows).T
    assert int(np.sum(low <= 0)) >= threshold(reps, LEVEL)
    assert int(np.sum(bracket <= 0)) < threshold(reps, LEVEL)  # the control: the bracket alone under-covers
    assert np.all(up >= 0)
