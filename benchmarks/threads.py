"""Why socal factorises small systems with numpy's LAPACK: the two OpenBLAS thread pools.

numpy's and scipy's wheels each bundle an OpenBLAS with its own thread pool.  After heavy work in one, the other's
next call waits for the first's threads, which spin before they sleep (scipy/scipy#15050).  socal's matrix
products are numpy's; this script times a Cholesky factorisation of a d x d system alone and right after a numpy
product of the refit pass's size (402 x 2,025 times 2,025 x 5,000), by scipy's ``dpotrf`` and by
``numpy.linalg.cholesky``, and prints what :func:`socal.chebyshev.cholesky_lower` (numpy below
``NUMPY_CHOLESKY_BELOW`` unknowns, scipy above) pays after the product.  Medians of ``--reps`` calls.

    python benchmarks/threads.py
    python benchmarks/threads.py --sizes 169,1058,4050 --reps 9

This script imports numpy and scipy before socal, so both pools keep OpenBLAS's default idle spin (2^28 cycles);
``import socal`` first shortens it (:mod:`socal._threads`).  ``--spin`` measures what that buys: the plug-in and the
default ce2 call (toy population, h = 1/16) in fresh processes with ``OPENBLAS_THREAD_TIMEOUT`` = 28 (OpenBLAS's
default) and 4 (socal's), alternated ``--reps`` times, each process timing the median of 3 calls per case; it prints
the medians, the ratio, and how far apart the processes' numbers are (every number of every result; finufft's
threads add in no fixed order, so not bit for bit).

    python benchmarks/threads.py --spin --reps 3
    python benchmarks/threads.py --spin --cases 50000:12,200000:cv --reps 5

``--omp`` measures the same way what the passive OpenMP wait policy for finufft's runtime buys (``socal._threads``):
processes that import finufft before socal (its runtime then loads with the default policy, as before socal set it)
against processes that let socal load it; ``--evaluate`` adds ``socal.evaluate`` on raw scores of the n rows.

    python benchmarks/threads.py --omp --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.linalg import lapack

from socal import chebyshev


def _timed(fn, before, reps):
    times = []
    for _ in range(reps):
        before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


_CHILD = r"""
import json, sys, time
if sys.argv[2] == "finufft-first":
    import finufft  # its OpenMP runtime loads with the default wait policy
import numpy as np
import socal
cases, out, values = sys.argv[1].split(","), {}, []


def flat(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in flat(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in flat(e)]
    return [float(x)] if isinstance(x, (int, float)) and not isinstance(x, bool) else []


pop = socal.synthetic.toy_population()
for case in cases:
    n, l = case.split(":")
    m, v, y = pop.sample(int(float(n)), h=1 / 16, rng=0)
    kw = dict(h=1 / 16) if l == "cv" else dict(h=1 / 16, degree=int(l), ridge=1e-3)
    socal.ce2(m, v, y, ci=0.9, upper=0.95, **kw)  # warm
    plug, full = [], []
    for _ in range(3):
        t = time.perf_counter(); a = socal.ce2(m, v, y, debias=False, **kw); plug.append(time.perf_counter() - t)
        t = time.perf_counter(); b = socal.ce2(m, v, y, ci=0.9, upper=0.95, **kw); full.append(time.perf_counter() - t)
    values += flat(a.to_dict()) + flat(b.to_dict())
    out[case] = (float(np.median(plug)), float(np.median(full)))
    if sys.argv[3] == "evaluate":
        m, v, _, y = pop.sample_raw(int(float(n)), rng=0)
        socal.evaluate(m, v, y)  # warm
        ev = []
        for _ in range(3):
            t = time.perf_counter(); e = socal.evaluate(m, v, y); ev.append(time.perf_counter() - t)
        values += flat(e.to_dict())
        out[case] += (float(np.median(ev)),)
print(json.dumps({"times": out, "values": values}))
"""


def _runs(settings, cases, reps, evaluate=False):
    """{name: [the child's output per process]} for settings {name: (environment changes, child mode)}, the
    processes alternated so that a busy spell of the machine hits every setting."""
    runs = {name: [] for name in settings}
    for _ in range(reps):
        for name, (env, mode) in settings.items():
            done = subprocess.run([sys.executable, "-c", _CHILD, cases, mode, "evaluate" if evaluate else "-"],
                                  env=dict(os.environ, **env), capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout))
    return runs


def _report(runs, cases, labels):
    """Median times per setting and case, their ratio (first setting / second), and how far apart the processes'
    numbers are."""
    (a, la), (b, lb) = labels
    values = np.array([r["values"] for rs in runs.values() for r in rs])  # every result's numbers, per process
    moved = float(np.max(np.abs(values - values[0]) / np.maximum(np.abs(values[0]), 1e-300)))
    cols = len(next(iter(runs.values()))[0]["times"][cases.split(",")[0]])
    names = ["plug-in", "default", "evaluate"][:cols]
    head = " ".join(f"{x:>8}" for x in names)
    print(f"{'case (n:l)':<14} | {la + ':':<10} {head} | {lb + ':':<10} {head} | {'ratio:':<7} {head}")
    for case in cases.split(","):
        med = {e: [statistics.median(r["times"][case][j] for r in rs) for j in range(cols)] for e, rs in runs.items()}
        row = lambda e: " ".join(f"{x:>8.3f}" for x in med[e])  # noqa: E731
        ratio = " ".join(f"{x / y:>8.2f}" for x, y in zip(med[a], med[b]))
        print(f"{case:<14} | {'':<10} {row(a)} | {'':<10} {row(b)} | {'':<7} {ratio}")
    print(f"every number of every result, both settings, {values.shape[0]} processes: largest relative difference "
          f"{moved:.1e} (socal's promise for the same data: 1e-12)")


def spin(cases, reps):
    """The plug-in and the default call with OpenBLAS's idle spin at 2^28 and at 2^4 cycles, in fresh processes."""
    runs = _runs({"28": ({"OPENBLAS_THREAD_TIMEOUT": "28"}, "-"), "4": ({"OPENBLAS_THREAD_TIMEOUT": "4"}, "-")},
                 cases, reps)
    _report(runs, cases, (("28", "spin 2^28"), ("4", "spin 2^4")))


def omp(cases, reps, evaluate):
    """The plug-in, the default call (and evaluate) with finufft's OpenMP runtime loaded with the default wait policy
    (finufft imported before socal) and with socal's passive one, in fresh processes."""
    if "OMP_WAIT_POLICY" in os.environ:
        raise SystemExit(f"OMP_WAIT_POLICY is set ({os.environ['OMP_WAIT_POLICY']}): unset it to compare the policies")
    runs = _runs({"default": ({}, "finufft-first"), "passive": ({}, "-")}, cases, reps, evaluate)
    _report(runs, cases, (("default", "default"), ("passive", "passive")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="169,338,529,1058,2025,4050")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--spin", action="store_true", help="time socal with OpenBLAS's idle spin at 2^28 and 2^4 cycles")
    ap.add_argument("--omp", action="store_true",
                    help="time socal with finufft's OpenMP runtime at the default and the passive wait policy")
    ap.add_argument("--evaluate", action="store_true", help="with --omp: time socal.evaluate too")
    ap.add_argument("--cases", default="50000:12,50000:44,200000:cv,1000000:44",
                    help="with --spin or --omp: n:l pairs (l a degree, or cv for the cross-validated default)")
    a = ap.parse_args(argv)
    if a.spin:
        return spin(a.cases, a.reps)
    if a.omp:
        return omp(a.cases, a.reps, a.evaluate)
    rng = np.random.default_rng(0)
    P, Q = rng.standard_normal((402, 2025)), rng.standard_normal((2025, 5000))
    product = lambda: P @ Q  # noqa: E731 - the numpy work before the factorisation
    idle = lambda: None  # noqa: E731
    print(f"the numpy product alone: {_timed(product, idle, a.reps):.4f} s; threshold "
          f"NUMPY_CHOLESKY_BELOW = {chebyshev.NUMPY_CHOLESKY_BELOW}")
    print(f"{'d':>6} | alone: {'scipy':>7} {'numpy':>7} | after the product: {'scipy':>7} {'numpy':>7} "
          f"{'socal':>7} | scipy / socal after")
    for d in (int(x) for x in a.sizes.split(",")):
        X = rng.standard_normal((d + 50, d))
        G = X.T @ X / d + np.eye(d)
        sp = lambda: lapack.dpotrf(np.asfortranarray(G), lower=1, clean=0, overwrite_a=1)  # noqa: E731
        npy = lambda: np.linalg.cholesky(G)  # noqa: E731
        ours = lambda: chebyshev.cholesky_lower(np.asfortranarray(G))  # noqa: E731
        t = [_timed(sp, idle, a.reps), _timed(npy, idle, a.reps), _timed(sp, product, a.reps),
             _timed(npy, product, a.reps), _timed(ours, product, a.reps)]
        print(f"{d:>6} | {'':>6} {t[0]:>7.4f} {t[1]:>7.4f} | {'':>18} {t[2]:>7.4f} {t[3]:>7.4f} {t[4]:>7.4f} | "
              f"{t[2] / t[4]:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
