"""socal.parallel: the same seeded jobs give the same results here or in worker processes (issue 61)."""

import numpy as np
import pytest

from socal.parallel import backend, iter_jobs, run_jobs


def _job(seed, n):
    return float(np.random.default_rng(seed).normal(size=n).sum())


def test_results_are_in_job_order_and_the_same_in_worker_processes():
    pytest.importorskip("joblib", reason="worker processes need joblib")
    jobs = [(s, 1000) for s in range(6)]
    here = run_jobs(_job, jobs)
    assert here == [_job(*j) for j in jobs]
    with backend("loky"):
        assert run_jobs(_job, jobs, n_jobs=2) == here
    assert list(iter_jobs(_job, jobs[:2])) == here[:2]


def test_backend_refusals():
    with pytest.raises(ValueError, match="'backend' parameter must be one of"):
        with backend("threads"):
            pass
    with pytest.raises(ValueError, match="needs the 'dask' backend"):
        with backend("loky", scheduler="tcp://127.0.0.1:1"):
            pass
