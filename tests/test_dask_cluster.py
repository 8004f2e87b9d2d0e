"""A dask worker killed mid-run: the cluster recomputes what it held and ce2 returns the very same numbers
(issue 63)."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import socal


def test_a_worker_killed_mid_run_gives_the_identical_result():
    distributed = pytest.importorskip("distributed", reason="the worker-loss test needs dask.distributed")
    da = pytest.importorskip("dask.array")
    import dask

    m, v, y = socal.synthetic.toy_population().sample(40_000, h=1 / 16, rng=0)
    dm, dv, dy = da.from_array(m, chunks=5000), da.from_array(v, chunks=5000), da.from_array(y, chunks=(5000, 2))
    kw = dict(h=1 / 16, ci=0.9, n_boot=40, rng=3)
    with dask.config.set(scheduler="synchronous"):
        local = socal.ce2(dm, dv, dy, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        clean = socal.ce2(dm, dv, dy, **kw).to_dict()
        victim = list(client.run(os.getpid).values())[0]
        seen = {}

        def kill():
            # by progress, not by the clock: once the scheduler holds finished tasks of this run and others are
            # still to come, the worker dies; what the scheduler knew then is kept as the proof it landed mid-run
            sched = cluster.scheduler
            start = time.monotonic()
            while time.monotonic() - start < 300:
                states = [ts.state for ts in list(sched.tasks.values())]
                done, left = states.count("memory"), sum(st in ("waiting", "processing", "queued", "no-worker")
                                                          for st in states)
                if done >= 2 and left >= 1:
                    os.kill(victim, signal.SIGKILL)
                    seen.update(done=done, left=left)
                    return
                time.sleep(0.002)

        killer = threading.Thread(target=kill)
        killer.start()
        after = socal.ce2(dm, dv, dy, **kw).to_dict()
        killer.join()
        assert seen and seen["left"] >= 1, "the worker was not killed while tasks of the run were still to come"
        assert victim not in client.run(os.getpid).values()  # the nanny started a new process in its place
    assert after == clean  # bit for bit: the lost partitions were recomputed, nothing was lost or counted twice
    # the cluster and the synchronous scheduler agree to round-off (BLAS in other processes)
    assert after["estimate"] == pytest.approx(local.estimate, abs=1e-13)
    assert np.isclose(after["ci"]["low"], local.ci.low, atol=1e-13)
