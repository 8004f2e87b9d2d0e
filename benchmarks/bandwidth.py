"""The default bandwidth of socal.evaluate, measured on the validation zoo: one h for both axes or one per axis.

    python benchmarks/bandwidth.py                  # 20 replicates per cell at n = 5,000 (about 10 minutes on 2 cores)
    python benchmarks/bandwidth.py --reps 50 --n 20000

For each member of socal.synthetic.validation_zoo and each candidate bandwidth it prints the exact CE2^pert, the
calibrated reference (the same raw scores with nothing wrong, at the same h), their gap (what a miscalibration
adds after the perturbation: 0 for calibrated members), and socal.ce2's bias, RMSE, 90%-interval coverage and
detection rate (the interval above the reference) at n.  Candidates: the paper's h = 1/16 on both axes, and
(1/16, 1/64): 1/16 on the mean and the matched quarter on the variance axis (socal.paper_degree gives both the
same degree).  Replicate r of cell c draws from numpy.random.default_rng([c, r]).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import socal
from socal import truth
from socal.synthetic import validation_zoo

CANDIDATES = {"1/16": 1 / 16, "(1/16, 1/64)": (1 / 16, 1 / 64)}


def reference(pop, h):
    """CE2^pert of the member's calibrated twin: the same raw atoms and weights, E f* = m, E f*^2 = m^2 + var."""
    return truth.discrete_ce2(h, pop.means, pop.vars, pop.weights, pop.means, pop.means**2 + pop.vars).value


def cell(args):
    c, name, hname, n, reps = args
    pop = validation_zoo()[name].population
    h = CANDIDATES[hname]
    true, ref = pop.ce2(h).value, reference(pop, h)
    est, cover, detect = [], 0, 0
    for r in range(reps):
        m, v, y = pop.sample(n, h=h, rng=np.random.default_rng([c, r]))
        res = socal.ce2(m, v, y, h=h, ci=0.9, rng=np.random.default_rng([c, r, 1]))
        est.append(res.estimate)
        cover += res.ci.low <= true <= res.ci.high
        detect += res.ci.low > ref
    est = np.array(est)
    return name, hname, true, ref, est.mean() - true, np.sqrt(np.mean((est - true) ** 2)), cover / reps, detect / reps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    zoo = validation_zoo()
    tasks = [(100 * i + j, name, hname, args.n, args.reps) for i, name in enumerate(zoo)
             for j, hname in enumerate(CANDIDATES)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(cell, tasks))
    print(f"n = {args.n:,}, {args.reps} replicates per cell, {time.perf_counter() - t0:.0f} s\n")
    print("| member | h | CE2^pert | reference | gap | bias | RMSE | 90% covers | detects (interval above reference) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, hname, true, ref, bias, rmse, cov, det in rows:
        held = " (held out)" if zoo[name].held_out else ""
        print(f"| {name}{held} | {hname} | {true:.4f} | {ref:.4f} | {true - ref:+.4f} | {bias:+.4f} | {rmse:.4f} | "
              f"{cov:.2f} | {det:.2f} |")


if __name__ == "__main__":
    main()
