"""The bootstrap world's label draws: the k = 2 shortcut has the exact law, other k the right moments."""

import numpy as np
from scipy import stats

from socal.intervals import _snapshot_counts


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
