"""Why socal factorises small systems with numpy's LAPACK: the two OpenBLAS thread pools.

numpy's and scipy's wheels each bundle an OpenBLAS with its own thread pool.  After heavy work in one, the other's
next call waits for the first's threads, which spin before they sleep (scipy/scipy#15050).  socal's matrix
products are numpy's; this script times a Cholesky factorisation of a d x d system alone and right after a numpy
product of the refit pass's size (402 x 2,025 times 2,025 x 5,000), by scipy's ``dpotrf`` and by
``numpy.linalg.cholesky``, and prints what :func:`socal.chebyshev.cholesky_lower` (numpy below
``NUMPY_CHOLESKY_BELOW`` unknowns, scipy above) pays after the product.  Medians of ``--reps`` calls.

    python benchmarks/threads.py
    python benchmarks/threads.py --sizes 169,1058,4050 --reps 9
"""

from __future__ import annotations

import argparse
import statistics
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="169,338,529,1058,2025,4050")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
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
