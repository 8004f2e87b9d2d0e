"""Bias, RMSE and interval coverage of socal's CE2 and CE1 on the validation zoo, cell by cell (issue 10's grid).

For every member of :func:`socal.synthetic.validation_zoo` x h x n: R replicates of (sample with its own seed, then
``socal.ce2`` / ``socal.ce1`` with ``ci=level`` and ``debias=True``); against the member's exact CE2^pert and
CE1^pert it prints the plug-in's and the bias-corrected estimate's mean error and RMSE, the interval's coverage and
mean width, how often the interval contains the bias-corrected estimate, and seconds per call.  Held-out members are
printed after the tuning ones, under their own heading.  Replicates run through joblib (``--jobs``); every replicate
carries its own seed, so the numbers do not depend on the number of jobs.

    python benchmarks/coverage.py [--reps 200] [--sizes 1000,5000,50000] [--hs 1/16,1/64] [--level 0.9]
                                  [--n-boot 200] [--jobs 2] [--members name,name,...] [--kind ce2,ce1]
    python benchmarks/coverage.py --timing [--sizes 50000] [--members ...]   # ce2 with and without ci, same run
"""

import argparse
import time
import zlib
from fractions import Fraction

import numpy as np

import socal
from socal._parallel import iter_jobs


def one(kind, name, h, n, rep, level, n_boot):
    pop = socal.synthetic.validation_zoo()[name].population
    m, v, y = pop.sample(n, h=h, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, rep]))
    t0 = time.perf_counter()
    if kind == "ce2":
        res = socal.ce2(m, v, y, h=h, ci=level, debias=True, n_boot=n_boot, rng=rep)
    else:
        res = socal.ce1(m, y, h=h, ci=level, debias=True, n_boot=n_boot, rng=rep)
    return res.estimate, res.debiased, res.ci.low, res.ci.high, time.perf_counter() - t0


def timing(names, hs, sizes, level, n_boot, repeats=5):
    """Medians of ``repeats`` calls of ce2 without and with ``ci=level`` on the same data, alternated."""
    zoo = socal.synthetic.validation_zoo()
    print(f"{'member':<20}{'h':>6}{'n':>7}{'plain [s]':>11}{'ci [s]':>9}{'ratio':>7}   (medians of {repeats})")
    for name in names:
        for h in hs:
            for n in sizes:
                m, v, y = zoo[name].population.sample(n, h=h, rng=0)
                plain, boot = [], []
                for r in range(repeats):
                    t0 = time.perf_counter()
                    socal.ce2(m, v, y, h=h, rng=r)
                    t1 = time.perf_counter()
                    socal.ce2(m, v, y, h=h, ci=level, n_boot=n_boot, rng=r)
                    t2 = time.perf_counter()
                    plain.append(t1 - t0)
                    boot.append(t2 - t1)
                p, b = np.median(plain), np.median(boot)
                print(f"{name:<20}{'1/' + str(round(1 / h)):>6}{n:>7}{p:>11.3f}{b:>9.3f}{b / p:>7.1f}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--sizes", default="1000,5000,50000")
    p.add_argument("--hs", default="1/16,1/64")
    p.add_argument("--level", type=float, default=0.9)
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--members", default=None, help="comma-separated zoo names (default: all)")
    p.add_argument("--kind", default="ce2,ce1")
    p.add_argument("--timing", action="store_true", help="time ce2 with and without ci instead")
    a = p.parse_args()
    zoo = socal.synthetic.validation_zoo()
    names = a.members.split(",") if a.members else list(zoo)
    hs = [float(Fraction(s)) for s in a.hs.split(",")]
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    if a.timing:
        return timing(names, hs, sizes, a.level, a.n_boot)
    print(f"{a.reps} replicates per cell, {a.level:.0%} intervals, n_boot = {a.n_boot}")
    head = (f"{'kind':<5}{'member':<20}{'h':>6}{'n':>7}{'truth':>8}{'bias plug':>10}{'bias deb':>10}{'RMSE plug':>10}"
            f"{'RMSE deb':>10}{'cover':>7}{'width':>8}{'holds est':>10}{'s/call':>8}")
    for held_out in (False, True):
        chosen = [k for k in names if zoo[k].held_out == held_out]
        if not chosen:
            continue
        print("\nheld-out members (never used for tuning)" if held_out else "\ntuning members")
        print(head)
        for kind in a.kind.split(","):
            for name in chosen:
                pop = zoo[name].population
                for h in hs:
                    truth = (pop.ce2(h) if kind == "ce2" else pop.ce1(h)).value
                    for n in sizes:
                        jobs = [(kind, name, h, n, r, a.level, a.n_boot) for r in range(a.reps)]
                        rows = np.array(list(iter_jobs(one, jobs, n_jobs=a.jobs)))
                        est, deb, lo, hi, sec = rows.T
                        print(f"{kind:<5}{name:<20}{'1/' + str(round(1 / h)):>6}{n:>7}{truth:>8.4f}"
                              f"{np.mean(est - truth):>+10.4f}{np.mean(deb - truth):>+10.4f}"
                              f"{np.sqrt(np.mean((est - truth) ** 2)):>10.4f}{np.sqrt(np.mean((deb - truth) ** 2)):>10.4f}"
                              f"{np.mean((lo <= truth) & (truth <= hi)):>7.2f}{np.mean(hi - lo):>8.4f}"
                              f"{np.mean((lo <= deb) & (deb <= hi)):>10.2f}{np.median(sec):>8.2f}", flush=True)


if __name__ == "__main__":
    main()
