"""The multiclass test's size and power, and its cost against C binary calls (issue 59).

    python benchmarks/multiclass.py --size --reps 400 --jobs 2     # calibrated Dirichlet ensembles
    python benchmarks/multiclass.py --power --reps 100 --jobs 2    # tempered, variances too small, one class mis-scaled
    python benchmarks/multiclass.py --cost --n 100000 --runs 3     # C = 10: the multiclass calls against C binary ones

Populations: socal.synthetic.DirichletEnsemble (5 members; the truth one member drawn at random, so 'calibrated'
is exactly canonically calibrated).  Each replicate r of cell c draws from default_rng([c, r]).  Rates are the
shares of replicates rejecting at level 0.05: the joint test, the trace test, the top-label test, and the per-class
recipe (any class-wise test after Holm's adjustment: what a user looping over the classes gets), on the same draws.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import socal
from socal.multiclass import multiclass_test
from socal.synthetic import DirichletEnsemble

ALPHA = 0.05
PARTS = ("joint", "trace", "top", "holm")


def _rejections(args):
    cell, C, n, k, kind, reps = args
    pop = DirichletEnsemble(C=C, kind=kind)
    hits = dict.fromkeys(PARTS, 0)
    for r in range(reps):
        m, S, y = pop.sample(n, k=k, rng=np.random.default_rng([cell, r]))
        res = multiclass_test(m, S, y)
        hits["joint"] += res.joint.pvalue < ALPHA
        hits["trace"] += res.trace.pvalue < ALPHA
        hits["top"] += res.top.pvalue < ALPHA
        hits["holm"] += res.holm.min() < ALPHA
    return (C, n, k, kind), {p: h / reps for p, h in hits.items()}


def _table(kinds, reps, jobs, sizes=(2000, 10_000), labels=(2, 10), classes=(3, 10)):
    cells = [(i, C, n, k, kind, reps) for i, (kind, C, n, k) in
             enumerate(itertools.product(kinds, classes, sizes, labels))]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(jobs) as ex:
        rows = list(ex.map(_rejections, cells))
    print(f"{reps} replicates per cell, level {ALPHA}, {time.perf_counter() - t0:.0f} s\n")
    print("| population | C | n | k | joint | trace | top label | per-class, Holm |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (C, n, k, kind), rate in rows:
        print(f"| {kind} | {C} | {n:,} | {k} | " + " | ".join(f"{rate[p]:.3f}" for p in PARTS) + " |")


def _cost(n, runs):
    C = 10
    m, S, y = DirichletEnsemble(C=C).sample(n, rng=0)
    A = np.stack([(y == c).sum(axis=1) for c in range(C)], axis=1).astype(float)
    K = A.sum(axis=1)

    def timed(f):
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            f()
            out.append(time.perf_counter() - t)
        return statistics.median(out)

    multi = timed(lambda: multiclass_test(m, S, y))
    binary = timed(lambda: [socal.calibration_test(m[:, c], S[:, c, c], counts=(A[:, c], K)) for c in range(C)])
    ev_multi = timed(lambda: socal.evaluate(m, S, y, n_boot=200))
    ev_binary = timed(lambda: [socal.evaluate(m[:, c], S[:, c, c], counts=(A[:, c], K), n_boot=200)
                               for c in range(C)])
    print(f"C = {C}, n = {n:,}, median of {runs} runs:")
    print(f"  test:       multiclass {multi:.2f} s, {C} binary calibration_test calls {binary:.2f} s, ratio "
          f"{multi / binary:.2f}")
    print(f"  evaluation: multiclass {ev_multi:.2f} s, {C} binary evaluate calls {ev_binary:.2f} s, ratio "
          f"{ev_multi / ev_binary:.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", action="store_true")
    p.add_argument("--power", action="store_true")
    p.add_argument("--cost", action="store_true")
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--n", type=int, default=100_000, help="--cost: items")
    p.add_argument("--runs", type=int, default=3, help="--cost: timed runs (the median is printed)")
    args = p.parse_args(argv)
    if args.size:
        _table(["calibrated"], args.reps, args.jobs)
    if args.power:
        _table(["tempered", "overconfident", "misscaled"], args.reps, args.jobs)
    if args.cost:
        _cost(args.n, args.runs)


if __name__ == "__main__":
    main()
