"""What the headline costs: the default ce2 call (bias-corrected, ``ci`` and ``upper``) against the plug-in alone,
at the same fixed degree, in the same run (issue 24).

Data: the toy population of :mod:`socal.synthetic`, perturbed at h = 1/16, two labels per item.  Both calls take
``degree=l, alpha=1e-3`` (no selection: the plug-in's cost is then the statistics pass, one solve and the deviation
pass; the default call adds the bootstrap's two passes).  ``--streamed`` runs both from 10 chunks instead of arrays.
Times are medians of ``--reps`` alternated runs; the ratio is default / plug-in.

    python benchmarks/cost.py                       # n = 5e4 and 1e6, l = 12 and 44, in memory
    python benchmarks/cost.py --sizes 50000 --reps 5
    python benchmarks/cost.py --streamed
    python benchmarks/cost.py --evaluate --sizes 200000    # socal.evaluate against the plug-in it reports
    python benchmarks/cost.py --phases --reps 30           # where the default call's extra time goes

``--evaluate`` times ``socal.evaluate`` on raw scores of the toy population (the calibration test, perturbation, CE2
and CE1 with their bootstraps and Lepski's candidates, and the calibrated reference) against the plug-in ``ce2``
call (``debias=False``) on the same perturbed scores: the default call (cross-validated degree) at evaluate's own
bandwidth and at h = 1/16 on both axes, and the call at the degree and ridge evaluate selected (no selection).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import socal


def _data(n, seed=0):
    pop = socal.synthetic.toy_population()
    return pop.sample(n, h=1 / 16, rng=seed)


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def evaluate_cost(sizes, reps):
    pop = socal.synthetic.toy_population()
    print(f"{'n':>9} {'evaluate s':>11} | plug-in s: {'default':>8} {'h=1/16':>7} {'fixed l':>8} | evaluate / "
          f"plug-in: {'default':>8} {'h=1/16':>7} {'fixed l':>8}")
    for n in sizes:
        m, v, _, y = pop.sample_raw(n, rng=0)
        res = socal.evaluate(m, v, y)
        mt, vt, h = res.mean, res.var, res.h  # the perturbed scores evaluate measured, at its bandwidth
        fixed = dict(degree=res.ce2.degree, alpha=res.ce2.alpha)  # the degree and ridge it selected, no selection
        plug, plug16, plugl, ev = [], [], [], []
        for _ in range(reps):  # alternated
            plug.append(_time(lambda: socal.ce2(mt, vt, y, debias=False, h=h))[0])
            plug16.append(_time(lambda: socal.ce2(mt, vt, y, debias=False, h=1 / 16))[0])
            plugl.append(_time(lambda: socal.ce2(mt, vt, y, debias=False, h=h, **fixed))[0])
            ev.append(_time(lambda: socal.evaluate(m, v, y))[0])
        te, tp, t16, tl = (statistics.median(x) for x in (ev, plug, plug16, plugl))
        print(f"{n:>9} {te:>11.2f} | {'':>10} {tp:>8.2f} {t16:>7.2f} {tl:>8.2f} | {'':>18} {te / tp:>8.1f} "
              f"{te / t16:>7.1f} {te / tl:>8.1f}   (fixed l = {fixed['degree']})", flush=True)


_PHASES = (("socal.pipeline", "fit_from", "statistics and fit"),
           ("socal.deviations", "DeviationPass.__call__", "deviation pass (the plug-in's)"),
           ("socal.world", "DeviationWorldPass.__call__", "deviation-and-world pass"),
           ("socal.world", "world_sums", "  of which the world's sums"),
           ("socal.world", "gaussian_right_hand_sides", "Gaussian draws"),
           ("socal.refits", "RefitPass.__call__", "refit pass"),
           ("socal.weights", "poisson_weights", "  of which the Poisson weights"))


def phases(sizes, degrees, reps):
    """Mean seconds per call in each stage of the default call (and of the plug-in), by wrapping the stages' functions
    with timers (:data:`_PHASES`; an "of which" stage is counted in the stage before it too)."""
    import importlib

    spent = {}
    for mod_name, qual, label in _PHASES:
        owner = importlib.import_module(mod_name)
        *path, attr = qual.split(".")
        for part in path:
            owner = getattr(owner, part)
        fn = getattr(owner, attr)

        def timed(*args, _fn=fn, _label=label, **kw):
            t0 = time.perf_counter()
            try:
                return _fn(*args, **kw)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - t0

        setattr(owner, attr, timed)
    for n in sizes:
        m, v, y = _data(n)
        for l in degrees:
            kw = dict(degree=l, alpha=1e-3, h=1 / 16)
            calls = {"plug-in": lambda: socal.ce2(m, v, y, debias=False, **kw),
                     "default": lambda: socal.ce2(m, v, y, ci=0.9, upper=0.95, **kw)}
            for name, call in calls.items():
                call()  # warm
                spent.clear()
                total = [_time(call)[0] for _ in range(reps)]
                parts = ", ".join(f"{label.strip()} {spent[label] / reps:.4f}" for *_, label in _PHASES
                                  if label in spent)
                print(f"n = {n}, l = {l}, {name}: median {statistics.median(total):.4f} s; mean per call: {parts}",
                      flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50000,1000000")
    ap.add_argument("--degrees", default="12,44")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--streamed", action="store_true", help="from 10 chunks instead of arrays")
    ap.add_argument("--evaluate", action="store_true", help="time socal.evaluate against the plug-in instead")
    ap.add_argument("--phases", action="store_true", help="time the stages of each call instead")
    a = ap.parse_args(argv)
    if a.phases:
        return phases([int(float(x)) for x in a.sizes.split(",")], [int(x) for x in a.degrees.split(",")], a.reps)
    if a.evaluate:
        return evaluate_cost([int(float(x)) for x in a.sizes.split(",")], a.reps)
    print(f"{'n':>9} {'l':>3} {'plug-in s':>10} {'default s':>10} {'ratio':>7}   estimate [90% interval], upper 95%")
    for n in (int(float(x)) for x in a.sizes.split(",")):
        m, v, y = _data(n)
        for l in (int(x) for x in a.degrees.split(",")):
            if a.streamed:
                cuts = np.array_split(np.arange(n), 10)
                chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts]
                data = {"chunks": chunks}
            else:
                data = {"mean": m, "var": v, "labels": y}
            kw = dict(degree=l, alpha=1e-3, h=1 / 16)
            plug, full, res = [], [], None
            for _ in range(a.reps):  # alternated, so a busy spell of the machine hits both
                t, _ = _time(lambda: socal.ce2(**data, debias=False, **kw))
                plug.append(t)
                t, res = _time(lambda: socal.ce2(**data, ci=0.9, upper=0.95, n_boot=a.n_boot, **kw))
                full.append(t)
            tp, tf = statistics.median(plug), statistics.median(full)
            print(f"{n:>9} {l:>3} {tp:>10.2f} {tf:>10.2f} {tf / tp:>7.1f}   {res.estimate:.4f} [{res.ci.low:.4f}, "
                  f"{res.ci.high:.4f}], {res.upper.value:.4f}", flush=True)


if __name__ == "__main__":
    main()
