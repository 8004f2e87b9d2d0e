"""Bias, RMSE and interval coverage of socal's CE2 and CE1 on the validation zoo, cell by cell (issue 10's grid).

For every member of :func:`socal.synthetic.validation_zoo` x h x n: R replicates of (sample with its own seed, then
``socal.ce2`` / ``socal.ce1`` with ``ci=level`` and ``upper=upper``).  Against the member's exact CE2^pert and
CE1^pert it prints the plug-in's (Eq. (cehat)) and the headline (bias-corrected) estimate's mean error and RMSE, the
interval's coverage and mean width (also in units of the headline's RMSE), the upper bound's coverage, how often the
interval contains the headline estimate, how often Lepski's rule chose a degree finer than cross-validation's
('fine'), and seconds per call.
Held-out members are printed after the tuning ones, under their own heading; a summary closes each table.
Replicates run through joblib (``--jobs``); every replicate carries its own seed, so the numbers do not depend on
the number of jobs.

    python benchmarks/coverage.py [--reps 200] [--sizes 1000,5000,50000] [--hs 1/16,1/64] [--level 0.9]
                                  [--upper 0.95] [--n-boot 200] [--jobs 2] [--members name,...] [--kind ce2,ce1]
                                  [--labels 2]   # k labels per item (the same seeds; k = 2 is the tables')
                                  [--finest L]   # experiment: Lepski's finest admissible degree set to L
                                  [--world-rows R]   # experiment: BootstrapOptions(world_rows=R)
    python benchmarks/coverage.py --timing [--sizes 50000] [--members ...]   # ce2 with and without ci, same run
"""

import argparse
import time
import zlib
from fractions import Fraction

import numpy as np

import socal
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options
from socal.parallel import iter_jobs


_ADMISSIBLE = socal.lepski.admissible_degree


def one(kind, name, h, n, rep, level, upper, n_boot, k=2, finest=None, world_rows=None):
    # the experiment knobs (rules, not socal's behaviour) are set in the worker for every call, to the default when
    # not asked for: a worker's module state outlives the call that set it
    options = BootstrapOptions() if world_rows is None else BootstrapOptions(world_rows=world_rows)
    socal.lepski.admissible_degree = _ADMISSIBLE if finest is None else (lambda n_train, ndim: finest)
    pop = socal.synthetic.validation_zoo()[name].population
    m, v, y = pop.sample(n, h=h, k=k, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, rep]))
    t0 = time.perf_counter()
    if kind == "ce2":
        res = ce_with_options("ce2", options, m, v, y, h=h, ci=level, upper=upper, n_boot=n_boot, rng=rep)
    else:
        res = ce_with_options("ce1", options, m, y, h=h, ci=level, upper=upper, n_boot=n_boot, rng=rep)
    fine = res.selection.rule.startswith("lepski")
    return (res.plugin, res.estimate, res.ci.low, res.ci.high, res.upper.value, fine, time.perf_counter() - t0)


def timing(names, hs, sizes, level, upper, n_boot, repeats=5):
    """Medians of ``repeats`` calls of ce2 on the same data, alternated: the plug-in alone (``debias=False``), the
    default call (bias-corrected), and the default call with ``ci=level, upper=upper``."""
    zoo = socal.synthetic.validation_zoo()
    print(f"{'member':<20}{'h':>6}{'n':>8}{'plug-in [s]':>12}{'plain [s]':>10}{'ci [s]':>8}{'ci/plain':>9}"
          f"{'ci/plug-in':>11}   (medians of {repeats})")
    for name in names:
        for h in hs:
            for n in sizes:
                m, v, y = zoo[name].population.sample(n, h=h, rng=0)
                calls = {"plug": dict(debias=False), "plain": dict(n_boot=n_boot),
                         "ci": dict(ci=level, upper=upper, n_boot=n_boot)}  # the plug-in draws no replicates
                times = {k: [] for k in calls}
                for r in range(repeats):
                    for k, kw in calls.items():
                        t0 = time.perf_counter()
                        socal.ce2(m, v, y, h=h, rng=r, **kw)
                        times[k].append(time.perf_counter() - t0)
                t = {k: float(np.median(x)) for k, x in times.items()}
                print(f"{name:<20}{'1/' + str(round(1 / h)):>6}{n:>8}{t['plug']:>12.3f}{t['plain']:>10.3f}"
                      f"{t['ci']:>8.3f}{t['ci'] / t['plain']:>9.2f}{t['ci'] / t['plug']:>11.1f}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--sizes", default="1000,5000,50000")
    p.add_argument("--hs", default="1/16,1/64")
    p.add_argument("--level", type=float, default=0.9)
    p.add_argument("--upper", type=float, default=0.95)
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--members", default=None, help="comma-separated zoo names (default: all)")
    p.add_argument("--kind", default="ce2,ce1")
    p.add_argument("--labels", type=int, default=2, help="labels per item (k)")
    p.add_argument("--finest", type=int, default=None,
                   help="experiment: Lepski's finest admissible degree (50 training rows per coefficient) set to this")
    p.add_argument("--world-rows", type=int, default=None,
                   help="experiment: the rows the bootstrap world's covariance moments are summed over "
                        "(BootstrapOptions.world_rows) set to this")
    p.add_argument("--timing", action="store_true", help="time ce2 with and without ci instead")
    a = p.parse_args()
    zoo = socal.synthetic.validation_zoo()
    names = a.members.split(",") if a.members else list(zoo)
    hs = [float(Fraction(s)) for s in a.hs.split(",")]
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    if a.timing:
        return timing(names, hs, sizes, a.level, a.upper, a.n_boot)
    print(f"{a.reps} replicates per cell, {a.level:.0%} intervals, {a.upper:.0%} upper bounds, n_boot = {a.n_boot}, "
          f"{a.labels} labels per item" + (f", Lepski's finest admissible degree {a.finest}" if a.finest else "")
          + (f", world covariance on {a.world_rows} rows" if a.world_rows else ""))
    head = (f"{'kind':<5}{'member':<19}{'h':>5}{'n':>8}{'truth':>8}{'bias plug':>10}{'bias est':>9}{'RMSE plug':>10}"
            f"{'RMSE est':>9}{'cover':>6}{'upper':>6}{'width':>8}{'w/RMSE':>7}{'holds':>6}{'fine':>5}{'s/call':>7}")
    for held_out in (False, True):
        chosen = [k for k in names if zoo[k].held_out == held_out]
        if not chosen:
            continue
        print("\nheld-out members (never used for tuning)" if held_out else "\ntuning members")
        print(head)
        summary = {}
        for kind in a.kind.split(","):
            for n in sizes:
                for name in chosen:
                    pop = zoo[name].population
                    for h in hs:
                        truth = (pop.ce2(h) if kind == "ce2" else pop.ce1(h)).value
                        jobs = [(kind, name, h, n, r, a.level, a.upper, a.n_boot, a.labels, a.finest, a.world_rows)
                                for r in range(a.reps)]
                        plug, est, lo, hi, up, fine, sec = np.array(list(iter_jobs(one, jobs, n_jobs=a.jobs))).T
                        rmse = np.sqrt(np.mean((est - truth) ** 2))
                        cover = np.mean((lo <= truth) & (truth <= hi))
                        cover_up = np.mean(truth <= up)
                        print(f"{kind:<5}{name:<19}{'1/' + str(round(1 / h)):>5}{n:>8}{truth:>8.4f}"
                              f"{np.mean(plug - truth):>+10.4f}{np.mean(est - truth):>+9.4f}"
                              f"{np.sqrt(np.mean((plug - truth) ** 2)):>10.4f}{rmse:>9.4f}{cover:>6.2f}{cover_up:>6.2f}"
                              f"{np.mean(hi - lo):>8.4f}{np.mean(hi - lo) / rmse:>7.1f}"
                              f"{np.mean((lo <= est) & (est <= hi)):>6.2f}{np.mean(fine):>5.2f}{np.median(sec):>7.2f}",
                              flush=True)
                        s_ = summary.setdefault((kind, n), [1.0, 1.0, 0.0, 1.0])
                        s_[0], s_[1] = min(s_[0], cover), min(s_[1], cover_up)
                        s_[2] = max(s_[2], abs(np.mean(est - truth)))
                        s_[3] = min(s_[3], np.mean((lo <= est) & (est <= hi)))
        for (kind, n), (c, u, b, holds) in summary.items():
            print(f"summary {kind} n={n}: coverage >= {c:.2f} ({a.level:.0%} interval), >= {u:.2f} ({a.upper:.0%} "
                  f"upper bound); max |mean error| {b:.4f}; interval holds the estimate in {holds:.0%} of replicates")


if __name__ == "__main__":
    main()
