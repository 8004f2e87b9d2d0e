"""Replicate runners: the same seeded jobs, in order, on one process, on joblib's loky workers or on dask.

Every replicate carries its own seed (a ``SeedSequence`` built from the job's key), so the backend decides only where
a job runs, never what it computes: loky and dask give identical results for the same seeds.
"""

from __future__ import annotations

import contextlib

from ._progress import tracked

__all__ = ["run_jobs", "iter_jobs", "backend", "BACKENDS"]

BACKENDS = ("loky", "dask")


def iter_jobs(fn, jobs, *, n_jobs=1, progress=False, desc=None):
    """fn(*job) for each job, yielded in order as they finish.  ``n_jobs`` 1 runs here; otherwise joblib under the
    active backend (loky unless :func:`backend` or ``joblib.parallel_config`` chose another)."""
    jobs = list(jobs)
    if n_jobs == 1:
        gen = (fn(*job) for job in jobs)
    else:
        try:
            from joblib import Parallel, delayed
        except ImportError:
            raise ImportError("Parallel replicates need joblib: pip install 'socal[experiments]'") from None
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(fn)(*job) for job in jobs)
    yield from tracked(gen, progress, desc=desc, total=len(jobs))


def run_jobs(fn, jobs, *, n_jobs=1, progress=False, desc=None):
    """[fn(*job) for job in jobs], in order (see :func:`iter_jobs`)."""
    return list(iter_jobs(fn, jobs, n_jobs=n_jobs, progress=progress, desc=desc))


@contextlib.contextmanager
def backend(name="loky", *, scheduler=None, n_workers=2):
    """Run :func:`run_jobs` inside on ``name``: 'loky' (local processes) or 'dask' (the cluster at ``scheduler``,
    an address such as 'tcp://10.0.0.5:8786', or a local cluster of ``n_workers`` processes on loopback)."""
    if name not in BACKENDS:
        raise ValueError(f"The 'backend' parameter must be one of {', '.join(BACKENDS)}. Got {name!r} instead.")
    if name == "loky" and scheduler is not None:  # else the address would be ignored and the work run here
        raise ValueError(f"The 'scheduler' parameter is the address of a dask cluster: it needs the 'dask' backend "
                         f"(--backend dask). Got scheduler={scheduler!r} with the 'loky' backend.")
    if name == "loky":
        try:
            from joblib import parallel_config
        except ImportError:  # without joblib, run_jobs can only run here (n_jobs=1), which needs no backend
            yield None
            return
        with parallel_config(backend="loky"):
            yield None
        return
    from joblib import parallel_config

    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("The dask backend needs dask.distributed: pip install 'socal[dask]'") from None
    if scheduler is None:
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                          processes=True) as cluster, Client(cluster) as client, parallel_config(backend="dask"):
            yield client
    else:
        with Client(scheduler) as client, parallel_config(backend="dask"):
            yield client
