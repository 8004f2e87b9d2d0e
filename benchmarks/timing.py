"""The benchmarks' one timer: the median wall-clock time of ``reps`` calls (machines here are shared and noisy, so
every ratio the benchmarks print is of medians).  Imported by the scripts beside it (``python benchmarks/x.py`` puts
this folder first on the path)."""

from __future__ import annotations

import statistics
import time


def median_time(fn, reps):
    """The median of ``reps`` timings of ``fn()``, in seconds."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
