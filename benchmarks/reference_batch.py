"""The simulated reference's replicates at k >= 3 labels: socal's batched path (the pooled covariance's score-only
parts fixed once, one stacked eigendecomposition) against computing each replicate alone, the way the reference did
before (the pooled covariance rebuilt for each replicate, its centring fit included, one eigendecomposition each):
``socal.testing.reference_replicates(..., one_at_a_time=True)``.  One run, medians of ``--reps`` timings.

    python benchmarks/reference_batch.py                  # n = 3,000 and 20,000 rows, k = 10, 100 replicates
    python benchmarks/reference_batch.py --n 3000 --reps 5

Both give the same statistics (checked to 1e-9 relative before timing) from the same seed.
"""

from __future__ import annotations

import argparse

import numpy as np

import socal
from socal.synthetic import EnsembleLikePopulation
from socal.testing import CalibrationTestStats, reference_replicates
from timing import median_time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[3000, 20000])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"socal {socal.__version__}; 100 replicates of (T, T_mean, T_var) per call, k = {a.k}; medians of "
          f"{a.reps} timings\n")
    print("| n | one replicate at a time (s) | batched (s) | ratio |")
    print("| --- | --- | --- | --- |")
    for n in a.n:
        m, v, _, y = EnsembleLikePopulation(0.02).sample_raw(n, k=a.k, rng=0)
        st = CalibrationTestStats().update(m, v, y)
        fast, slow = reference_replicates(st, 100, rng=1), reference_replicates(st, 100, rng=1, one_at_a_time=True)
        for name in fast:
            np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9)
        t_slow = median_time(lambda: reference_replicates(st, 100, rng=1, one_at_a_time=True), a.reps)
        t_fast = median_time(lambda: reference_replicates(st, 100, rng=1), a.reps)
        print(f"| {n:,} | {t_slow:.3f} | {t_fast:.3f} | {t_slow / t_fast:.1f}x |")


if __name__ == "__main__":
    main()
