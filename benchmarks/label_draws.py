"""The bootstrap's two ways of redrawing labels, side by side on populations with exact truth (issue 24).

'exact' draws every one of the ``n_boot`` label sets (n B (l + 1)^2 work: the former method); 'gaussian' (the
default) draws the refits' right-hand sides from their exact mean and covariance, from one pass over the data, and
evaluates the refits on a keyed subset of ``REFIT_ROWS`` rows.  Per population and n: bias and RMSE of the
bias-corrected CE2, 90% interval coverage and mean width, and the median seconds per ``socal.ce2`` call (default
settings: cross-validated degree, Lepski's rule).

    python benchmarks/label_draws.py --n 2000 --reps 20 --members toy,calibrated-few,smooth
    python benchmarks/label_draws.py --n 50000 --reps 6 --members toy,overconfident
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import socal
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--members", default="toy,calibrated-few,smooth")
    ap.add_argument("--h", type=float, default=1 / 16)
    a = ap.parse_args(argv)
    zoo = socal.synthetic.validation_zoo()
    print(f"{'member':<18} {'n':>6} {'draws':<9} {'bias':>8} {'RMSE':>7} {'cover':>6} {'width':>7} {'s/call':>7}")
    for name in a.members.split(","):
        pop = zoo[name].population
        truth = float(pop.ce2(h=a.h))
        for mode, options in (("exact", BootstrapOptions(label_draws="exact", refit_rows=10**12)),
                              ("gaussian", BootstrapOptions())):
            est, cover, width, secs = [], [], [], []
            for r in range(a.reps):
                m, v, y = pop.sample(a.n, h=a.h, rng=1000 + r)
                t0 = time.perf_counter()
                res = ce_with_options("ce2", options, m, v, y, h=a.h, ci=0.9)
                secs.append(time.perf_counter() - t0)
                est.append(res.estimate)
                cover.append(res.ci.low <= truth <= res.ci.high)
                width.append(res.ci.high - res.ci.low)
            est = np.array(est)
            rmse = np.sqrt(np.mean((est - truth) ** 2))
            print(f"{name:<18} {a.n:>6} {mode:<9} {est.mean() - truth:>+8.4f} {rmse:>7.4f} {np.mean(cover):>6.2f} "
                  f"{np.mean(width):>7.4f} {np.median(secs):>7.2f}", flush=True)


if __name__ == "__main__":
    main()
