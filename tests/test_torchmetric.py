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


@pytest.mark.parametrize("order", [2, 1])
def test_ce2_and_ce1_equal_the_one_shot_estimators_in_any_batching(order):
    """With h the metric keeps the fit's statistics of the perturbed scores; ce2/ce1 take the batches again for the
    deviation pass and equal socal.ce2/ce1 on the concatenated perturbed data with the same seed, interval included.
    Control: another seed perturbs otherwise and moves the estimate.  The rare-event data tie their means (rows of
    one mean and votes repeat across batches, which a batch cannot see: they share a fold, as SufficientStats.update
    says), so order 1 reads the ensemble-like data, whose rows are distinct."""
    m, v, a, k = _data(3000, 5, 0.3, rare=order == 2)
    g = np.random.default_rng(4)
    cuts = np.r_[0, np.sort(g.choice(np.arange(1, 3000), 9, replace=False)), 3000]
    batches = [(m[i:j], v[i:j] if order == 2 else None, (a[i:j], k[i:j])) for i, j in zip(cuts[:-1], cuts[1:])]
    metric = SecondOrderCalibration(order=order, h=1 / 16, rng=3)
    for mm, vv, (aa, kk) in batches:
        metric.update(torch.tensor(mm), None if vv is None else torch.tensor(vv),
                      counts=(torch.tensor(aa), torch.tensor(kk)))
    key = np.column_stack([a, k])
    if order == 2:
        pm, pv = socal.perturb(m, v, h=1 / 16, rng=metric.perturbation_seed, key=key)
        got, one = metric.ce2(batches, ci=0.9, n_boot=40), socal.ce2(pm, pv, counts=(a, k), h=1 / 16, rng=3, ci=0.9,
                                                                       n_boot=40)
    else:
        pm = socal.perturb_mean(m, h=1 / 16, rng=metric.perturbation_seed, key=key)
        got, one = metric.ce1(batches, ci=0.9, n_boot=40), socal.ce1(pm, counts=(a, k), h=1 / 16, rng=3, ci=0.9,
                                                                       n_boot=40)
    assert got.n == one.n == 3000 and got.degree == one.degree
    assert got.estimate == pytest.approx(one.estimate, rel=1e-9, abs=1e-12)
    assert got.ci.low == pytest.approx(one.ci.low, rel=1e-9) and got.ci.high == pytest.approx(one.ci.high, rel=1e-9)
    if order == 2:  # the fit alone, from the statistics: socal.calibration_functions on the perturbed data
        fit, ref = metric.calibration_functions(), socal.calibration_functions(pm, pv, counts=(a, k), h=1 / 16, rng=3)
        assert fit.degree == ref.degree and np.allclose(fit(pm[:50], pv[:50])[1], ref(pm[:50], pv[:50])[1],
                                                         rtol=1e-9, atol=1e-12)
    other = SecondOrderCalibration(order=order, h=1 / 16, rng=4)
    for mm, vv, (aa, kk) in batches:
        other.update(mm, vv, counts=(aa, kk))
    moved = other.ce2(batches, debias=False) if order == 2 else other.ce1(batches, debias=False)
    assert moved.estimate != (metric.ce2(batches, debias=False) if order == 2 else metric.ce1(batches,
                                                                                              debias=False)).estimate


def test_the_estimators_need_h_and_an_int_seed():
    metric = SecondOrderCalibration()
    with pytest.raises(ValueError, match="needs the perturbation's bandwidth"):
        metric.ce2([])
    with pytest.raises(ValueError, match="'rng' parameter of SecondOrderCalibration must be an int seed"):
        SecondOrderCalibration(h=1 / 16, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="'h' parameter"):
        SecondOrderCalibration(h=-1.0)


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
        metric = SecondOrderCalibration(h=1 / 16, rng=3)
        for s in range(rank * 250, 4000, world * 250):  # batches dealt out in turn
            sl = slice(s, s + 250)
            metric.update(torch.tensor(m[sl]), torch.tensor(v[sl]), counts=(torch.tensor(a[sl]), torch.tensor(k[sl])))
        res = metric.test()
        # the estimators' statistics are synced (a collective: every rank calls); the deviation pass reads all rows
        every = [(m[s:s + 250], v[s:s + 250], (a[s:s + 250], k[s:s + 250])) for s in range(0, 4000, 250)]
        ce2 = metric.ce2(every, debias=False)
        if rank == 0:
            with open(out, "w") as fh:
                json.dump({"pvalue": res.pvalue, "statistic": res.statistic, "reference": res.reference,
                           "n": res.n, "variances": res.variance_part.pvalue, "ce2": ce2.estimate,
                           "ce2_degree": ce2.degree, "seed": metric.perturbation_seed}, fh)
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
    one = socal.calibration_test(m, v, counts=(a, k), rng=3)  # the metric's seed
    assert got["n"] == one.n == 4000 and got["reference"] == one.reference
    assert got["statistic"] == pytest.approx(one.statistic, rel=1e-9)
    assert got["pvalue"] == pytest.approx(one.pvalue, rel=1e-9, abs=1e-12)
    assert got["variances"] == pytest.approx(one.variance_part.pvalue, rel=1e-9, abs=1e-12)
    pm, pv = socal.perturb(m, v, h=1 / 16, rng=got["seed"], key=np.column_stack([a, k]))
    ce2 = socal.ce2(pm, pv, counts=(a, k), h=1 / 16, rng=3, debias=False)
    assert got["ce2_degree"] == ce2.degree and got["ce2"] == pytest.approx(ce2.estimate, rel=1e-9)
