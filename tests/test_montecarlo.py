"""Monte Carlo accuracy of ce2 as a statistical test: counts of replicates within tolerance, binomial acceptance.

The full-size run (20 replicates per cell) is marked slow; the default suite runs a reduced version.
"""

import numpy as np
import pytest
from scipy import stats

import socal
from socal import synthetic


def _hits(pop, h, n, reps, tol, seed0):
    truth = pop.ce2(h).value
    errs = [abs(socal.ce2(*pop.sample(n, h=h, rng=seed0 + r), h=h, rng=r, debias=False).estimate - truth)
            for r in range(reps)]
    return int(np.sum(np.array(errs) < tol)), errs


def _accept(hits, reps, p_required=0.9, false_alarm=1e-3):
    """Reject 'P(|error| < tol) >= p_required' only when a one-sided binomial test does so at level false_alarm."""
    return stats.binomtest(hits, reps, p_required, alternative="less").pvalue > false_alarm


def test_binomial_rule_rejects_a_biased_estimator():
    """Negative control: an estimator shifted by 0.03 misses the 0.015 tolerance and is caught."""
    pop, h = synthetic.toy_population(), 1 / 16
    truth = pop.ce2(h).value
    errs = [abs(socal.ce2(*pop.sample(5000, h=h, rng=r), h=h, degree=8, ridge=1e-3, debias=False).estimate + 0.03
                - truth)
            for r in range(6)]
    assert not _accept(int(np.sum(np.array(errs) < 0.015)), 6, false_alarm=0.05)


def test_reduced_accuracy_run():
    hits, errs = _hits(synthetic.calibrated_population(), 1 / 64, 50_000, 3, 0.015, 500)
    assert _accept(hits, 3, false_alarm=0.05), errs


@pytest.mark.slow
@pytest.mark.parametrize("h", [1 / 16, 1 / 64])
@pytest.mark.parametrize("name", ["toy", "calibrated", "overconfident"])
def test_full_accuracy_run(name, h):
    hits, errs = _hits(getattr(synthetic, f"{name}_population")(), h, 50_000, 20, 0.015, 1000)
    assert _accept(hits, 20), (hits, errs)
