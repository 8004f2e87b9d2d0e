"""The README's quick start over perturbation seeds: what the held-out calibration test says of the recalibrated
scores, and the recalibrated CE2.

The README fits ``SecondOrderPlatt`` on 5,000 of its 10,000 stand-in items and tests the recalibrated scores on the
other 5,000.  A map fitted on n items keeps an estimation error of the size an n-item test detects, so the test can
reject the recalibrated scores although the map removed nearly all of the error; this prints, per seed of
``evaluate``'s perturbation (the map's and the test's seed the same), the degree the map chose, the held-out test's
statistic, degrees of freedom and p-value, and CE2 before and after.

    python benchmarks/recalibrated_test.py                   # seeds 0-7, the README's halves
    python benchmarks/recalibrated_test.py --held-out 0.1    # the map fitted on 9,000 items, tested on 1,000
    python benchmarks/recalibrated_test.py --items 40000 --fit-items 5000 --seeds 3    # tested on the last 15,000
    python benchmarks/recalibrated_test.py --items 40000 --fit-items 25000 --seeds 3
    python benchmarks/recalibrated_test.py --seeds 4 --degree 3 --alpha 1e-6     # another map
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import socal


def readme_data(n=10_000):
    """The README quick start's stand-in data (its generator at ``n`` items): raw (mean, var) and the (n, 2)
    labels."""
    rng = np.random.default_rng(0)
    p_true = rng.beta(2, 2, n)
    p_model = np.clip(p_true + rng.normal(0, 0.15, n), 0.01, 0.99)
    members = np.clip(p_model[:, None] + rng.normal(0, 0.03, (n, 5)), 0.001, 0.999)
    labels = (rng.random((n, 2)) < p_true[:, None]).astype(float)
    mean, var = socal.from_members(members, ddof=1)
    return mean, var, labels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--held-out", type=float, default=0.5, help="the share of items tested (every 1/share-th)")
    ap.add_argument("--items", type=int, default=10_000, help="items the README's generator draws")
    ap.add_argument("--fit-items", type=int, help="fit on the first this many items, test on the rest")
    ap.add_argument("--degree", type=int, help="the map's degree (default: cross-validated)")
    ap.add_argument("--alpha", type=float, help="the map's ridge (default: cross-validated)")
    a = ap.parse_args(argv)
    mean, var, labels = readme_data(a.items)
    if a.fit_items is None:
        test = np.arange(mean.size) % round(1 / a.held_out) == 1 % round(1 / a.held_out)  # the README's [1::2]
    else:
        test = np.arange(mean.size) >= a.fit_items
    fit = ~test
    print(f"map fitted on {fit.sum()} items, tested on {test.sum()}")
    print(f"{'seed':>4} {'degree':>6} {'T':>6} {'df':>3} {'p':>8} {'CE2 before':>11} {'CE2 after':>10}")
    stats = []
    for seed in range(a.seeds):
        ev = socal.evaluate(mean, var, labels, rng=seed, n_boot=a.n_boot)
        platt = socal.SecondOrderPlatt(h=ev.h, rng=seed, degree=a.degree, ridge=a.ridge)
        platt.fit(ev.mean[fit], ev.var[fit], labels[fit])
        after = socal.evaluate_recalibrated(platt, ev.mean[test], ev.var[test], labels[test], rng=seed,
                                            n_boot=a.n_boot)
        stats.append((after.test.statistic, after.test.pvalue))
        print(f"{seed:>4} {platt.degree_:>6} {after.test.statistic:>6.1f} {after.test.df:>3} {after.test.pvalue:>8.2g} "
              f"{ev.ce2.estimate:>11.4f} {after.ce2.estimate:>10.4f}", flush=True)
    t = [s for s, _ in stats]
    print(f"held-out test rejected at 0.05 in {sum(p < 0.05 for _, p in stats)} of {len(stats)} seeds; statistic "
          f"median {statistics.median(t):.1f}, range {min(t):.1f}-{max(t):.1f} (its df expected if calibrated)")


if __name__ == "__main__":
    main()
