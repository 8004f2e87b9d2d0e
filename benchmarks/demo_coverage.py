"""How often ``socal.evaluate``'s intervals hold the demo population's exact CE2^pert and CE1^pert.

The demo (``socal demo --write``) is the toy population's raw scores, 20,000 items; ``socal.evaluate`` perturbs them
at its default h = (1/16, 1/64) and estimates.  Two ways to repeat it: the demo's own items (``sample_raw`` with
seed 0) under seeds 0, 1, ... of ``evaluate`` (the perturbation and the bootstrap vary), and fresh samples of items
(seed 1000 + r) with seed r.  Prints per way the mean error, SD and RMSE of the estimates, how many intervals held
the truth, and their mean width; docs/guide.md ("Caveats, in numbers") quotes it.

    python benchmarks/demo_coverage.py --reps 40
"""

import argparse

import numpy as np

import socal


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--n", type=int, default=20_000)
    a = ap.parse_args()
    pop = socal.synthetic.toy_population()
    h = socal.evaluate.__kwdefaults__["h"]
    truth = {"ce2": pop.ce2(h).value, "ce1": pop.ce1(h).value}
    print(f"exact CE2^pert {truth['ce2']:.4f}, CE1^pert {truth['ce1']:.4f} at h = {h}")
    own = pop.sample_raw(a.n, rng=0)
    for way in ("the demo's items", "fresh items"):
        got = {"ce2": [], "ce1": []}
        for r in range(a.reps):
            m, v, _, y = own if way == "the demo's items" else pop.sample_raw(a.n, rng=1000 + r)
            ev = socal.evaluate(m, v, y, rng=r)
            for kind in got:
                res = getattr(ev, kind)
                got[kind].append((res.estimate, res.ci.low, res.ci.high))
        line = []
        for kind, rows in got.items():
            est, lo, hi = np.array(rows).T
            t = truth[kind]
            line.append(f"{kind.upper()} mean error {est.mean() - t:+.4f} SD {est.std(ddof=1):.4f} RMSE "
                        f"{np.sqrt(np.mean((est - t) ** 2)):.4f} held {int(np.sum((lo <= t) & (t <= hi)))}/{a.reps} "
                        f"width {np.mean(hi - lo):.4f}")
        print(f"{way}: " + " | ".join(line), flush=True)


if __name__ == "__main__":
    main()
