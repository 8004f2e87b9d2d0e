"""The bootstrap world's label draws: the k = 2 shortcut has the exact law, other k the right moments; the item
weights shared by the candidates are the numbers each would draw."""

import numpy as np
from scipy import stats

import socal
from socal import bootstrap
from socal.bootstrap import PoissonWeights, _snapshot_counts


def test_two_snapshot_counts_follow_the_moment_law():
    """For k = 2 the law (1 - 2 p1 + p2, 2 (p1 - p2), p2) is exact; chi-square at false-alarm 1e-3 per case."""
    rng = np.random.default_rng(0)
    n = 20000
    for p1, p2 in ((0.3, 0.3**2), (0.3, 0.3), (0.5, 0.3), (0.05, 0.01), (0.9, 0.85)):
        a = _snapshot_counts(np.full(n, p1), np.full(n, p2), np.full(n, 2), rng)
        expected = n * np.array([1 - 2 * p1 + p2, 2 * (p1 - p2), p2])
        counts = np.bincount(a.astype(int), minlength=3)
        keep = expected > 0
        assert counts[~keep].sum() == 0
        if keep.sum() > 1:
            assert stats.chisquare(counts[keep], expected[keep]).pvalue > 1e-3, (p1, p2, counts, expected)


def test_other_k_match_the_first_two_factorial_moments():
    """E a = k p1 and E a (a - 1) = k (k - 1) p2 for any law of f* with those moments (k = 1, 3, 7 mixed in)."""
    rng = np.random.default_rng(1)
    n = 60000
    k = np.tile([1, 3, 7, 2], n // 4)
    p1, p2 = np.full(n, 0.4), np.full(n, 0.25)
    a = _snapshot_counts(p1, p2, k, rng)
    for kv in (3, 7):
        sel = k == kv
        m1, m2 = a[sel].mean(), (a[sel] * (a[sel] - 1)).mean()
        se1, se2 = a[sel].std() / np.sqrt(sel.sum()), (a[sel] * (a[sel] - 1)).std() / np.sqrt(sel.sum())
        assert abs(m1 - kv * 0.4) < 5 * se1 and abs(m2 - kv * (kv - 1) * 0.25) < 5 * se2
    assert set(np.unique(a[k == 1])) <= {0.0, 1.0} and a.min() >= 0 and np.all(a <= k)


def test_shared_poisson_weights_are_the_per_block_draws():
    """The candidates share one table of item weights per chunk; a chunk over the budget draws block by block.
    Both give the same numbers (the generator's stream does not depend on the block shape)."""
    n, B = 1000, 7
    table = PoissonWeights().get(5, 3, n, B)
    drawn = PoissonWeights(0).get(5, 3, n, B)  # no budget: drawn per block, in order
    blocks = [slice(0, 1), slice(1, 400), slice(400, 1000)]
    per_block = np.concatenate([drawn(sl) for sl in blocks])
    assert np.array_equal(table(slice(0, n)), per_block)
    assert np.array_equal(per_block, np.random.default_rng([5, 1, 3]).poisson(1.0, size=(n, B)))
    kept = PoissonWeights(budget=n * B)
    kept.get(5, 3, n, B)
    kept.get(5, 4, n, B)  # over the budget: not kept, still the right numbers
    assert list(kept.kept) == [(5, 3, n, B)]


def test_ce2_with_shared_weights_equals_redrawn_weights(monkeypatch):
    """ce2's candidates sharing the weight table give the interval that redrawing the weights per candidate gives."""
    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(3000, h=1 / 16, rng=4)
    shared = socal.ce2(m, v, y, h=1 / 16, ci=0.9, upper=0.95, n_boot=40, rng=1)
    monkeypatch.setattr(socal.pipeline, "PoissonWeights", lambda: bootstrap.PoissonWeights(0))
    redrawn = socal.ce2(m, v, y, h=1 / 16, ci=0.9, upper=0.95, n_boot=40, rng=1)
    assert shared.selection.rule == redrawn.selection.rule
    np.testing.assert_allclose([shared.estimate, shared.ci.low, shared.ci.high, shared.upper.value],
                               [redrawn.estimate, redrawn.ci.low, redrawn.ci.high, redrawn.upper.value], rtol=1e-12)
