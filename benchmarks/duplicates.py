"""Predictors with few distinct scores: does the bootstrap see the estimate's real spread?  (Rows of one content.)

Rows with the same scores and labels share their row key, so keyed draws alone would weight them alike and keep them
in or out of the refit subset together.  ``socal.rowkeys.KeyCensus`` counts them and the refit pass resamples them
as separate items.  Per case and n, over ``--reps`` fresh samples: the estimate's mean and SD, the chosen degree's
bootstrap SD (median) and its ratio to that SD, the 90% interval's median width (in SDs), its coverage of the exact
truth, the bias, and seconds per call.  ``--no-census`` draws as if every row were a key of its own (content-keyed
weights, the previous behaviour; a call whose refit subset keeps no row then fails, and is counted).  Run with
PYTHONPATH pointing at an older checkout for its numbers.

Cases (truths computed exactly below, by Beta integrals or quadrature):

* constant: mean 0.3 for every item, labels of rate 0.5 (3 distinct rows); CE1 = 0.2.
* grid: the mean clip(round(1.3 p - 0.15, 1), 0, 1), p ~ Beta(2, 2), labels of rate p (11 distinct means); CE1.
* grid-ce2: mean round(p, 1) clipped to [0.1, 0.9], var round(m (1 - m) / 8, 3), labels of rate p; CE2.
* continuous (control): the grid's map without the rounding; CE1.  Its clipped ends (m = 0 and 1) repeat.

    python benchmarks/duplicates.py --reps 40
    python benchmarks/duplicates.py --reps 40 --no-census
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import integrate, stats

import socal


def _cells(edges_of):
    """(P(cell), E[p 1_cell], E[p^2 1_cell]) for p ~ Beta(2, 2) on intervals (a, b) of p."""
    out = []
    for a, b in edges_of:
        a, b = max(a, 0.0), min(b, 1.0)
        if b <= a:
            continue
        prob = stats.beta.cdf(b, 2, 2) - stats.beta.cdf(a, 2, 2)
        m1 = 0.5 * (stats.beta.cdf(b, 3, 2) - stats.beta.cdf(a, 3, 2))  # p Beta(2,2) = B(3,2)/B(2,2) Beta(3,2)
        m2 = 0.3 * (stats.beta.cdf(b, 4, 2) - stats.beta.cdf(a, 4, 2))  # p^2 Beta(2,2) = B(4,2)/B(2,2) Beta(4,2)
        out.append((prob, m1, m2))
    return out


def _truths():
    grid = 0.0
    for j in range(11):  # mean m_j = j / 10 where 1.3 p - 0.15 rounds to it (clipped at 0 and 1)
        m = j / 10
        lo = -np.inf if j == 0 else (m - 0.05 + 0.15) / 1.3
        hi = np.inf if j == 10 else (m + 0.05 + 0.15) / 1.3
        for prob, m1, _ in _cells([(lo, hi)]):
            grid += abs(m1 - m * prob)
    grid2 = 0.0
    for j in range(1, 10):  # mean round(p, 1), clipped to [0.1, 0.9]
        m = j / 10
        lo, hi = (-np.inf if j == 1 else m - 0.05), (np.inf if j == 9 else m + 0.05)
        v = round(m * (1 - m) / 8, 3)
        for prob, m1, m2 in _cells([(lo, hi)]):
            grid2 += abs(m1 - m * prob) + abs(m2 - (m * m + v) * prob)
    cont = integrate.quad(lambda p: abs(p - min(max(1.3 * p - 0.15, 0.0), 1.0)) * 6 * p * (1 - p), 0, 1,
                          points=[0.15 / 1.3, 0.5, 1.15 / 1.3], epsabs=1e-13)[0]
    return {"constant": 0.2, "grid": grid, "grid-ce2": grid2, "continuous": cont}


def _sample(name, n, rng):
    if name == "constant":
        return np.full(n, 0.3), None, (rng.random((n, 2)) < 0.5).astype(float)
    p = rng.beta(2, 2, n)
    y = (rng.random((n, 2)) < p[:, None]).astype(float)
    if name == "grid":
        return np.clip(np.round(p * 1.3 - 0.15, 1), 0, 1), None, y
    if name == "grid-ce2":
        m = np.clip(np.round(p, 1), 0.1, 0.9)
        return m, np.round(m * (1 - m) / 8, 3), y
    return np.clip(p * 1.3 - 0.15, 0, 1), None, y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--cases", default="constant,grid,grid-ce2,continuous")
    ap.add_argument("--no-census", action="store_true", help="draw as if every row were a key of its own")
    a = ap.parse_args(argv)
    if a.no_census:
        socal.rowkeys.KeyCensus.duplicated = lambda self: (np.empty(0, np.uint64), np.empty(0, np.int64))
    truth = _truths()
    print(f"{'case':>10} {'n':>6} {'truth':>7} {'mean':>7} {'sd':>7} {'boot sd':>8} {'ratio':>6} {'width/sd':>9} "
          f"{'cover':>6} {'bias':>8} {'s/call':>7}")
    for name in a.cases.split(","):
        for n in (int(x) for x in a.sizes.split(",")):
            est, sd, width, cover, secs, failed = [], [], [], [], [], 0
            for s in range(a.reps):
                m, v, y = _sample(name, n, np.random.default_rng([n, s]))
                t0 = time.perf_counter()
                try:
                    r = socal.ce1(m, y, ci=0.9) if v is None else socal.ce2(m, v, y, ci=0.9)
                except RuntimeError:  # --no-census: the refit subset kept no row (every key dropped)
                    failed += 1
                    continue
                secs.append(time.perf_counter() - t0)
                est.append(r.estimate)
                sd.append(next(c for c in r.candidates if c.chosen).noise_sd)
                width.append(r.ci.high - r.ci.low)
                cover.append(r.ci.low <= truth[name] <= r.ci.high)
            if len(est) < 2:
                print(f"{name:>10} {n:>6} {truth[name]:>7.4f}   "
                      f"({failed} of {a.reps} calls kept no row for the refits)")
                continue
            spread = np.std(est, ddof=1)
            print(f"{name:>10} {n:>6} {truth[name]:>7.4f} {np.mean(est):>7.4f} {spread:>7.4f} {np.median(sd):>8.4f} "
                  f"{np.median(sd) / spread:>6.2f} {np.median(width) / spread:>9.1f} {np.mean(cover):>6.2f} "
                  f"{np.mean(est) - truth[name]:>+8.4f} {np.median(secs):>7.2f}"
                  + (f"   ({failed} of {a.reps} calls kept no row for the refits)" if failed else ""), flush=True)


if __name__ == "__main__":
    main()
