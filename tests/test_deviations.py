"""socal.deviations: the CE average's pass, mergeable (issue 61: a test file per module)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socal
from socal.deviations import CE_RANGE, DeviationStats, ce_terms, ce_value


@pytest.fixture(scope="module")
def calmap():
    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    return socal.calibration_functions(m, v, y, degree=6, ridge=1e-3).map, (m, v, y)


def test_the_terms_are_the_papers_absolute_deviations(calmap):
    cm, (m, v, _) = calmap
    eta = cm.predict(m, v)
    t1, t2 = ce_terms(eta, m, v)
    np.testing.assert_allclose(t1, np.abs(eta[:, 0] - m))
    np.testing.assert_allclose(t2, np.abs(eta[:, 1] - (m * m + v)))
    assert ce_value(eta, m, v) == pytest.approx(t1.mean() + t2.mean(), rel=1e-12)
    assert 0 <= ce_value(eta, m, v) <= CE_RANGE[2]


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**31))
def test_merging_chunks_gives_the_whole_in_any_order(calmap, chunks, seed):
    cm, (m, v, _) = calmap
    whole = DeviationStats(cm).update_validated(m, v)
    perm = np.random.default_rng(seed).permutation(len(m))
    parts = [DeviationStats(cm).update_validated(m[i], v[i]) for i in np.array_split(perm, chunks)]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged + p
    assert merged.n == whole.n
    np.testing.assert_allclose(merged.sums, whole.sums, rtol=1e-12)
    assert merged.mean_term == pytest.approx(whole.mean_term, rel=1e-12)
    # negative control: a chunk left out is seen
    if chunks > 2:
        assert (parts[0] + parts[1]).n < whole.n
