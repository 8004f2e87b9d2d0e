"""What summing the bootstrap world's covariance moments over a keyed subset of rows changes (issue 24's cost).

Above ``socal.world.WORLD_ROWS`` rows the world pass sums the targets' covariance moments over a keyed subset
of about that many rows, weighted by the inverse of the share kept (``socal.world.world_sums``); below, over
every row, as before.  This script calls ``socal.ce2`` (default settings: cross-validated degree, Lepski's rule,
``ci=0.9``, ``upper=0.95``) on the same samples twice, with the subset and with every row (WORLD_ROWS above n),
and prints, per sample, how far the interval's ends and the bound move in units of the interval's width, how far
each Lepski candidate's bootstrap SD moves (relative), whether the chosen degree is the same, and the two calls'
times.  The yardstick: the largest move of an end or the bound between two bootstrap seeds (``rng`` omitted, and
``rng=1``), every row summed, on the same sample.

    python benchmarks/world_rows.py                                   # n = 1e6, five members x two h, 2 seeds
    python benchmarks/world_rows.py --sizes 500000 --seeds 3 --members toy,smooth
"""

from __future__ import annotations

import argparse
import statistics
import time
import zlib
from fractions import Fraction

import numpy as np

import socal
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options
from socal.world import WORLD_ROWS


def _call(m, v, y, h, rows, rng=None):
    t0 = time.perf_counter()
    res = ce_with_options("ce2", BootstrapOptions(world_rows=rows), m, v, y, h=h, ci=0.9, upper=0.95, rng=rng)
    return res, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--hs", default="1/16,1/64")
    ap.add_argument("--members", default="toy,calibrated-many,smooth,overconfident,held-out-mixed")
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args(argv)
    zoo = socal.synthetic.validation_zoo()
    print(f"WORLD_ROWS = {WORLD_ROWS}; moves in units of the whole's interval width; SD: the largest relative move "
          f"of a candidate's bootstrap SD")
    print(f"{'member':<18}{'h':>6}{'n':>9}{'seed':>5}{'degree':>8}{'low':>9}{'high':>9}{'bound':>9}{'SD':>8}"
          f"{'subset s':>10}{'every row s':>12}{'other seed':>11}")
    moves, seeds, times = [], [], []
    for name in a.members.split(","):
        pop = zoo[name].population
        for h in (float(Fraction(x)) for x in a.hs.split(",")):
            for n in (int(float(x)) for x in a.sizes.split(",")):
                for seed in range(a.seeds):
                    m, v, y = pop.sample(n, h=h, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h),
                                                                             n, seed]))
                    sub, t_sub = _call(m, v, y, h, WORLD_ROWS)
                    whole, t_whole = _call(m, v, y, h, n + 1)
                    reseeded, _ = _call(m, v, y, h, n + 1, rng=1)
                    width = whole.ci.high - whole.ci.low
                    seed_move = max(abs(x - y) / width for x, y in zip(
                        (reseeded.ci.low, reseeded.ci.high, reseeded.upper.value),
                        (whole.ci.low, whole.ci.high, whole.upper.value)))
                    seeds.append(seed_move)
                    move = [(sub.ci.low - whole.ci.low) / width, (sub.ci.high - whole.ci.high) / width,
                            (sub.upper.value - whole.upper.value) / width]
                    sd = max(abs(c.noise_sd / d.noise_sd - 1) for c, d in zip(sub.candidates, whole.candidates))
                    same = sub.degree == whole.degree
                    moves.append(max(abs(x) for x in move))
                    times.append((t_sub, t_whole))
                    print(f"{name:<18}{f'1/{round(1 / h)}':>6}{n:>9}{seed:>5}"
                          f"{(str(sub.degree) if same else f'{sub.degree}/{whole.degree}'):>8}"
                          f"{move[0]:>+9.3f}{move[1]:>+9.3f}{move[2]:>+9.3f}{sd:>8.3f}{t_sub:>10.2f}{t_whole:>12.2f}"
                          f"{seed_move:>11.3f}",
                          flush=True)
    print(f"largest move of an end or the bound: {max(moves):.3f} widths (median {statistics.median(moves):.3f}); "
          f"between two bootstrap seeds: {max(seeds):.3f} (median {statistics.median(seeds):.3f}); "
          f"time with the subset / every row: median {statistics.median(s / w for s, w in times):.2f}")


if __name__ == "__main__":
    main()
