"""socal.torchmetric.SecondOrderCalibration: equal to the one-shot test on the concatenated data, synced across two
processes (gloo, CPU) to the single-process result, and with a state that does not grow with the batches."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra (pip install 'socal[torch]') is not installed")
pytest.importorskip("torchmetrics", reason="the torch extra (pip install 'socal[torch]') is not installed")

import socal  # noqa: E402
from socal.torchmetric import SecondOrderCalibration  # noqa: E402


def _data(n, seed, var_factor=1.0, rare=True):
    if not rare:
        m, v, _, y = socal.synthetic.EnsembleLikePopulation(0.01).sample_raw(n, rng=np.random.default_rng(seed))
        return m, v, y.sum(axis=1), np.full(n, 2.0)
    m, v, _, (a, k) = socal.synthetic.RareEventPopulation(var_factor=var_factor).sample_counts(
        n, rng=np.random.default_rng(seed))
    return m, v, a, k


def _feed(metric, m, v, a, k, sizes):
    start = 0
    for s in sizes:
        sl = slice(start, start + s)
        metric.update(torch.tensor(m[sl]), torch.tensor(v[sl]), counts=(torch.tensor(a[sl]), torch.tensor(k[sl])))
        start += s
    assert start == m.size


@pytest.mark.parametrize("n, var_factor, rare, reference", [(20000, 1.0, False, "chi-square"),
                                                            (2000, 0.3, True, "simulated")])
def test_equals_the_one_shot_test_in_any_batching(n, var_factor, rare, reference):
    m, v, a, k = _data(n, 1, var_factor, rare)
    one = socal.calibration_test(m, v, counts=(a, k))
    assert one.reference == reference  # both references are exercised
    g = np.random.default_rng(2)
    cuts = np.sort(g.choice(np.arange(1, n), 30, replace=False))
    metric = SecondOrderCalibration()
    _feed(metric, m, v, a, k, np.diff(np.r_[0, cuts, n]))
    got = metric.test()
    assert got.reference == one.reference
    assert got.statistic == pytest.approx(one.statistic, rel=1e-9)
    assert got.pvalue == pytest.approx(one.pvalue, rel=1e-9, abs=1e-12)
    assert got.variance_part.pvalue == pytest.approx(one.variance_part.pvalue, rel=1e-9, abs=1e-12)
    assert float(metric.compute()["pvalue"]) == pytest.approx(one.pvalue, rel=1e-9, abs=1e-12)


def test_order_one_and_reset():
    m, v, a, k = _data(3000, 3)
    metric = SecondOrderCalibration(order=1)
    for s in range(0, 3000, 700):
        metric.update(torch.tensor(m[s:s + 700]), None, counts=(torch.tensor(a[s:s + 700]),
                                                                torch.tensor(k[s:s + 700])))
    assert metric.test().pvalue == pytest.approx(socal.calibration_test(m, None, counts=(a, k), order=1).pvalue,
                                                 rel=1e-9)
    metric.reset()
    with pytest.raises(ValueError, match="at least 10 items"):
        metric.test()


def test_bad_input_is_refused_with_the_rule():
    with pytest.raises(ValueError, match="'order' parameter"):
        SecondOrderCalibration(order=3)
    with pytest.raises(ValueError, match="'reference' parameter"):
        SecondOrderCalibration(reference="exact")
    metric = SecondOrderCalibration()
    with pytest.raises(ValueError, match="'mean' parameter"):
        metric.update(torch.tensor([0.5, float("nan")]), torch.tensor([0.01, 0.01]), torch.tensor([[0, 1], [1, 1]]))


def test_state_does_not_grow_with_the_batches():
    """1,000 batches of 100 items: the state is the fixed grid plus one row per occupied (cell, k), the same size
    after the last batch as that bound, and a single consolidated tensor (benchmarks/metric_memory.py measures the
    process's memory)."""
    metric = SecondOrderCalibration()
    g = np.random.default_rng(4)
    sizes = []
    for b in range(1000):
        m = g.beta(0.5, 20, 100).clip(1e-4, 1 - 1e-4)
        v = g.uniform(0.02, 0.5, 100) * m * (1 - m)
        a = g.binomial(2, m).astype(float)
        metric.update(torch.tensor(m), torch.tensor(v), counts=(torch.tensor(a), torch.full((100,), 2.0)))
        if b in (9, 999):
            sizes.append(metric.group_keys[0].numel())
    occupied = int((metric.sums[0] > 0).sum())
    assert len(metric.group_keys) == 1 and sizes[1] <= occupied  # one k: at most one group per occupied cell
    assert metric.sums.shape == (metric.sums.shape[0], 512 * 128)


_WORKER = textwrap.dedent("""
    import json, os, sys
    import numpy as np, torch, torch.distributed as dist
    import torch.multiprocessing as mp
    import socal
    from socal.torchmetric import SecondOrderCalibration

    def run(rank, world, port, out):
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
        dist.init_process_group("gloo", rank=rank, world_size=world)
        m, v, _, (a, k) = socal.synthetic.RareEventPopulation(var_factor=0.3).sample_counts(
            4000, rng=np.random.default_rng(5))
        metric = SecondOrderCalibration()
        for s in range(rank * 250, 4000, world * 250):  # batches dealt out in turn
            sl = slice(s, s + 250)
            metric.update(torch.tensor(m[sl]), torch.tensor(v[sl]), counts=(torch.tensor(a[sl]), torch.tensor(k[sl])))
        res = metric.test()
        if rank == 0:
            with open(out, "w") as fh:
                json.dump({"pvalue": res.pvalue, "statistic": res.statistic, "reference": res.reference,
                           "n": res.n, "variances": res.variance_part.pvalue}, fh)
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(run, args=(2, int(sys.argv[1]), sys.argv[2]), nprocs=2, join=True)
""")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_sync_to_the_single_process_result(tmp_path):
    script, out = tmp_path / "worker.py", tmp_path / "out.json"
    script.write_text(_WORKER)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script), str(_free_port()), str(out)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    m, v, _, (a, k) = socal.synthetic.RareEventPopulation(var_factor=0.3).sample_counts(
        4000, rng=np.random.default_rng(5))
    one = socal.calibration_test(m, v, counts=(a, k))
    assert got["n"] == one.n == 4000 and got["reference"] == one.reference
    assert got["statistic"] == pytest.approx(one.statistic, rel=1e-9)
    assert got["pvalue"] == pytest.approx(one.pvalue, rel=1e-9, abs=1e-12)
    assert got["variances"] == pytest.approx(one.variance_part.pvalue, rel=1e-9, abs=1e-12)
