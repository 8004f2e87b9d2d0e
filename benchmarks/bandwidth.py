"""The bandwidth of socal.evaluate, measured with exact truth: fixed candidates, or the data-driven rule ('auto').

    python benchmarks/bandwidth.py                  # 20 replicates per cell at n = 5,000 (about 10 minutes on 2 cores)
    python benchmarks/bandwidth.py --reps 50 --n 20000
    python benchmarks/bandwidth.py --auto --reps 20 --fractions 0.5,1,2   # the rule, zoo + sharp populations

--auto: for each zoo member and each socal.synthetic.sharp_population (median reported variance 1e-6 to 1e-2;
calibrated, variances 10 times too small, means over-extreme) and each fraction of socal.bandwidth's step 2, every
replicate draws raw scores and 2 labels per item, chooses h from them (socal.bandwidth.choose_bandwidth, as
socal.evaluate does; fraction 0.5 is evaluate's default), and runs socal.evaluate at that h.  It prints the share of
replicates where CE2 was estimated (the rule kept the variances), the median chosen h, and on those replicates the
exact CE2^pert and calibrated reference at the chosen h, the estimate's bias, RMSE and 90%-interval coverage, and
"detects" (interval above the reference); "test rejects" is the raw-score test's rate at level 0.05 over all
replicates (the same for every fraction: it needs no h), and "CE1 covers" the 90% coverage of CE1^pert.
--fractions fixed adds the old default h = (1/16, 1/64) for comparison.

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
from socal.bandwidth import choose_bandwidth
from socal.synthetic import SHARP_KINDS, sharp_population, validation_zoo

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


SHARP_MEDIANS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


def populations():
    """name -> DiscretePopulation: the zoo, then the sharp family."""
    pops = {name: z.population for name, z in validation_zoo().items()}
    for v0 in SHARP_MEDIANS:
        for kind in SHARP_KINDS:
            pops[f"sharp {v0:.0e} {kind}"] = sharp_population(v0, kind)
    return pops


class FIXED:  # the old default, for comparison: h = (1/16, 1/64) whatever the scores
    h, keeps_var = (1 / 16, 1 / 64), True


def auto_cell(args):
    """One population, every fraction: per replicate, (fraction, estimated?, h, truth, reference, estimate, ci,
    ce1 truth, ce1 ci) plus the test's p-value."""
    c, name, n, reps, fractions = args
    pop = populations()[name]
    rows = {f: [] for f in fractions}
    pvalues = []
    for r in range(reps):
        m, v, _, y = pop.sample_raw(n, rng=np.random.default_rng([c, r]))
        done = {}  # h -> the evaluation at it (fractions that choose the same h share it)
        for f in fractions:
            choice = FIXED if f == "fixed" else choose_bandwidth(m, v, fraction=f)
            if not choice.keeps_var:
                rows[f].append((False, choice.h) + (np.nan,) * 7)
                continue
            if choice.h not in done:
                ev = socal.evaluate(m, v, y, h=choice.h, ci=0.9, rng=np.random.default_rng([c, r, 1]))
                t2, t1 = pop.ce2(choice.h).value, pop.ce1(choice.h).value
                done[choice.h] = (True, choice.h, t2, ev.reference.ce2.value, ev.ce2.estimate, ev.ce2.ci.low,
                                  ev.ce2.ci.high,
                                  # CE1 withheld (Evaluation.ce1_note): no interval to cover, counted apart
                                  np.nan if ev.ce1 is None else float(ev.ce1.ci.low <= t1 <= ev.ce1.ci.high),
                                  ev.test.pvalue)
            rows[f].append(done[choice.h])
        if done:
            pvalues.append(next(iter(done.values()))[-1])
        else:
            pvalues.append(socal.calibration_test(m, v, y).pvalue)
    out = []
    for f in fractions:
        a = rows[f]
        est = [x for x in a if x[0]]
        line = dict(name=name, fraction=f, estimated=len(est) / reps, rejects=float(np.mean(np.array(pvalues) < 0.05)),
                    h=tuple(np.median([x[1][i] for x in a]) for i in range(2)))
        if est:
            t2, ref, e, lo, hi, c1 = (np.array([x[i] for x in est]) for i in range(2, 8))
            line.update(true=t2.mean(), ref=ref.mean(), bias=float(np.mean(e - t2)),
                        rmse=float(np.sqrt(np.mean((e - t2) ** 2))), covers=float(np.mean((lo <= t2) & (t2 <= hi))),
                        detects=float(np.mean(lo > ref)),
                        ce1_covers=float(np.nanmean(c1)) if np.isfinite(c1).any() else float("nan"))
        out.append(line)
    return out


def _h(x):
    return f"1/{1 / x:.0f}" if abs(1 / x - round(1 / x)) < 1e-9 else f"{x:.2g}"


def main_auto(args):
    fractions = tuple(f if f == "fixed" else float(f) for f in args.fractions.split(","))
    names = list(populations())
    tasks = [(1000 + i, name, args.n, args.reps, fractions) for i, name in enumerate(names)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as ex:
        cells = list(ex.map(auto_cell, tasks))
    print(f"n = {args.n:,}, {args.reps} replicates per population, fractions {', '.join(map(str, fractions))}, "
          f"{time.perf_counter() - t0:.0f} s\n")
    print("| population | fraction | median h (mean, var) | CE2 estimated | CE2^pert | reference | bias | RMSE | "
          "90% covers | detects | test rejects | CE1 covers |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell_rows in cells:
        for r in cell_rows:
            head = f"| {r['name']} | {r['fraction']} | ({_h(r['h'][0])}, {_h(r['h'][1])}) | {r['estimated']:.2f} |"
            if "true" in r:
                body = (f" {r['true']:.4f} | {r['ref']:.4f} | {r['bias']:+.4f} | {r['rmse']:.4f} | {r['covers']:.2f} | "
                        f"{r['detects']:.2f} | {r['rejects']:.2f} | {r['ce1_covers']:.2f} |")
            else:
                body = f" — | — | — | — | — | — | {r['rejects']:.2f} | — |"
            print(head + body)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--auto", action="store_true", help="measure the data-driven rule (h='auto')")
    p.add_argument("--fractions", default="0.5", help="with --auto: comma-separated fractions of step 2; 'fixed' is h = (1/16, 1/64) "
                   "always (the default before the rule)")
    args = p.parse_args(argv)
    if args.auto:
        return main_auto(args)
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
