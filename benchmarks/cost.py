"""What the headline costs: the default ce2 call (bias-corrected, ``ci`` and ``upper``) against the plug-in alone,
at the same fixed degree, in the same run (issue 24).

Data: the toy population of :mod:`socal.synthetic`, perturbed at h = 1/16, two labels per item.  Both calls take
``degree=l, ridge=1e-3`` (no selection: the plug-in's cost is then the statistics pass, one solve and the deviation
pass; the default call adds the bootstrap's two passes).  ``--streamed`` runs both from 10 chunks instead of arrays.
Times are medians of ``--reps`` alternated runs; the ratio is default / plug-in.

    python benchmarks/cost.py                       # n = 5e4 and 1e6, l = 12 and 44, in memory
    python benchmarks/cost.py --sizes 50000 --reps 5
    python benchmarks/cost.py --streamed
    python benchmarks/cost.py --evaluate --sizes 200000    # socal.evaluate against the plug-in it reports
    python benchmarks/cost.py --phases --reps 30           # where the default call's extra time goes
    python benchmarks/cost.py --evaluate --phases --sizes 200000 --reps 7   # where evaluate's time goes

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
        fixed = dict(degree=res.ce2.degree, ridge=res.ce2.ridge)  # the degree and ridge it selected, no selection
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
           ("socal.world", "cholesky_lower", "  of which the covariance's factorisation", "here"),
           ("socal.refits", "RefitPass.__call__", "refit pass"),
           ("socal.weights", "poisson_weights", "  of which the Poisson weights"))


def _wrap_everywhere(mod_name, qual, make, here=False):
    """Replace the function ``mod_name.qual`` by ``make(fn)`` wherever socal looks it up: a method in its class, a
    function in its module and in every loaded socal module that imported it by name (``from .world import f`` binds
    the object in the importer's namespace, where a patch of ``socal.world.f`` alone would never be seen: the
    "Gaussian draws" stage was never timed after the bootstrap's split); with ``here``, only ``mod_name``'s binding
    (the world's factorisation, not the fit's).  Returns the list of (owner, name, original) to restore."""
    import importlib
    import sys

    owner = importlib.import_module(mod_name)
    *path, attr = qual.split(".")
    for part in path:
        owner = getattr(owner, part)
    fn = getattr(owner, attr)
    owners = [owner] if path or here else [m for name, m in list(sys.modules.items())
                                   if (name == "socal" or name.startswith("socal.")) and getattr(m, attr, None) is fn]
    wrapped = make(fn)
    for o in owners:
        setattr(o, attr, wrapped)
    return [(o, attr, fn) for o in owners]


def _timers(table, spent, key=None):
    """Wrap every stage of ``table`` ((module, qualified name, label[, "here"]), ...) with a timer adding to
    ``spent[label]`` (``spent[(label, key(label, args, kwargs))]`` where ``key`` is given: whose stage, which
    candidate's degree); returns what to restore."""
    undo = []
    for mod_name, qual, label, *here in table:
        def make(fn, _label=label):
            def timed(*args, **kw):
                t0 = time.perf_counter()
                try:
                    return fn(*args, **kw)
                finally:
                    k = _label if key is None else (_label, key(_label, args, kw))
                    spent[k] = spent.get(k, 0.0) + time.perf_counter() - t0
            return timed
        undo += _wrap_everywhere(mod_name, qual, make, here=bool(here))
    return undo


def phases(sizes, degrees, reps):
    """Mean seconds per call in each stage of the default call (and of the plug-in), by wrapping the stages' functions
    with timers (:data:`_PHASES`; an "of which" stage is counted in the stage before it too).  A stage that never
    ran is printed as such, so a timer that a code move left unattached shows."""
    spent = {}
    _timers(_PHASES, spent)
    for n in sizes:
        m, v, y = _data(n)
        for l in degrees:
            kw = dict(degree=l, ridge=1e-3, h=1 / 16)
            calls = {"plug-in": lambda: socal.ce2(m, v, y, debias=False, **kw),
                     "default": lambda: socal.ce2(m, v, y, ci=0.9, upper=0.95, **kw)}
            for name, call in calls.items():
                call()  # warm
                spent.clear()
                total = [_time(call)[0] for _ in range(reps)]
                parts = ", ".join(f"{label.strip()} " + (f"{spent[label] / reps:.4f}" if label in spent else "not run")
                                  for _, _, label, *_ in _PHASES)
                print(f"n = {n}, l = {l}, {name}: median {statistics.median(total):.4f} s; mean per call: {parts}",
                      flush=True)


# evaluate's stages, as _PHASES: its own, then CE2's and CE1's (which mark whose the estimators' stages are), then the
# estimators' stages
_EVALUATE_OWN = (("socal.testing", "calibration_test", "test on the raw scores"),
                 ("socal.perturb", "perturb", "perturbation"),
                 ("socal.truth", "checked_reference", "calibrated reference"))
_TOP = ("CE2", "CE1")
_ESTIMATOR_PHASES = (("socal.pipeline", "fit_from", "statistics and cross-validation"),
                     ("socal.lepski", "finer_fits", "Lepski's finer fits (a ridge search each)"),
                     ("socal.lepski", "select_and_fit", "  of which one degree's", "here"),
                     ("socal.world", "DeviationWorldPass.__call__", "deviation-and-world pass"),
                     ("socal.world", "gaussian_right_hand_sides", "Gaussian draws"),
                     ("socal.world", "cholesky_lower", "  of which the covariance's factorisation", "here"),
                     ("socal.refits", "RefitPass.__call__", "refit pass"))
_EVALUATE_PHASES = (_EVALUATE_OWN + tuple(("socal.estimators", top.lower(), top) for top in _TOP)
                    + _ESTIMATOR_PHASES)
_ESTIMATOR_STAGES = {stage[2] for stage in _ESTIMATOR_PHASES}
_BY_DEGREE = {"deviation-and-world pass": lambda a, kw: a[0].calmap.degree,
              "refit pass": lambda a, kw: a[0].calmap.degree, "Gaussian draws": lambda a, kw: a[2].degree,
              "  of which one degree's": lambda a, kw: kw["degrees"][0]}


def evaluate_phases(sizes, reps):
    """Where ``evaluate``'s time goes: mean seconds per call of each stage (:data:`_EVALUATE_PHASES`), inside CE2 and
    CE1 separately, and per Lepski candidate (its degree) for the stages that run once per candidate; against the
    default plug-in ce2 call on the same perturbed scores.  Indented stages are counted in the stage above them."""
    pop = socal.synthetic.toy_population()
    spent, inside = {}, []

    def key(label, args, kw):
        if label in _TOP:
            return None
        return (inside[-1] if inside else None, _BY_DEGREE[label](args, kw) if label in _BY_DEGREE else None)

    undo = _timers(_EVALUATE_PHASES, spent, key)
    for label in _TOP:  # CE2's and CE1's own timers also mark whose stage runs below them
        def make(fn, _label=label):
            def marked(*args, **kw):
                inside.append(_label)
                try:
                    return fn(*args, **kw)
                finally:
                    inside.pop()
            return marked
        undo += _wrap_everywhere("socal.estimators", label.lower(), make)
    for n in sizes:
        m, v, _, y = pop.sample_raw(n, rng=0)
        res = socal.evaluate(m, v, y)  # warm
        spent.clear()
        ev = [_time(lambda: socal.evaluate(m, v, y))[0] for _ in range(reps)]
        ev_spent = dict(spent)  # the plug-in's calls below add to CE2's stages
        plug = [_time(lambda: socal.ce2(res.mean, res.var, y, debias=False, h=res.h))[0] for _ in range(reps)]
        te, tp = statistics.median(ev), statistics.median(plug)
        cands = ", ".join(str(c.degree) for c in res.ce2.candidates)
        print(f"n = {n}: evaluate {te:.3f} s, the default plug-in ce2 {tp:.3f} s: {te / tp:.1f} times (medians of "
              f"{reps}; the plug-in's stages are not counted below)\nCE2's Lepski candidates: degrees {cands}")
        print(f"{'stage':<48} {'s per call':>10}   by candidate degree")

        def stage(label, scope):  # {degree or None: seconds} of a stage run inside ``scope`` (CE2, CE1 or neither)
            return {k[1][1]: t for k, t in ev_spent.items() if k[0] == label and k[1] is not None
                    and k[1][0] == scope}

        for scope in (None,) + _TOP:
            if scope is not None:
                print(f"{scope:<48} {ev_spent.get((scope, None), 0.0) / reps:>10.3f}")
            for _, _, label, *_ in _EVALUATE_PHASES:
                if label in _TOP:
                    continue
                got = stage(label, scope)
                if not got:
                    if scope is not None and label in _ESTIMATOR_STAGES:  # a timer a code move left unattached
                        print(f"  {label:<46} {'not run':>10}")
                    continue
                by = "" if list(got) == [None] else "   " + ", ".join(f"l = {d}: {t / reps:.3f}"
                                                                        for d, t in sorted(got.items()))
                pad = "  " if scope is not None else ""
                print(f"{pad}{label:<{48 - len(pad)}} {sum(got.values()) / reps:>10.3f}{by}")
        finest = res.ce2.candidates[-1].degree
        own = sum(stage(label, "CE2").get(finest, 0.0) for label in
                  ("  of which one degree's", "deviation-and-world pass", "Gaussian draws", "refit pass")) / reps
        print(f"CE2's finest candidate (l = {finest}: its ridge search, passes and draws): {own:.3f} s, "
              f"{own / tp:.1f} times the plug-in; the rest of evaluate: {te - own:.3f} s, {(te - own) / tp:.1f} times")
    for owner, attr, fn in reversed(undo):  # the markers wrap the timers: undone last-in first
        setattr(owner, attr, fn)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50000,1000000")
    ap.add_argument("--degrees", default="12,44")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--streamed", action="store_true", help="from 10 chunks instead of arrays")
    ap.add_argument("--evaluate", action="store_true", help="time socal.evaluate against the plug-in instead")
    ap.add_argument("--phases", action="store_true", help="time the stages of each call instead (with --evaluate: "
                                                          "evaluate's stages)")
    a = ap.parse_args(argv)
    if a.phases and a.evaluate:
        return evaluate_phases([int(float(x)) for x in a.sizes.split(",")], a.reps)
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
            kw = dict(degree=l, ridge=1e-3, h=1 / 16)
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
