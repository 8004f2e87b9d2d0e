"""Where the NUFFT pays for weighted moments (a few strength columns: the bootstrap world's covariance moments and
mean right-hand sides, the statistics' targets): ``socal.sufficient.response_moments`` by the dense per-chunk product
against ``socal.nufft.weighted_moments``, per rows x columns x terms, medians of ``--reps`` calls, in one run.  The
'auto' backend's threshold ``socal.chebyshev._NUFFT_WEIGHTED_TERMS`` is read from this table.

    python benchmarks/nufft_weighted.py
    python benchmarks/nufft_weighted.py --sizes 50000 --degrees 12,24 --reps 21
    python benchmarks/nufft_weighted.py --ndim 1 --degrees 11,22,44,88    # CE1's world: d + 1 terms
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from socal import chebyshev, nufft
from socal.sufficient import response_moments


def _median_ms(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20000,50000,200000")
    ap.add_argument("--degrees", default="8,12,16,24,30", help="per axis: (d + 1)^2 terms")
    ap.add_argument("--columns", default="1,2,3")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--ndim", type=int, choices=(1, 2), default=2)
    a = ap.parse_args(argv)
    if not nufft.available():
        raise SystemExit("finufft is not installed: pip install 'socal[fast]'")
    degrees = [int(d) for d in a.degrees.split(",")]
    rng = np.random.default_rng(0)
    saved = chebyshev._NUFFT_WEIGHTED_TERMS, chebyshev._NUFFT_WEIGHTED_TERMS_1D
    chebyshev._NUFFT_WEIGHTED_TERMS = chebyshev._NUFFT_WEIGHTED_TERMS_1D = 10**9  # the dense product
    dw = (lambda d: d) if a.ndim == 2 else (lambda d: 0)
    try:
        print(f"ms, dense product / NUFFT, per (d + 1)^{a.ndim} terms")
        print(f"{'rows':>7} {'cols':>4} " + " ".join(f"{(d + 1) * (dw(d) + 1):>11}" for d in degrees))
        for n in (int(float(x)) for x in a.sizes.split(",")):
            u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
            for J in (int(x) for x in a.columns.split(",")):
                Z = rng.random((n, J))
                cells = []
                for d in degrees:
                    dense = _median_ms(lambda: response_moments(u, w, Z, d, dw(d)), a.reps)
                    fast = _median_ms(lambda: nufft.weighted_moments(u, w, Z, d, dw(d)), a.reps)
                    cells.append(f"{dense:5.1f}/{fast:<5.1f}")
                print(f"{n:>7} {J:>4} " + " ".join(cells), flush=True)
    finally:
        chebyshev._NUFFT_WEIGHTED_TERMS, chebyshev._NUFFT_WEIGHTED_TERMS_1D = saved


if __name__ == "__main__":
    main()
