"""Memory of the training-loop metric (socal.torchmetric.SecondOrderCalibration) over 1,000 batches, against the
usual metric that keeps every prediction (a list of the batches, concatenated at compute), and the time per update.

    python benchmarks/metric_memory.py                 # 1,000 batches of 1,000 items
    python benchmarks/metric_memory.py --batches 200   # shorter

Each approach runs in its own process (so one's allocations do not count against the other) and reports the bytes
its state holds and the process's resident memory (VmRSS) after batches 1, 10, 100 and 1,000, and the median time of
an update: the metric alone, the metric with ``h`` (the estimators' statistics too), and keeping every prediction.  Data: rare-event scores (socal.synthetic.RareEventPopulation), k = 2 votes, numpy.random.default_rng(b)
for batch b.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHECKPOINTS = (1, 10, 100, 1000)


def _rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _batch(b, size):
    import numpy as np

    from socal.synthetic import RareEventPopulation

    m, v, _, (a, _) = RareEventPopulation().sample_counts(size, rng=np.random.default_rng(b))
    return m, v, a


def run(kind, batches, size):
    import numpy as np
    import torch

    from socal.torchmetric import SecondOrderCalibration

    metric = SecondOrderCalibration(h=1 / 16, rng=0) if kind == "socal-h" else SecondOrderCalibration()
    kept = []
    out, times = [], []
    for b in range(1, batches + 1):
        m, v, a = (torch.tensor(x) for x in _batch(b, size))
        k = torch.full((size,), 2.0)
        t0 = time.perf_counter()
        if kind.startswith("socal"):
            metric.update(m, v, counts=(a, k))
        else:  # the usual metric: keep the batch
            kept.append(torch.stack([m, v, a, k]))
        times.append(time.perf_counter() - t0)
        if b in CHECKPOINTS or b == batches:
            if kind.startswith("socal"):
                extra = [getattr(metric, f"est{nd}_{x}") for nd in (1, 2) for x in ("M", "Z", "zz", "count")
                         if hasattr(metric, f"est{nd}_{x}")]  # the estimators' statistics (with h)
                state = metric.sums.numel() * 8 + sum(t.numel() * t.element_size()
                                                      for t in metric.group_keys + metric.group_sums + extra)
            else:
                state = sum(t.numel() * t.element_size() for t in kept)
            out.append({"batch": b, "state_mib": state / 2**20, "rss_mib": _rss_mib()})
    t0 = time.perf_counter()
    if kind.startswith("socal"):
        p = metric.test().pvalue
    else:
        x = torch.cat(kept, dim=1).numpy()
        import socal

        p = socal.calibration_test(x[0], x[1], counts=(x[2], x[3])).pvalue
    final = time.perf_counter() - t0
    print(json.dumps({"kind": kind, "rows": out, "update_ms": 1e3 * float(np.median(times)),
                      "compute_s": final, "pvalue": p}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--child", default=None)
    a = ap.parse_args(argv)
    if a.child:
        run(a.child, a.batches, a.size)
        return 0
    res = {}
    for kind in ("socal", "socal-h", "keep-everything"):
        proc = subprocess.run([sys.executable, __file__, "--child", kind, "--batches", str(a.batches), "--size",
                               str(a.size)], capture_output=True, text=True, check=True)
        res[kind] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{a.batches} batches of {a.size:,} items (k = 2 votes): state held and process memory (MiB) after each "
          f"checkpoint\n")
    print("| after batch | socal metric: state | RSS | socal metric with h (CE2, CE1): state | RSS | "
          "keep everything: state | RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r1, r3, r2 in zip(res["socal"]["rows"], res["socal-h"]["rows"], res["keep-everything"]["rows"]):
        print(f"| {r1['batch']:,} | {r1['state_mib']:.2f} | {r1['rss_mib']:.0f} | {r3['state_mib']:.2f} | "
              f"{r3['rss_mib']:.0f} | {r2['state_mib']:.2f} | {r2['rss_mib']:.0f} |")
    s, h, k = res["socal"], res["socal-h"], res["keep-everything"]
    print(f"\nmedian update: socal {s['update_ms']:.2f} ms, with h {h['update_ms']:.2f} ms, keep-everything "
          f"{k['update_ms']:.3f} ms; compute: socal {s['compute_s']:.2f} s, keep-everything {k['compute_s']:.2f} s; "
          f"p-values {s['pvalue']:.10g} and {k['pvalue']:.10g} (the same test)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
