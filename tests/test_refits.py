"""The bootstrap's refits (socal.refits): the Gaussian draws' bias correction, and the refit pass, which resamples
each of a key's items on its own (split from tests/test_bootstrap.py, one test file per module of the bootstrap)."""

import numpy as np
import pytest
from scipy import stats

import socal
from socal import refits


def test_gaussian_bias_is_the_folded_normals_excess_mean():
    """E|x + sigma Z| - |x| in closed form equals the integral over the normal density (scipy's quad), at the kink,
    on both sides and far out; 0 where sigma is 0.  Negative control: the kink's value sigma sqrt(2/pi) alone is
    wrong away from x = 0."""
    from scipy import integrate

    for x, sigma in [(0.0, 0.1), (0.05, 0.1), (-0.2, 0.1), (1.5, 0.2), (-0.01, 0.003), (0.3, 0.0)]:
        if sigma == 0:
            want = 0.0
        else:
            want = integrate.quad(lambda z: abs(x + sigma * z) * stats.norm.pdf(z), -np.inf, np.inf,
                                  points=None, epsabs=1e-13)[0] - abs(x)
        got = float(refits.gaussian_bias(np.array(x), np.array(sigma)))
        assert got == pytest.approx(want, abs=1e-10)
    assert float(refits.gaussian_bias(np.array(0.05), np.array(0.1))) != pytest.approx(0.1 * np.sqrt(2 / np.pi),
                                                                                           abs=1e-3)


def _grid_predictor(n, seed):
    """A mean rounded to a 0.1 grid (11 distinct means, about 33 distinct rows with their label counts), against
    labels of rate p ~ Beta(2, 2): at degree 10 the fit interpolates the 11 cell means, so the plug-in is
    sum over cells of (n_cell / n) |mean label share - mean|, whose spread over fresh samples a Monte Carlo of that
    formula gives."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    return np.clip(np.round(p * 1.3 - 0.15, 1), 0, 1), (rng.random((n, 2)) < p[:, None]).astype(float)


def _grid_plugin(m, y):
    cells, inv = np.unique(m, return_inverse=True)
    count = np.bincount(inv)
    return float(np.sum(count / m.size * np.abs(np.bincount(inv, y.mean(axis=1)) / count - cells)))


@pytest.mark.parametrize("n", [4000, 12_000])
def test_rows_of_one_content_are_resampled_as_separate_items(monkeypatch, n):
    """Identical rows (same scores and labels) are separate items: the refit pass resamples each of a key's c items
    on its own (a KeyCensus counts them), so the bootstrap SD of a predictor with 11 distinct means is the plug-in's
    spread over fresh samples (within 20%), in the full pass (4,000 rows) and on the keyed subset (12,000, above
    REFIT_ROWS).  Negative control: keyed by content alone (no census), a key's items share one weight and its
    total has variance c^2 instead of c: the SD came out 1.8 and 2.2 times too large."""
    import socal.rowkeys as bs

    m, y = _grid_predictor(n, 0)
    spread = np.std([_grid_plugin(*_grid_predictor(n, 1000 + s)) for s in range(600)], ddof=1)
    kw = dict(degree=10, ridge=1e-6, ci=0.9, n_boot=200)
    res = socal.ce1(m, y, **kw)
    assert abs(res.plugin - _grid_plugin(m, y)) < 1e-4  # the interpolating fit, as the docstring says
    assert 0.8 <= res.candidates[0].noise_sd / spread <= 1.2, (res.candidates[0].noise_sd, spread)
    monkeypatch.setattr(bs.KeyCensus, "duplicated", lambda self: (np.empty(0, np.uint64), np.empty(0, np.int64)))
    shared = socal.ce1(m, y, **kw).candidates[0].noise_sd
    assert shared / spread > 1.5, (shared, spread)
