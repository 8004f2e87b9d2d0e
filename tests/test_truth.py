"""The exact truths of socal.truth at small bandwidths: refused where the quadrature cannot resolve the kernel, and
right (within their own error estimate) where it can."""

import numpy as np
import pytest

import socal
from socal import truth
from socal.truth import (MIN_KERNEL_PANELS, calibrated_reference, discrete_calibration_functions, discrete_ce1,
                         discrete_ce2)


@pytest.fixture(scope="module")
def toy():
    pop = socal.synthetic.toy_population()
    e1, e2 = pop.eta_orig
    return pop, e1, e2


def test_below_a_tenth_of_a_panel_the_quadrature_is_wrong_and_its_error_estimate_does_not_say_so(toy):
    """The negative control of the rule: the quadrature itself, unchecked, at h * panels = 0.0077 (h = 3e-5 on 256
    panels) reports an error estimate smaller than its actual error against 2^16 panels; at h = 1e-9 it reports
    0 +- 0 for a CE1 whose value is near the raw one."""
    pop, e1, _ = toy
    ref = discrete_ce1(3e-5, pop.means, pop.weights, e1, panels=2**16)
    fine, coarse = (truth._ce1_once(3e-5, pop.means, pop.weights, e1, p) for p in (256, 128))
    assert abs(fine - ref.value) > 2 * abs(fine - coarse)
    assert truth._ce1_once(1e-9, pop.means, pop.weights, e1, 2048) < 1e-6 < 0.01 < ref.value


@pytest.mark.parametrize("h, panels", [(1e-3, 128), (3e-4, 512), (1e-4, 1024), (1e-4, 2048), (3e-5, 4096)])
def test_at_a_tenth_of_a_panel_and_above_the_error_estimate_bounds_the_toy_populations_error(toy, h, panels):
    pop, e1, _ = toy
    assert h * panels >= MIN_KERNEL_PANELS
    got = discrete_ce1(h, pop.means, pop.weights, e1, panels=panels)
    ref = discrete_ce1(h, pop.means, pop.weights, e1, panels=2**16)
    assert abs(got.value - ref.value) <= got.error + ref.error


def test_ce2_error_estimate_bounds_the_error_at_the_limit(toy):
    pop, e1, e2 = toy
    h = 1e-4  # h * panels = 0.1024 on 1,024 panels: the limit
    got = discrete_ce2(h, pop.means, pop.vars, pop.weights, e1, e2, panels=1024)
    ref = discrete_ce2(h, pop.means, pop.vars, pop.weights, e1, e2, panels=2048)
    assert abs(got.value - ref.value) <= got.error + ref.error
    assert abs(ref.value - pop.raw_ce2()) < 0.002  # at h -> 0 the perturbed CE2 tends to the raw one


@pytest.mark.parametrize("call, needs", [
    (lambda p, e1, e2: discrete_ce2(1e-6, p.means, p.vars, p.weights, e1, e2), "beyond this function's 16384"),
    (lambda p, e1, e2: discrete_ce2(1e-4, p.means, p.vars, p.weights, e1, e2), "panels >= 1000"),
    (lambda p, e1, e2: discrete_ce2((1 / 16, 1e-5), p.means, p.vars, p.weights, e1, e2), "h_var = 1e-05"),
    (lambda p, e1, e2: discrete_ce1(1e-9, p.means, p.weights, e1), "beyond this function's 65536"),
    (lambda p, e1, e2: discrete_ce1(3e-5, p.means, p.weights, e1, panels=256), "panels >= 3334"),
    (lambda p, e1, e2: p.ce2(1e-9), "discrete_ce2"),
    (lambda p, e1, e2: p.recalibrated_ce2(1e-4, lambda a, b: (a, a * a + b)), "discrete_recalibrated_ce2"),
])
def test_a_bandwidth_the_quadrature_cannot_resolve_is_refused(toy, call, needs):
    pop, e1, e2 = toy
    with pytest.raises(ValueError, match="narrower than its quadrature resolves") as err:
        call(pop, e1, e2)
    assert needs in str(err.value)


def test_the_panels_the_refusal_asks_for_are_enough(toy):
    pop, e1, e2 = toy
    with pytest.raises(ValueError, match=r"panels >= 1000 "):
        pop.ce2(1e-4)
    assert pop.ce2(1e-4, panels=1000).error < 1e-3
    with pytest.raises(ValueError):
        pop.ce2(1e-4, panels=999)


def test_calibration_functions_far_from_every_atom_are_the_nearest_atoms_values(toy):
    """Each kernel underflows to 0 a few hundred h from its atom; the ratio was 0/0 (NaN) there at h = 1e-5."""
    pop, e1, e2 = toy
    t1, t2 = np.array([0.0, 0.15, 0.77, 1.0]), np.array([0.0, 0.01, 0.2, 0.25])
    for h in (1e-5, 1e-9, (1 / 16, 1e-9)):
        g1, g2 = pop.calibration_functions(h, t1, t2)
        assert np.all(np.isfinite(g1)) and np.all(np.isfinite(g2))
        assert np.all((g1 >= e1.min()) & (g1 <= e1.max()))
    g1, _ = pop.calibration_functions(1e-9, t1, t2)
    assert g1[1] == pytest.approx(e1[0])  # (0.15, 0.01) is atom 0
    # where nothing underflows, the same numbers as the plain ratio of kernel mixtures
    h = 1 / 16
    k = (socal.SechKernel(h).pdf(t1[None, :], pop.means[:, None])
         * socal.SechKernel(h, 0, 0.25).pdf(t2[None, :], pop.vars[:, None]) * pop.weights[:, None])
    g1, g2 = pop.calibration_functions(h, t1, t2)
    np.testing.assert_allclose(g1, e1 @ k / k.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(g2, e2 @ k / k.sum(axis=0), rtol=1e-12)
    # an atom of weight 0 has no say, even alone near the point
    g1, _ = discrete_calibration_functions(1e-3, [0.2, 0.8], [0.01, 0.01], [0.0, 1.0], [0.1, 0.9], [0.05, 0.85],
                                           [0.2], [0.01])
    assert g1[0] == pytest.approx(0.9)


def test_the_reference_refuses_a_bandwidth_below_its_resolution():
    rng = np.random.default_rng(0)
    m = rng.uniform(0.05, 0.95, 500)
    v = m * (1 - m) * rng.uniform(0, 0.8, 500)
    with pytest.raises(ValueError, match="below the reference grid's spacing.*method='exact'"):
        calibrated_reference(m, v, 1e-4)
    with pytest.raises(ValueError, match="h_var = 0.0005 < 0.000977"):
        calibrated_reference(m, v, (1 / 16, 1 / 2000))
    assert calibrated_reference(m, v, 1 / 1024).ce2.error < 1e-3  # one spacing: allowed
    with pytest.raises(ValueError, match="calibrated reference's quadrature"):
        calibrated_reference(m[:10], v[:10], 1e-4)  # 10 distinct scores: the exact route, 512 panels
    assert calibrated_reference(m[:10], v[:10], 2e-4).method == "exact"


def test_evaluate_refuses_such_a_bandwidth_in_its_own_name_before_any_work():
    m, v, _, y = socal.synthetic.toy_population().sample_raw(500, rng=0)
    for h in (1e-5, (1 / 16, 5e-5)):
        with pytest.raises(ValueError, match=r"'h' parameter of evaluate .*Use a larger h\.$"):
            socal.evaluate(m, v, y, h=h, n_boot=20)


def test_quadrature_tables_are_bounded_by_memory_not_by_luck(monkeypatch):
    """CE2's quadrature holds (atoms x nodes) kernel tables, 82 kB per atom at 512 panels: 20,000 atoms asked for
    1.5 GiB (100,000, a calibrated reference of continuous scores with method='exact', 8 GiB) and met the
    machine's memory instead of a message.  CE1's integrand sums over atoms before its absolute value, so it is now
    summed over blocks of atoms: the same value, whatever the block."""
    rng = np.random.default_rng(0)
    n = 20_000
    m = rng.uniform(0.05, 0.95, n)
    v = m * (1 - m) * rng.uniform(0, 0.8, n)
    w = np.full(n, 1 / n)
    with pytest.raises(ValueError, match=r"'means' parameter of discrete_ce2 asks for 20000 atoms.*1.5 GiB"):
        discrete_ce2(1 / 16, m, v, w, m, m**2 + v)
    with pytest.raises(ValueError, match=r"'method' parameter of calibrated_reference .* method='grid'"):
        calibrated_reference(m, v, 1 / 16, method="exact")
    assert calibrated_reference(m, v, 1 / 16).method == "grid"  # 'auto' takes the grid there
    whole = discrete_ce1(1 / 16, m[:300], w[:300] * n / 300, m[:300], panels=256)
    monkeypatch.setattr(truth, "_TABLE_BYTES", 2**19)  # blocks of 2 atoms
    blocked = discrete_ce1(1 / 16, m[:300], w[:300] * n / 300, m[:300], panels=256)
    assert blocked.value == pytest.approx(whole.value, rel=1e-12) and blocked.value > 0


def test_calibration_functions_at_many_points_are_computed_in_blocks_with_the_same_values(toy, monkeypatch):
    pop, _, _ = toy
    t1 = np.random.default_rng(1).uniform(0, 1, (40, 25))
    whole = pop.calibration_functions(1 / 16, t1, t1 / 4)
    monkeypatch.setattr(truth, "_TABLE_BYTES", 2**12)  # blocks of 2 points
    blocked = pop.calibration_functions(1 / 16, t1, t1 / 4)
    assert blocked[0].shape == (40, 25)
    np.testing.assert_allclose(blocked[0], whole[0], rtol=1e-13)
    np.testing.assert_allclose(blocked[1], whole[1], rtol=1e-13)


def test_exact_truth_refuses_atoms_no_population_has():
    """socal.truth's exact CE functions compute a number for any arrays; outside the atoms' domain (weights not a
    probability vector, e2 outside [e1^2, e1], a raw variance above m (1 - m), lengths that differ, points outside
    the score rectangle) that number is no population's CE, so each gets a ValueError naming the argument.  Valid
    atoms give what the unchecked quadrature gives."""
    T = socal.truth
    m, v, w, e1, e2 = [0.3, 0.6], [0.01, 0.02], [0.5, 0.5], [0.3, 0.6], [0.1, 0.38]
    unchecked = sum(T._ce2_once(1 / 16, *(np.asarray(x, dtype=float) for x in (m, v, w, e1, e2)), 512))
    assert T.discrete_ce2(1 / 16, m, v, w, e1, e2).value == unchecked
    cases = [
        (dict(weights=[-0.5, 1.5]), "'weights'.*non-negative"),
        (dict(weights=[1.0, 1.0]), "'weights'.*sum to 1"),
        (dict(e2=[0.01, 0.38]), "'e2'.*\\[e1\\^2, e1\\]"),
        (dict(e2=[0.31, 0.38]), "'e2'.*\\[e1\\^2, e1\\]"),
        (dict(e1=[0.3, 1.2]), "'e1'.*in \\[0, 1\\]"),
        (dict(vars_=[0.01, 0.25]), "'vars_'.*at most means"),
        (dict(weights=[1.0]), "'weights'.*one entry per atom \\(2"),
        (dict(means=[0.3, np.nan]), "'means'.*finite"),
        (dict(h=0.0), "'h'"),
        (dict(panels=3), "'panels'"),
    ]
    base = dict(h=1 / 16, means=m, vars_=v, weights=w, e1=e1, e2=e2)
    for change, match in cases:
        with pytest.raises(ValueError, match=match):
            T.discrete_ce2(**{**base, **change})
    with pytest.raises(ValueError, match="'weights'.*sum to 1"):
        T.discrete_ce1(1 / 16, m, [2.0, 2.0], e1)
    with pytest.raises(ValueError, match="'t1'.*in \\[0, 1\\]"):
        T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, [1.5], [0.01])
    with pytest.raises(ValueError, match="'t1' and 't2'.*broadcast"):
        T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, [0.1, 0.2, 0.3], [0.01, 0.02])
    e1_at, e2_at = T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, 0.2, 0.01)
    assert e1_at.shape == () and 0 < float(e1_at) < 1


def test_a_population_given_to_a_few_digits_has_its_exact_truth():
    """DiscretePopulation accepts probabilities whose sums are within np.isclose of 1 (given to 6 digits, say) and
    divides them by their sums, so its exact CE is the normalised population's; socal.truth, which now holds sums
    to 1e-9, refused such a population's own truth before the division."""
    pop = socal.synthetic.DiscretePopulation(means=[0.3, 0.6], vars=[0.01, 0.02], weights=[0.499999, 0.5],
                                             fstar=[[0.3, 0.2], [0.6, 0.1]], fprobs=[[0.999999, 0.0], [1.0, 0.0]])
    assert pop.weights.sum() == pytest.approx(1.0, abs=1e-15)
    w = np.array([0.499999, 0.5]) / 0.999999
    e1, e2 = np.array([0.3, 0.6]), np.array([0.09, 0.36])
    exact = socal.truth.discrete_ce2(1 / 16, [0.3, 0.6], [0.01, 0.02], w, e1, e2).value
    assert pop.ce2(1 / 16).value == pytest.approx(exact, rel=1e-12)
    with pytest.raises(ValueError, match="'weights'.*sum to 1"):
        socal.truth.discrete_ce2(1 / 16, [0.3, 0.6], [0.01, 0.02], [0.499999, 0.5], e1, e2)


def test_sample_truth_checks_its_arguments_before_the_draws():
    """sample_truth(None) raised "'NoneType' object is not callable", log2_n=40 failed in numpy's allocation of
    40 TiB, and one replicate gave an error of NaN (the error is the spread between replicates)."""
    from socal.truth import sample_truth

    with pytest.raises(TypeError, match="'sampler' parameter of sample_truth must be a callable"):
        sample_truth(None, 1 / 16)
    with pytest.raises(ValueError, match="'log2_n' parameter of sample_truth must be an int in the range \\[1, 26\\]"):
        sample_truth(lambda u: None, 1 / 16, log2_n=40)
    with pytest.raises(ValueError, match="'replicates' parameter of sample_truth must be an int in the range \\[2,"):
        sample_truth(lambda u: None, 1 / 16, replicates=1)
