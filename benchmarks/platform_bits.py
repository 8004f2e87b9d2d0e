"""Same code, same seed, other BLAS threads: which inputs change their last bits, and what that does downstream.

Runs the README's Python quick start (its stand-in data, ``socal.evaluate``, ``SecondOrderPlatt`` on half the
items, ``socal.evaluate_recalibrated`` on the other half) in two fresh processes, one with ``OMP_NUM_THREADS=1``
and one with the threads numpy chooses, and compares what they computed: the raw and perturbed scores, the
recalibrated moments, and the printed estimates and intervals (and how far apart their unrounded values are).
socal's random numbers are keyed by each row's content rounded to 27 significant bits (``socal.rowkeys``), so a row
whose computed inputs differ in a last bit keeps its draws, and the estimates differ by round-off (with keys of the
exact bits they moved by their Monte Carlo error): docs/numbers.md, "Same data, another machine".

    python benchmarks/platform_bits.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CHILD = r"""
import json, sys
import numpy as np
import socal

rng = np.random.default_rng(0)
p_true = rng.beta(2, 2, 10_000)
p_model = np.clip(p_true + rng.normal(0, 0.15, 10_000), 0.01, 0.99)
members = np.clip(p_model[:, None] + rng.normal(0, 0.03, (10_000, 5)), 0.001, 0.999)
labels = (rng.random((10_000, 2)) < p_true[:, None]).astype(float)
mean, var = socal.from_members(members, ddof=1)
evaluation = socal.evaluate(mean, var, labels, rng=0)
platt = socal.SecondOrderPlatt(h=evaluation.h, rng=0).fit(evaluation.mean[::2], evaluation.var[::2], labels[::2])
m2, v2 = platt.predict_moments(evaluation.mean[1::2], evaluation.var[1::2])
after = socal.evaluate_recalibrated(platt, evaluation.mean[1::2], evaluation.var[1::2], labels[1::2], rng=0)
np.savez(sys.argv[1], raw_mean=mean, raw_var=var, perturbed_mean=evaluation.mean, perturbed_var=evaluation.var,
         recalibrated_eta1=m2, recalibrated_eta2=v2)
json.dump({"CE2 of the raw scores": [evaluation.ce2.estimate, evaluation.ce2.ci.low, evaluation.ce2.ci.high],
           "CE2 of the recalibrated scores": [after.ce2.estimate, after.ce2.ci.low, after.ce2.ci.high]},
          open(sys.argv[2], "w"))
"""


def run(threads, folder):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OPENBLAS_NUM_THREADS", None)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    arrays, printed = os.path.join(folder, f"{threads}.npz"), os.path.join(folder, f"{threads}.json")
    subprocess.run([sys.executable, "-c", CHILD, arrays, printed], env=env, check=True)
    with open(printed) as f:
        return np.load(arrays), json.load(f)


def main():
    with tempfile.TemporaryDirectory() as folder:
        (a, pa), (b, pb) = run(1, folder), run(None, folder)
        print(f"{'array':<22}{'rows':>7}{'bits differ':>13}{'max |difference|':>18}")
        for key in a.files:
            x, y = a[key], b[key]
            print(f"{key:<22}{x.size:>7}{int(np.sum(x != y)):>13}{float(np.max(np.abs(x - y))):>18.2e}")
        print(f"\n{'printed':<32}{'one thread':>26}{'default threads':>26}{'max |difference|':>18}")
        for key in pa:
            fmt = lambda v: f"{v[0]:.4f} [{v[1]:.4f}, {v[2]:.4f}]"  # noqa: E731
            diff = float(np.max(np.abs(np.subtract(pa[key], pb[key]))))
            print(f"{key:<32}{fmt(pa[key]):>26}{fmt(pb[key]):>26}{diff:>18.2e}")


if __name__ == "__main__":
    main()
