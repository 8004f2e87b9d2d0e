"""Coverage at CE = 0: calibrated predictors, where the truth is exactly 0 and the question "is it calibrated?" lives.

The zoo of ``benchmarks/coverage.py`` has truths of 0.0014 and more (a perturbed predictor is rarely exactly
calibrated); a recalibrated predictor's reference is 0 (``socal.evaluate_recalibrated``), and a user's predictor
may be calibrated.  Three populations whose scores, given to ``ce2`` and ``ce1`` as they are, have CE2 = CE1 = 0
exactly, two labels per item:

* ``six atoms``: :func:`socal.synthetic.calibrated_population`'s raw scores (6 atoms, f* = m +- sqrt(var));
* ``knows f*``: S = (f*, 0) with f* ~ U(0, 1) (the predictor knows f* and says so);
* ``Beta``: :func:`socal.synthetic.beta_calibrated_sample` (m ~ U(0.05, 0.95), var = U(0, 1/2) m (1 - m),
  f* | S ~ Beta with that mean and variance).

For every replicate (its own sample and seed) the default call (``ci=0.9, upper=0.95``) is run once, and both
intervals are read from it: the bracket union alone (the lowest of the candidates' lower ends, the rule before the
calibration test's 0 was joined) and the reported one.  Printed per kind x population x n: the estimate's mean
and RMSE (the truth is 0), how often each interval holds 0, how often the test's 0 was joined (the bracket's lower
end above 0 and the test not rejecting: the test runs only there), the mean widths, and how often the 95% bound
holds 0 (always: the bound is >= 0).

    python benchmarks/calibrated_coverage.py --reps 100 --sizes 1000,5000,50000 --jobs 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import socal
from socal.parallel import iter_jobs

POPULATIONS = ("six atoms", "knows f*", "Beta")


def sample(pop, n, rng):
    """(mean, var, labels) of a population with CE2 = CE1 = 0 (module docstring)."""
    if pop == "six atoms":
        m, v, _, y = socal.synthetic.calibrated_population().sample_raw(n, rng=rng)
        return m, v, y
    if pop == "Beta":
        m, v, _, y = socal.synthetic.beta_calibrated_sample(n, rng=rng)
        return m, v, y
    f = rng.uniform(0.0, 1.0, n)
    return f, np.zeros(n), (rng.random((n, 2)) < f[:, None]).astype(float)


def one(kind, pop, n, rep):
    rng = np.random.default_rng([POPULATIONS.index(pop), n, rep])
    m, v, y = sample(pop, n, rng)
    res = (socal.ce2(m, v, y, ci=0.9, upper=0.95, rng=rep) if kind == "ce2" else
           socal.ce1(m, y, ci=0.9, upper=0.95, rng=rep))
    bracket_low = min(c.ci.low for c in res.candidates)
    return res.estimate, bracket_low, res.ci.low, res.ci.high, res.upper.value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--sizes", default="1000,5000,50000")
    ap.add_argument("--kinds", default="ce2,ce1")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    print("| kind | population | n | reps | mean estimate | RMSE | bracket holds 0 | reported holds 0 | test's 0 "
          "joined | width: bracket -> reported | 95% bound holds 0 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in a.kinds.split(","):
        for pop in POPULATIONS:
            for n in (int(float(s)) for s in a.sizes.split(",")):
                t0 = time.perf_counter()
                out = np.array(list(iter_jobs(one, [(kind, pop, n, r) for r in range(a.reps)], n_jobs=a.jobs)))
                est, blo, lo, hi, up = out.T
                print(f"| {kind} | {pop} | {n:,} | {a.reps} | {est.mean():+.4f} | {np.sqrt(np.mean(est ** 2)):.4f} | "
                      f"{np.mean(blo <= 0):.2f} | {np.mean(lo <= 0):.2f} | {np.mean((blo > 0) & (lo == 0)):.2f} | "
                      f"{np.mean(hi - blo):.4f} -> {np.mean(hi - lo):.4f} | {np.mean(up >= 0):.2f} |  "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
