"""OpenBLAS's idle threads: imported first by :mod:`socal`, before numpy and scipy load their OpenBLAS libraries.

numpy's and scipy's wheels each bundle an OpenBLAS with its own thread pool, whose idle threads spin for
2^OPENBLAS_THREAD_TIMEOUT cycles (28 by default, about 0.1 s) before they sleep.  socal alternates the two pools
(numpy's matrix products, scipy's factorisations and solves), so each pool's spinning threads hold the cores that
the other's need (scipy/scipy#15050, OpenMathLib/OpenBLAS#5171).  4, the smallest value OpenBLAS takes, lets them
sleep at once.  The spin decides when idle threads sleep, not what any thread computes, so the numbers do not
change; only the waits go (docs/numbers.md, "Threads", and ``python benchmarks/threads.py --spin``, which measures
both values in one run).

A value already in the environment is kept (28 restores OpenBLAS's behaviour), and a library loaded before socal
(numpy's, if numpy was imported first; scipy's, if ``scipy.linalg`` was) keeps the value it loaded with: scipy's
pool alone gets most of the gain.  Child processes inherit the variable.
"""

import os

SPIN_EXPONENT = "4"
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", SPIN_EXPONENT)
