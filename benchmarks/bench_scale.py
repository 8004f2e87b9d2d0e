"""Streaming at scale: rows per second of the out-of-core fit, peak memory, and 2 dask workers against 1 process.

Rows are generated chunk by chunk (seeded per chunk, never all in memory): perturbed-looking scores m ~ U(0, 1),
var ~ U(0, 1/4), f* = clip(m + 0.3 (var - 1/8)), two Bernoulli(f*) labels.  The fit is at a fixed degree and ridge
(selection reads the statistics only and costs the same at any n; see bench_estimator.py for its cost).

Columns: l, rows, the statistics pass (rows/s), the fit from statistics (s), the deviation pass (rows/s), the whole
CE2 (s), and the process's peak resident memory (ru_maxrss) after the run.  Peak memory stays flat in n: it is set
by the chunk size and the O(l^4) statistics.

    python benchmarks/bench_scale.py            # l = 12, 44 to 1e8 rows; l = 88 to 1e7; dask speed-up at 1e7
    python benchmarks/bench_scale.py --quick    # up to 1e7 rows
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scale.py --dask-only   # one core per process: the scaling

On one 2-core machine a single process already uses both cores through BLAS threads, so 2 dask workers there gain
nothing (they contend); with one BLAS thread per process the speed-up measures how the passes scale with workers.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import socal
from socal.sources import ChunkSource, DaskSource
from socal.deviations import DeviationPass
from socal.pipeline import StatsPass
from socal.fitting import select_and_fit

CHUNK = 1_000_000


def make_chunk(i, rows=CHUNK, seed=0):
    rng = np.random.default_rng([seed, i])
    m = rng.random(rows)
    v = rng.random(rows) / 4
    f = np.clip(m + 0.3 * (v - 0.125), 0.0, 1.0)
    y = (rng.random((rows, 2)) < f[:, None]).astype(float)
    return m, v, y


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_stream(l, n, chunk=CHUNK):
    n_chunks = n // chunk
    source = ChunkSource(lambda: (make_chunk(i, chunk) for i in range(n_chunks)), "bench", 2)
    template = socal.SufficientStats(max_degree=l, rng=0)
    t0 = time.perf_counter()
    stats = source.map_reduce(StatsPass(template))
    t1 = time.perf_counter()
    fit = select_and_fit(stats, degrees=(l,), alphas=(1e-4,), select=False)
    t2 = time.perf_counter()
    dev = source.map_reduce(DeviationPass(fit.calmap))
    t3 = time.perf_counter()
    assert dev.n == n == stats.n
    return {"l": l, "n": n, "stats_rps": n / (t1 - t0), "fit_s": t2 - t1, "dev_rps": n / (t3 - t2),
            "total_s": t3 - t0, "ce2": dev.mean_term + dev.moment_term, "peak_mb": peak_mb()}


def dask_speedup(l, n, chunk=CHUNK, workers=2):
    """Wall time of the two passes in one process against ``workers`` dask worker processes (data generated on the
    workers, so only statistics travel)."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    n_chunks = n // chunk
    one = run_stream(l, n, chunk)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        parts = [dask.delayed(make_chunk)(i, chunk) for i in range(n_chunks)]
        m = da.concatenate([da.from_delayed(p[0], (chunk,), float) for p in parts])
        v = da.concatenate([da.from_delayed(p[1], (chunk,), float) for p in parts])
        y = da.concatenate([da.from_delayed(p[2], (chunk, 2), float) for p in parts])
        src = DaskSource(m, v, y, None, "bench", 2)
        template = socal.SufficientStats(max_degree=l, rng=0)
        t0 = time.perf_counter()
        stats = src.map_reduce(StatsPass(template))
        fit = select_and_fit(stats, degrees=(l,), alphas=(1e-4,), select=False)
        dev = src.map_reduce(DeviationPass(fit.calmap))
        t_dask = time.perf_counter() - t0
    agree = abs(dev.mean_term + dev.moment_term - one["ce2"])
    return one["total_s"], t_dask, agree


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dask-only", action="store_true", help="only the 2-worker speed-up")
    args = ap.parse_args()
    if args.dask_only:
        return speedup_row()
    top = 10**7 if args.quick else 10**8
    plan = [(12, n) for n in (10**6, 10**7, top)] + [(44, n) for n in (10**6, 10**7, top)] + \
        [(88, n) for n in (10**6, 10**7)]
    print(f"{'l':>3} {'rows':>11} {'stats rows/s':>13} {'fit s':>7} {'dev rows/s':>11} {'total s':>8} "
          f"{'peak RSS MB':>11}")
    for l, n in sorted(set(plan)):
        r = run_stream(l, n)
        print(f"{l:>3} {n:>11,} {r['stats_rps']:>13,.0f} {r['fit_s']:>7.2f} {r['dev_rps']:>11,.0f} "
              f"{r['total_s']:>8.1f} {r['peak_mb']:>11.0f}", flush=True)
    speedup_row()


def speedup_row(n=10**7):
    import os

    from threadpoolctl import threadpool_info

    blas = max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default="?")
    t1, t2, agree = dask_speedup(44, n)
    print(f"\n2 dask workers vs 1 process, l = 44, {n:,} rows, BLAS threads per process {blas} "
          f"(OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}): {t1:.1f} s vs {t2:.1f} s, "
          f"speed-up {t1 / t2:.2f}x (CE2 agrees to {agree:.1e})")


if __name__ == "__main__":
    main()
