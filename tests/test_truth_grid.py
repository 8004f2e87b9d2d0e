"""Grid ground truth (bilinear deposit + exact kernel matrices) against the exact quadrature, and Experiment 2."""

import numpy as np
import pytest

from socal import synthetic
from socal.truth import grid_truth, sample_truth


def _atoms(pop):
    R = pop.fstar.shape[1]
    return (np.repeat(pop.means, R), np.repeat(pop.vars, R), pop.fstar.ravel(),
            (pop.weights[:, None] * pop.fprobs).ravel())


@pytest.mark.parametrize("h", [1 / 16, 1 / 64])
@pytest.mark.parametrize("name", ["toy", "calibrated"])
def test_grid_truth_matches_exact_quadrature(name, h):
    pop = getattr(synthetic, f"{name}_population")()
    m, v, f, w = _atoms(pop)
    g = grid_truth(m, v, f, h, weights=w)
    assert abs(g.ce2 - pop.ce2(h).value) < 2e-5
    assert abs(g.ce1 - pop.ce1(h).value) < 2e-5
    t1, t2 = np.array([0.31, 0.77]), np.array([0.04, 0.2])
    e1, e2 = g.interpolate(t1, t2)
    x1, x2 = pop.calibration_functions(h, t1, t2)
    np.testing.assert_allclose(e1, x1, atol=1e-4)
    np.testing.assert_allclose(e2, x2, atol=1e-4)


def test_sobol_replicates_agree_and_error_is_reported():
    pop = synthetic.toy_population()

    def sampler(u):  # a discrete population driven by uniforms, as a Sobol sampler would be
        j = np.searchsorted(np.cumsum(pop.weights), u[:, 0] * 0.999999)
        r = (u[:, 1] > pop.fprobs[j, 0]).astype(int)
        return pop.means[j], pop.vars[j], pop.fstar[j, r]

    sampler.dim = 2
    g = sample_truth(sampler, 1 / 16, log2_n=14, replicates=2, rng=0)
    assert 0 <= g.error < 5e-3 and abs(g.ce2 - pop.ce2(1 / 16).value) < 5e-3


def test_experiment_2_reduced():
    pytest.importorskip("sklearn", reason="Experiment 2 trains its ensemble with scikit-learn (test extra)")
    from socal.experiments.recalibration import run_recalibration

    r = run_recalibration(seeds=2, log2_sobol=13, rng=0).summary()
    assert r["pearson_recal"] > r["pearson_raw"] + 0.3, r
    assert r["ce2_after"] < r["ce2_before"] / 3, r
