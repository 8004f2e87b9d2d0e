"""The bootstrap world's label draws (socal.snapshots): the k = 2 shortcut has the exact law, other k the right
moments; the item weights shared by the candidates (socal.weights) are the numbers each would draw; the keyed
streams (socal.rowkeys)."""


import numpy as np
import pytest
from scipy import stats

import socal
from socal import weights
from socal.snapshots import Snapshots
from socal.weights import PoissonWeights, poisson_weights
from socal.rowkeys import keyed_uniforms, mix64, mix64_inplace, row_keys, stream_salt


def _snapshot_counts(p1, p2, k, rng):
    """One draw of the bootstrap world's counts from a generator's uniforms."""
    n = np.asarray(k).shape[0]
    return Snapshots(p1, p2, k).draw(rng.random(n), rng.random(n))


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
    """The candidates share one table of item weights per chunk; a chunk over the budget computes them block by
    block.  Both give the same numbers, each row's own (keyed by its content), and they are Poisson(1)."""
    n, B = 4000, 7
    rng = np.random.default_rng(0)
    keys = row_keys(rng.random(n), rng.random(n) / 4, rng.integers(0, 3, n).astype(float), np.full(n, 2.0), 5)
    table = PoissonWeights().get(5, 3, keys, B)
    drawn = PoissonWeights(0).get(5, 3, keys, B)  # no budget: computed per block
    blocks = [slice(0, 1), slice(1, 400), slice(400, n)]
    per_block = np.concatenate([drawn(sl) for sl in blocks])
    assert np.array_equal(table(slice(0, n)), per_block)
    perm = rng.permutation(n)
    assert np.array_equal(poisson_weights(keys[perm], 5, B), per_block[perm])  # a row's weights go with it
    w = per_block.ravel().astype(int)
    expected = n * B * stats.poisson.pmf(np.arange(5), 1.0)
    observed = np.bincount(np.minimum(w, 4), minlength=5)
    expected[4] = n * B * stats.poisson.sf(3, 1.0)
    assert stats.chisquare(observed, expected).pvalue > 1e-3, (observed, expected)
    kept = PoissonWeights(budget=n * B + keys.nbytes)  # the table and the keys it was drawn for
    kept.get(5, 3, keys, B)
    kept.get(5, 4, keys, B)  # over the budget: not kept, still the right numbers
    assert list(kept.kept) == [(5, 3, n, B)]
    # other rows at the same position (a source that reorders its chunks): their own weights, not the kept table
    assert np.array_equal(kept.get(5, 3, keys[perm], B)(slice(0, n)), per_block[perm])


def test_poisson_weights_table_is_the_exact_inverse_cdf():
    """The weights come from a table on the uniform's top 16 bits, corrected from the whole uniform in the bins that
    hold a CDF value: they equal searchsorted(cdf, u, 'right') on every (row, replicate), including rows in those
    bins.  Negative control: the table's bin weight alone (no correction) differs there."""
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 2**63, size=40_000, dtype=np.uint64)
    B = 60
    salts = np.array([stream_salt(1, b) for b in range(B)], dtype=np.uint64)
    u = keyed_uniforms(keys, salts)
    exact = np.searchsorted(weights._POISSON_CDF, u, side="right")
    assert np.array_equal(poisson_weights(keys, 0, B), exact)
    table = weights._POISSON_TABLE
    top = np.floor(u * 2**16).astype(int)
    in_mixed_bins = table[top] == 255
    assert in_mixed_bins.sum() > 50  # the correction is exercised...
    # ... and needed: the weight at the bin's left end is wrong for some rows there
    left = np.searchsorted(weights._POISSON_CDF, top * 2.0**-16, side="right")
    assert np.any(left[in_mixed_bins] != exact[in_mixed_bins])
    assert np.array_equal(table[top][~in_mixed_bins], exact[~in_mixed_bins])


def test_mix64_inplace_gives_mix64s_bits():
    """The in-place mixer (no allocation) returns the same bits as mix64, writes them into its argument, and the
    plain mix64 leaves its argument alone.  Control: one step fewer (the last xor-shift left out) differs."""
    x = np.random.default_rng(4).integers(0, 2**64 - 1, size=(1000, 3), dtype=np.uint64, endpoint=True)
    keep = x.copy()
    plain = mix64(x)
    assert np.array_equal(x, keep)
    y = x.copy()
    assert mix64_inplace(y, np.empty_like(y)) is y
    assert np.array_equal(y, plain)

    def reference(z):  # splitmix64's finaliser in Python integers
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    assert [int(h) for h in plain[:20, 0]] == [reference(int(z)) for z in x[:20, 0]]
    short = x ^ (x >> np.uint64(30))
    short *= np.uint64(0xBF58476D1CE4E5B9)
    short ^= short >> np.uint64(27)
    short *= np.uint64(0x94D049BB133111EB)
    assert not np.array_equal(short, plain)
    # last=False is that short mix, which the Poisson weights' table reads: its top 31 bits are mix64's already
    z = x.copy()
    assert np.array_equal(mix64_inplace(z, np.empty_like(z), last=False), short)
    assert np.array_equal(short >> np.uint64(33), plain >> np.uint64(33))
    assert not np.array_equal(short >> np.uint64(32), plain >> np.uint64(32))  # the 32nd bit from the top is not


def test_keyed_uniforms_are_uniform_and_independent_across_streams():
    """The keyed numbers behind every bootstrap draw: uniform on [0, 1) (Kolmogorov-Smirnov), and two streams of one
    row uncorrelated; a negative control (the same stream twice) is perfectly correlated."""
    rng = np.random.default_rng(2)
    n = 50000
    keys = row_keys(rng.random(n), rng.random(n) / 4, rng.integers(0, 3, n).astype(float), np.full(n, 2.0), 11)
    u = keyed_uniforms(keys, np.array([stream_salt(0, 0), stream_salt(0, 1), stream_salt(1, 0)], dtype=np.uint64))
    for j in range(3):
        assert stats.kstest(u[:, j], "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 4 / np.sqrt(n)
    assert abs(np.corrcoef(u[:, 0], u[:, 2])[0, 1]) < 4 / np.sqrt(n)
    same = keyed_uniforms(keys, np.array([stream_salt(0, 0)] * 2, dtype=np.uint64))
    assert np.corrcoef(same[:, 0], same[:, 1])[0, 1] == pytest.approx(1.0)


def test_ce2_with_shared_weights_equals_redrawn_weights(monkeypatch):
    """ce2's candidates sharing the weight table give the interval that redrawing the weights per candidate gives."""
    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(3000, h=1 / 16, rng=4)
    shared = socal.ce2(m, v, y, h=1 / 16, ci=0.9, upper=0.95, n_boot=40, rng=1)
    monkeypatch.setattr(socal.pipeline, "PoissonWeights", lambda: weights.PoissonWeights(0))
    redrawn = socal.ce2(m, v, y, h=1 / 16, ci=0.9, upper=0.95, n_boot=40, rng=1)
    assert shared.selection.rule == redrawn.selection.rule
    np.testing.assert_allclose([shared.estimate, shared.ci.low, shared.ci.high, shared.upper.value],
                               [redrawn.estimate, redrawn.ci.low, redrawn.ci.high, redrawn.upper.value], rtol=1e-12)
