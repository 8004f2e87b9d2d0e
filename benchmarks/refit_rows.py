"""How many rows the refit pass needs: the default ce2/ce1 calls with the refits evaluated on a keyed subset of
``--rows`` rows, paired on the same replicates (issue 24).

The refit pass costs B R (l + 1)^2 per row it reads, so above ``socal.refits.REFIT_ROWS`` rows it reads a keyed
subset (item weights rescaled so the weighted mean fluctuates as the full resample's).  Per kind, over the zoo x
h in {1/16, 1/64} x ``--reps`` replicates (coverage.py's seeds) at ``--n`` rows: how far the estimate and the 90%
interval's ends move between the first and each other subset size (in units of the first's width), the width
ratio, coverage of the exact truth and mean absolute error under each.

    python benchmarks/refit_rows.py --reps 6                     # n = 50,000: 20,000 rows against 5,000
    python benchmarks/refit_rows.py --reps 6 --rows 20000,10000,5000
"""

from __future__ import annotations

import argparse
import zlib

import numpy as np

import socal
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--rows", default="20000,5000")
    ap.add_argument("--kinds", default="ce2,ce1")
    a = ap.parse_args(argv)
    sizes = [int(x) for x in a.rows.split(",")]
    kinds = a.kinds.split(",")
    zoo = socal.synthetic.validation_zoo()
    rec = {kind: [] for kind in kinds}  # per pair: truth, then (estimate, low, high) per subset size
    for name, member in zoo.items():
        pop = member.population
        for h in (1 / 16, 1 / 64):
            truth = {"ce2": float(pop.ce2(h=h)), "ce1": float(pop.ce1(h=h))}
            for rep in range(a.reps):
                rng = np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), a.n, rep])
                m, v, y = pop.sample(a.n, h=h, rng=rng)
                for kind in kinds:
                    row = [truth[kind]]
                    for rows in sizes:
                        options = BootstrapOptions(refit_rows=rows)
                        if kind == "ce2":
                            r = ce_with_options("ce2", options, m, v, y, h=h, ci=0.9, upper=0.95, rng=rep)
                        else:
                            r = ce_with_options("ce1", options, m, y, h=h, ci=0.9, upper=0.95, rng=rep)
                        row += [r.estimate, r.ci.low, r.ci.high]
                    rec[kind].append(row)
    print(f"n = {a.n}, {a.reps} replicates per member and h; subset sizes {sizes}")
    for kind in kinds:
        X = np.array(rec[kind])
        T, runs = X[:, 0], X[:, 1:].reshape(len(X), len(sizes), 3)
        ref = runs[:, 0]
        width = ref[:, 2] - ref[:, 1]
        for j, rows in enumerate(sizes):
            r = runs[:, j]
            cover = np.mean((r[:, 1] <= T) & (T <= r[:, 2]))
            line = f"{kind} {rows:>6} rows: coverage {cover:.3f}, mean |error| {np.mean(np.abs(r[:, 0] - T)):.4f}"
            if j:
                de = r[:, 0] - ref[:, 0]
                dl, dh = (r[:, 1] - ref[:, 1]) / width, (r[:, 2] - ref[:, 2]) / width
                line += (f"; estimate moved {de.mean():+.1e} (sd {de.std():.1e}, max {np.abs(de).max():.1e}); ends "
                         f"moved (in widths) low {dl.mean():+.3f} (sd {dl.std():.3f}), high {dh.mean():+.3f} "
                         f"(sd {dh.std():.3f}); width ratio {np.median((r[:, 2] - r[:, 1]) / width):.3f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
