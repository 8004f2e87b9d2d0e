"""Bias of the plug-in CE2 estimate at small n, and what the parametric-bootstrap correction does to it.

On populations whose perturbed CE2 is known exactly, for each n: R replicates of (sample, ce2 with ci=0.9); prints
the mean error of the plug-in (Eq. (cehat), ``plugin``) and of the headline bias-corrected ``estimate``, their mean
absolute errors, and the CI's coverage.  (benchmarks/coverage.py runs the whole validation zoo.)

    python benchmarks/bias_small_n.py [--reps 20] [--h 0.0625]
"""

import argparse
import time

import numpy as np

import socal
from socal import synthetic


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--h", type=float, default=1 / 16)
    p.add_argument("--sizes", default="500,2000,10000")
    p.add_argument("--n-boot", type=int, default=100)
    a = p.parse_args()
    print(f"h = {a.h:g}, {a.reps} replicates per cell, n_boot = {a.n_boot}")
    print(f"{'population':<14}{'n':>7}{'truth':>9}{'bias plug-in':>14}{'bias estimate':>15}"
          f"{'MAE plug-in':>13}{'MAE estimate':>14}{'CI90 cover':>12}{'s/fit':>8}")
    for name in ("calibrated", "overconfident", "toy"):
        pop = getattr(synthetic, f"{name}_population")()
        truth = pop.ce2(a.h).value
        for n in (int(s) for s in a.sizes.split(",")):
            est, deb, cover = [], [], []
            t0 = time.perf_counter()
            for r in range(a.reps):
                m, v, y = pop.sample(n, h=a.h, rng=1000 + r)
                res = socal.ce2(m, v, y, h=a.h, ci=0.9, n_boot=a.n_boot, rng=r)
                est.append(res.plugin)
                deb.append(res.estimate)
                cover.append(res.ci.low <= truth <= res.ci.high)
            dt = (time.perf_counter() - t0) / a.reps
            est, deb = np.array(est), np.array(deb)
            print(f"{name:<14}{n:>7}{truth:>9.4f}{np.mean(est - truth):>+14.4f}{np.mean(deb - truth):>+15.4f}"
                  f"{np.mean(np.abs(est - truth)):>13.4f}{np.mean(np.abs(deb - truth)):>14.4f}"
                  f"{np.mean(cover):>12.2f}{dt:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
