"""socal.lepski: the rule that chooses the CE estimate's degree among the cross-validated fit and finer ones."""

from types import SimpleNamespace

import numpy as np
import pytest

import socal
from socal import lepski


def _cand(degree, debiased, deltas):
    """A candidate as choose_degree reads it: its degree, bias-corrected estimate and bootstrap deltas."""
    fit = SimpleNamespace(calmap=SimpleNamespace(degree=degree))
    return lepski.Candidate(fit=fit, dev=None, plugin=debiased, boot=SimpleNamespace(debiased=debiased,
                                                                                        deltas=np.asarray(deltas)))


def test_the_coarsest_degree_that_agrees_with_every_finer_one_is_kept():
    """Three candidates whose coupled bootstraps give a standard error of 0.01 for every difference: the coarse one
    differs from the finest by 0.05 (5 SE), the middle one agrees with the finest (1 SE): the middle one is
    chosen, and the rule says why.  Controls: with the coarse one within 2 SE of both it is kept ('cv'); a single
    candidate is 'cv'."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal(400) * 0.05
    noise = rng.standard_normal((3, 400))
    noise = (noise - noise.mean(axis=1, keepdims=True)) / noise.std(axis=1, keepdims=True)
    d = [base + 0.01 / np.sqrt(2) * noise[i] for i in range(3)]  # sd of each difference: 0.01
    far = [_cand(6, 0.10, d[0]), _cand(12, 0.14, d[1]), _cand(22, 0.15, d[2])]
    k, rule = lepski.choose_degree(far)
    assert k == 1 and rule.startswith("lepski: degree 12") and "6" in rule
    near = [_cand(6, 0.135, d[0]), _cand(12, 0.14, d[1]), _cand(22, 0.15, d[2])]
    assert lepski.choose_degree(near) == (0, "cv: degree 6; the finer degrees 12, 22 agree within 2 standard errors")
    assert lepski.choose_degree(far[:1]) == (0, "cv")


@pytest.mark.parametrize("gap_se,chosen", [(1.9, 0), (2.1, 1)])
def test_the_threshold_is_lepski_z_standard_errors(gap_se, chosen):
    """At 1.9 standard errors apart two candidates agree, at 2.1 they do not (LEPSKI_Z = 2)."""
    rng = np.random.default_rng(1)
    e = rng.standard_normal(1000)
    e = (e - e.mean()) / e.std()
    a, b = np.zeros(1000), 0.01 * e  # the spread of b - a is 0.01 exactly
    k, _ = lepski.choose_degree([_cand(4, 0.1, a), _cand(8, 0.1 + gap_se * 0.01, b)])
    assert k == chosen


def test_more_labels_count_as_more_rows_but_two_labels_do_not():
    """label_noise_factor is 1 for two labels per item (up to the dead zone) and above 1 with ten, where the label
    noise E[f*(1 - f*)]/k shrinks; a first-order fit counts as 1."""
    pop = socal.synthetic.toy_population()
    m, v, y2 = pop.sample(20_000, h=1 / 16, rng=0)
    _, _, y10 = pop.sample(20_000, h=1 / 16, k=10, rng=0)
    factors = {}
    for name, y in (("two", y2), ("ten", y10)):
        stats = socal.SufficientStats(max_degree=6).update(m, v, y)
        fit = socal.calibration_functions(stats, degree=6, ridge=1e-3)
        factors[name] = lepski.label_noise_factor(stats, SimpleNamespace(calmap=fit.map))
    assert factors["two"] == 1.0
    assert factors["ten"] > 1.5, factors
    stats1 = socal.SufficientStats(max_degree=6, ndim=1).update(m, None, y10)
    assert lepski.label_noise_factor(stats1, SimpleNamespace(calmap=SimpleNamespace(beta=np.zeros((7, 1))))) == 1.0


def test_finer_fits_are_finer_than_cv_and_none_when_the_degree_is_given():
    """The finer candidates are all above cross-validation's degree and within the schedule's top; none are fitted
    when the caller fixed the degree (nothing was selected)."""
    m, v, y = socal.synthetic.toy_population().sample(20_000, h=1 / 16, rng=0)
    r = socal.ce2(m, v, y, h=1 / 16, n_boot=40)
    degrees = [c.degree for c in r.candidates]
    assert degrees == sorted(degrees) and len(set(degrees)) == len(degrees) and len(degrees) >= 2
    fixed = socal.ce2(m, v, y, h=1 / 16, degree=8, ridge=1e-3, n_boot=40)
    assert [c.degree for c in fixed.candidates] == [8]
