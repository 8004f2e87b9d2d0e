"""socal.synthetic.validation_zoo: the populations span what issue 10 asks, with exact truth at both bandwidths."""

import numpy as np
import pytest

import socal

ZOO = socal.synthetic.validation_zoo()
TUNING = {k: z for k, z in ZOO.items() if not z.held_out}


@pytest.fixture(scope="module")
def truths():
    return {(k, h): (z.population.ce2(h=h).value, z.population.ce1(h=h).value)
            for k, z in ZOO.items() for h in (1 / 16, 1 / 64)}


def test_eight_tuning_members_and_a_held_out_part():
    assert len(TUNING) >= 8 and len(ZOO) > len(TUNING)
    assert set(socal.synthetic.validation_zoo(include_held_out=False)) == set(TUNING)


def test_the_zoo_spans_small_and_large_truth_at_both_bandwidths(truths):
    ce2_64 = [truths[(k, 1 / 64)][0] for k in TUNING]
    ce2_16 = [truths[(k, 1 / 16)][0] for k in TUNING]
    assert min(ce2_64) < 0.04 and max(ce2_16) > 0.15 and max(ce2_64) > 0.15


def test_calibrated_members_have_zero_raw_error_and_the_others_do_not():
    raw = {k: z.population.raw_ce2() for k, z in TUNING.items()}
    assert [k for k, r in raw.items() if r < 1e-12] == ["calibrated-few", "calibrated-many", "nearly-calibrated"]
    assert all(r > 0.01 for k, r in raw.items() if not k.startswith(("calibrated", "nearly")))


def test_variance_only_and_mean_only_members():
    for name in ("overconfident", "underconfident"):  # means calibrated: E f* = m at every atom
        pop = ZOO[name].population
        np.testing.assert_allclose(pop.eta_orig[0], pop.means, atol=1e-12)
    pop = ZOO["mean-shifted"].population  # variance right: Var f* = reported var at every atom
    e1, e2 = pop.eta_orig
    np.testing.assert_allclose(e2 - e1**2, pop.vars, atol=1e-12)
    assert np.abs(e1 - pop.means).max() > 0.1


def test_many_atoms_and_a_smooth_member():
    sizes = {k: len(z.population.means) for k, z in TUNING.items()}
    assert min(sizes.values()) <= 6 and sizes["calibrated-many"] >= 48 and sizes["smooth"] >= 100


@pytest.mark.parametrize("name", ["smooth", "held-out-mixed"])
def test_exact_truth_agrees_with_monte_carlo(name):
    """CE2^pert from quadrature against the mean of |exact eta - score| over sampled perturbed scores."""
    pop = ZOO[name].population
    h = 1 / 16
    m, v, _ = pop.sample(40000, h=h, rng=1)
    e1, e2 = pop.calibration_functions(h, m, v)
    mc = np.abs(e1 - m) + np.abs(e2 - (m * m + v))
    assert abs(mc.mean() - pop.ce2(h=h).value) < 5 * mc.std() / np.sqrt(len(mc))


@pytest.mark.parametrize("median_var", [1e-6, 1e-3, 1e-2])
def test_sharp_populations_are_what_they_claim(median_var):
    """synthetic.sharp_population: the median reported variance is the one asked for; 'calibrated' has E f* = m and
    Var f* = var at every atom (so its raw CE2 is 0), 'overconfident' ten times the variance, 'mean-shifted'
    E f* = 0.15 + 0.7 m; and the atoms are fixed data (the same population on every call)."""
    synthetic = socal.synthetic
    cal = synthetic.sharp_population(median_var)
    assert np.median(cal.vars) == pytest.approx(median_var, rel=0.01)
    e1 = (cal.fstar * cal.fprobs).sum(axis=1)
    e2 = (cal.fstar**2 * cal.fprobs).sum(axis=1)
    assert np.allclose(e1, cal.means) and np.allclose(e2 - e1**2, cal.vars, rtol=1e-9, atol=1e-15)
    assert cal.raw_ce2() == pytest.approx(0.0, abs=1e-12)
    over = synthetic.sharp_population(median_var, "overconfident")
    e1o, e2o = ((over.fstar**j * over.fprobs).sum(axis=1) for j in (1, 2))
    assert np.allclose(e2o - e1o**2, np.minimum(10 * over.vars, 0.9 * over.means * (1 - over.means)))
    shifted = synthetic.sharp_population(median_var, "mean-shifted")
    assert np.allclose((shifted.fstar * shifted.fprobs).sum(axis=1), 0.15 + 0.7 * shifted.means)
    assert np.array_equal(synthetic.sharp_population(median_var).means, cal.means)


@pytest.mark.parametrize("bad, match", [({"median_var": 0.0}, "'median_var' parameter of sharp_population"),
                                        ({"median_var": 0.02}, "'median_var'"),
                                        ({"median_var": float("nan")}, "'median_var'"),
                                        ({"median_var": 1e-4, "kind": "tempered"}, "'kind' parameter")])
def test_sharp_population_refuses_what_it_cannot_build(bad, match):
    with pytest.raises(ValueError, match=match):
        socal.synthetic.sharp_population(**bad)


@pytest.mark.parametrize("kwargs, name", [
    (dict(var_level=-1), "var_level"), (dict(var_level=float("nan")), "var_level"), (dict(var_level=1.0), "var_level"),
    (dict(var_factor=-2), "var_factor"), (dict(temperature=0), "temperature"), (dict(temperature=-1), "temperature"),
    (dict(mean_shift=5), "mean_shift"), (dict(region_from=2), "region_from"), (dict(var_factor="big"), "var_factor"),
])
def test_a_synthetic_population_is_checked_when_built(kwargs, name):
    """A negative var_factor made negative variances and temperature 0 divided by zero, at sampling time or never."""
    with pytest.raises(ValueError, match=f"'{name}' parameter of EnsembleLikePopulation"):
        socal.synthetic.EnsembleLikePopulation(**kwargs)
    pop = socal.synthetic.EnsembleLikePopulation(0.01, var_factor=0.0, temperature=2.0, mean_shift=-1.0,
                                                 region_from=0.0)
    m, v, _, _ = pop.sample_raw(50, rng=0)
    assert np.all((v >= 0) & (v <= m * (1 - m)))


def test_a_population_names_its_own_fields_and_refuses_nan_where_it_is_built():
    """DiscretePopulation named its fields 'mean' and 'var' (they are 'means' and 'vars'), said "Got shape (2, 2)"
    for an f* value of 1.4 in a well-shaped array, and took a NaN in 'fstar', which failed only in .ce2() as
    "The 'e1' parameter of discrete_ce2", a parameter the user never gave."""
    from socal.synthetic import DiscretePopulation

    ok = dict(means=[0.3, 0.7], vars=[0.01, 0.02], weights=[0.5, 0.5], fstar=[[0.2, 0.4], [0.6, 0.8]],
              fprobs=[[0.5, 0.5], [0.5, 0.5]])
    DiscretePopulation(**ok)
    cases = [("vars", [0.3, 0.02], "'vars' parameter of DiscretePopulation must be in \\[0, 1/4\\]"),
             ("means", [float("nan"), 0.7], "'means' parameter of DiscretePopulation must be finite"),
             ("fstar", [[0.2, 1.4], [0.6, 0.8]], "'fstar' .* must be in \\[0, 1\\].*e.g. 1.4"),
             ("fstar", [[0.2, float("nan")], [0.6, 0.8]], "'fstar' parameter of DiscretePopulation must be finite"),
             ("fstar", [[0.2], [0.6]], "'fstar' .* one row per atom \\(2\\) and the shape of 'fprobs' \\(2, 2\\)"),
             ("fprobs", [[0.5, 0.4], [0.5, 0.5]], "'fprobs' .* rows summing to 1. Got row sums"),
             ("weights", [float("nan"), 1.0], "'weights' parameter of DiscretePopulation must be finite")]
    for field, value, match in cases:
        with pytest.raises(ValueError, match=match):
            DiscretePopulation(**{**ok, field: value})
    with pytest.raises(ValueError, match="'n' parameter of beta_calibrated_sample"):  # returned empty arrays
        socal.synthetic.beta_calibrated_sample(0, rng=0)
