"""Idle threads that hold the cores: OpenBLAS's (set when :mod:`socal` is imported, before numpy and scipy load their
OpenBLAS libraries) and finufft's OpenMP runtime (set while :mod:`socal.nufft` loads finufft).

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

finufft's wheel bundles its own OpenMP runtime (libgomp), whose idle threads also spin after each parallel region
unless ``OMP_WAIT_POLICY`` is ``passive``.  A finufft call runs several parallel regions and its FFT in between, and
on 2 cores a thread that is ready to run waits behind a spinning one for a scheduler slice (what that costs a moment
transform: docs/numbers.md, "The measurements behind the code's constants").  :func:`passive_openmp` sets the policy
only while finufft's library loads (libgomp reads it then, once), so it reaches finufft's runtime and no other
library's, and no child process.  A policy already in the environment is kept; a finufft imported before socal first
used it keeps the runtime it loaded with, and so does one whose runtime another library had already loaded.  The
policy decides when idle threads sleep, not what any thread computes.
"""

import contextlib
import os

SPIN_EXPONENT = "4"
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", SPIN_EXPONENT)

OPENMP_WAIT_POLICY = "passive"


@contextlib.contextmanager
def passive_openmp():
    """``OMP_WAIT_POLICY=passive`` in the environment for the block (an OpenMP runtime loaded inside it reads it),
    unless the variable is already set; the environment is restored after."""
    ours = "OMP_WAIT_POLICY" not in os.environ
    if ours:
        os.environ["OMP_WAIT_POLICY"] = OPENMP_WAIT_POLICY
    try:
        yield
    finally:
        if ours:
            os.environ.pop("OMP_WAIT_POLICY", None)
