"""Experiment 1 (Section 7, Figure 1; Appendix "Experiment 1"): the rate of the polynomial estimator and baselines.

DGP: :class:`socal.synthetic.GaussianMixtureTask`; predictor: a 5-member MLP ensemble (4-64-64-1, 30 epochs) trained
once on 5,000 fresh samples, scores clipped to the feasible region, sech-perturbed coordinate-wise.  For each seed,
three i.i.d. splits of 50,000 (train, hyper, valid); perturbations are redrawn per h, raw scores and labels are
shared across h; each n uses the first n items of each split.  Estimators:

* ``bucketing``, ``nadaraya-watson``: fit on train[:n], constant chosen on hyper[:n], CE2 on valid[:n];
* ``poly-val``: tensor-Chebyshev ridge fit on train[:n], (degree, alpha) chosen on hyper[:n], refit on both, CE2
  on valid[:n];
* ``poly-cv``: :func:`socal.ce2` on valid[:n] (5-fold CV, the paper's "ERM, CV").

Ground truth CE2^pert per h from :func:`socal.truth.sample_truth` (2^18 Sobol points, two replicates).
The polynomial degree schedule is the paper's: min(l_paper, cap) halving to 4, with the paper's caps 44 at h = 1/16 and
88 at h = 1/64 (``MAX_DEGREE``), without the h-floor of socal.ce2's default.
"""

from __future__ import annotations

import csv
import math
import pathlib

import numpy as np

from ..files import atomic_write
from ..fitting import fit_calibration
from ..sufficient import target_classes, targets
from ..deviations import ce_value
from ..parallel import iter_jobs
from .._validation import check_bool, check_int, check_n_jobs, check_rng, check_sizes
from ..baselines import select_baseline
from ..degrees import resolve_alphas, resolve_degrees
from ..estimators import ce2
from ..perturb import perturb_from_stream
from ..synthetic import GaussianMixtureTask
from ..truth import sample_truth
from ._ensemble import MLPEnsemble

__all__ = ["make_setup", "run_rate", "slopes", "slope_errors", "summarise", "plot_rate", "ESTIMATORS", "SIZES", "HS",
           "PAPER_SLOPES"]

ESTIMATORS = ("bucketing", "nadaraya-watson", "poly-val", "poly-cv")
SIZES = (500, 1000, 2000, 5000, 10_000, 20_000, 50_000)
HS = (1 / 16, 1 / 64)
SPLIT = 50_000
MAX_DEGREE = {1 / 16: 44, 1 / 64: 88}  # the paper's caps (Appendix "Experiment 1")


def _cap(h):
    """The degree cap at bandwidth h: the paper's where it gave one, else 44 from h = 1/16 up and 88 below."""
    return MAX_DEGREE.get(h, 44 if h >= 1 / 16 else 88)
PAPER_SLOPES = "polynomial about -0.70 at both h; bucketing and NW -0.33 to -0.55"
FIELDS = ("seed", "h", "n", "estimator", "estimate", "truth", "abs_error")


def make_setup(rng=0, *, log2_sobol=18):
    """The DGP, the ensemble (trained once) and the ground truth per h."""
    task = GaussianMixtureTask(rng)
    g = np.random.default_rng([rng, 1])
    x = task.sample_x(5000, g)
    ens = MLPEnsemble(5, epochs=30, rng=g).fit(x, task.labels(x, k=1, rng=g)[:, 0])

    def sampler(u):
        xx = task.from_uniform(u)
        m, v = ens.scores(xx)
        return m, v, task.fstar(xx)

    sampler.dim = task.dim
    truth = {h: sample_truth(sampler, h, log2_n=log2_sobol, replicates=2, rng=np.random.default_rng([rng, 2]))
             for h in HS}
    return {"task": task, "ensemble": ens, "truth": {h: (t.ce2, t.error) for h, t in truth.items()}}


def _plugin(calmap, m, v):
    return ce_value(calmap.predict(m, v), m, v)


def _poly_val(tr, hy, va, h):
    m = np.r_[tr[0], hy[0]]
    v = np.r_[tr[1], hy[1]]
    a, k = np.r_[tr[2], hy[2]], np.full(len(m), 2.0)
    n_train = len(tr[0])
    degs, _ = resolve_degrees("poly-val", None, h, n_train, n_train, _cap(h), 2, use_h_floor=False)
    alphas, _ = resolve_alphas("poly-val", None)
    zs = np.column_stack(targets(a, k))
    mask = np.r_[np.zeros(n_train, bool), np.ones(len(hy[0]), bool)]
    fit = fit_calibration(m, v, zs, degrees=degs, alphas=alphas, folds=5, holdout=None, rng=None, select=True,
                          classes=target_classes(a, k, 2), validation=mask)
    return _plugin(fit.calmap, va[0], va[1])


def _baseline(kind, tr, hy, va, h):
    def trip(s):
        return s[0], s[1], np.column_stack(targets(s[2], np.full(len(s[0]), 2.0)))

    fit, _, _ = select_baseline(kind, trip(tr), trip(hy), h=h)
    return ce_value(np.clip(fit.predict(va[0], va[1]), 0, 1), va[0], va[1])


def run_seed(setup, seed, sizes=SIZES, hs=HS, estimators=ESTIMATORS):
    """All rows of one seed (list of dicts with FIELDS)."""
    task, ens = setup["task"], setup["ensemble"]
    g = np.random.default_rng([seed, 11])
    nmax = max(sizes)
    splits = []
    for _ in range(3):  # train, hyper, valid
        x = task.sample_x(nmax, g)
        m, v = ens.scores(x)
        splits.append((m, v, task.labels(x, k=2, rng=g).sum(axis=1)))
    rows = []
    for h in hs:
        pert = [perturb_from_stream(m, v, h=h, rng=g) + (a,) for m, v, a in splits]
        truth = setup["truth"][h][0]
        for n in sizes:
            tr, hy, va = ([arr[:n] for arr in s] for s in pert)
            for est in estimators:
                if est == "poly-cv":
                    n_tr = n - -(-n // 5)
                    degs, _ = resolve_degrees("poly-cv", None, h, n, n_tr, _cap(h), 2, use_h_floor=False)
                    value = ce2(va[0], va[1], counts=(va[2], np.full(n, 2.0)), h=h, degree=list(degs),
                                debias=False, rng=seed).estimate  # the paper's plug-in (Eq. (cehat))
                elif est == "poly-val":
                    value = _poly_val(tr, hy, va, h)
                else:
                    value = _baseline("bucketing" if est == "bucketing" else "kernel", tr, hy, va, h)
                rows.append({"seed": seed, "h": h, "n": n, "estimator": est, "estimate": value, "truth": truth,
                             "abs_error": abs(value - truth)})
    return rows


def _read(path):
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return [{**r, "seed": int(r["seed"]), "h": float(r["h"]), "n": int(r["n"]), "estimate": float(r["estimate"]),
                 "truth": float(r["truth"]), "abs_error": float(r["abs_error"])} for r in csv.DictReader(fh)]


def run_rate(*, seeds=20, sizes=SIZES, out="out/rate", n_jobs=2, setup_seed=0, log2_sobol=18, progress=False):
    """Run (or resume) the experiment; ``out/rate.csv`` is rewritten atomically after each seed, so a rerun resumes
    from the seeds finished."""
    func = "run_rate"
    seeds = check_int(seeds, "seeds", func, 1, 100_000)
    sizes = check_sizes(sizes, "sizes", func, 10, 10**9)
    n_jobs = check_n_jobs(n_jobs, func)
    check_bool(progress, "progress", func)
    check_rng(setup_seed, "run_rate", "setup_seed")
    log2_sobol = check_int(log2_sobol, "log2_sobol", func, 4, 24)
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "rate.csv"
    rows = _read(path)
    expected = len(sizes) * len(HS) * len(ESTIMATORS)
    done = {s for s in range(seeds) if sum(r["seed"] == s and r["n"] in sizes for r in rows) >= expected}
    todo = [s for s in range(seeds) if s not in done]
    if todo:
        setup = make_setup(setup_seed, log2_sobol=log2_sobol)
        results = iter_jobs(run_seed, [(setup, s, sizes) for s in todo], n_jobs=n_jobs, progress=progress,
                           desc="seeds")
        for res in results:
            rows += res
            # the whole table, atomically, after each seed: a kill leaves the seeds finished so far, never a torn
            # row (an appended row cut mid-line made the next run's read fail)
            with atomic_write(path, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=FIELDS)
                w.writeheader()
                w.writerows({k: r[k] for k in FIELDS} for r in rows)
    return [r for r in rows if r["seed"] < seeds and r["n"] in sizes]


def summarise(rows):
    """{(h, estimator): {n: (mean abs error, t-90% half-width, seeds)}}."""
    from scipy import stats

    out = {}
    for r in rows:
        out.setdefault((r["h"], r["estimator"]), {}).setdefault(r["n"], []).append(r["abs_error"])
    summ = {}
    for key, by_n in out.items():
        summ[key] = {}
        for n, errs in sorted(by_n.items()):
            e = np.array(errs)
            half = stats.t.ppf(0.95, len(e) - 1) * e.std(ddof=1) / math.sqrt(len(e)) if len(e) > 1 else float("nan")
            summ[key][n] = (float(e.mean()), float(half), len(e))
    return summ


def slopes(rows):
    """Least-squares slope of log10(mean abs error) on log10(n), per (h, estimator)."""
    out = {}
    for key, by_n in summarise(rows).items():
        ns = np.array(sorted(by_n))
        mu = np.array([by_n[n][0] for n in ns])
        out[key] = float(np.polyfit(np.log10(ns), np.log10(mu), 1)[0])
    return out


def slope_errors(rows):
    """Standard error of each :func:`slopes` value over the seeds, per (h, estimator): the leave-one-seed-out
    jackknife, sqrt((S - 1)/S sum_i (s_(i) - mean)^2) over the S slopes with seed i left out (NaN below 3 seeds).

    Why the jackknife: each seed is an independent replicate of the whole experiment (its own ensemble draws, labels
    and perturbation), and the slope is a smooth function of the per-n mean errors over the seeds, so the seeds'
    jackknife estimates its variance (Efron & Stein, Ann. Statist. 9, 1981: conservative in expectation).  A
    residual-based error of the fit in n would miss the seeds' shared noise.  With 3 seeds it rests on 2 degrees of
    freedom: read it as the size of the slope's uncertainty, not to a second digit."""
    seeds = sorted({r["seed"] for r in rows})
    S = len(seeds)
    full = slopes(rows)
    if S < 3:
        return {key: float("nan") for key in full}
    left = [slopes([r for r in rows if r["seed"] != s]) for s in seeds]
    out = {}
    for key in full:
        th = np.array([lo[key] for lo in left])
        out[key] = float(np.sqrt((S - 1) / S * np.sum((th - th.mean()) ** 2)))
    return out


def plot_rate(rows, axes=None):
    """Figure 1: mean |CE2-hat - CE2^pert| against n, Student-t 90% band, slopes in the legend."""
    import matplotlib.pyplot as plt

    summ, sl = summarise(rows), slopes(rows)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, h in zip(axes, HS):
        for est in ESTIMATORS:
            if (h, est) not in summ:
                continue
            by_n = summ[(h, est)]
            ns = np.array(sorted(by_n))
            mu = np.array([by_n[n][0] for n in ns])
            half = np.array([by_n[n][1] for n in ns])
            ax.plot(ns, mu, "o-", label=f"{est} (slope {sl[(h, est)]:.2f})")
            ax.fill_between(ns, np.maximum(mu - half, 1e-5), mu + half, alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_title(f"h = 1/{round(1 / h)}")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("|CE2-hat - CE2^pert|")
    return axes


def report(rows, seconds, out):
    """The text ``socal reproduce rate`` prints: mean |CE2-hat - CE2^pert| per h, estimator and n, with slopes."""
    summ, sl, se = summarise(rows), slopes(rows), slope_errors(rows)
    lines = [f"Experiment 1: mean |CE2-hat - CE2^pert| ({seconds:.0f} s; rows in {out})"]
    for h in HS:
        ns = sorted(summ[(h, ESTIMATORS[0])])
        lines.append(f"  h = 1/{round(1 / h)}   " + "".join(f"{n:>9}" for n in ns) + "    slope  (jackknife SE)")
        for est in ESTIMATORS:
            cells = "".join(f"{summ[(h, est)][n][0]:>9.4f}" for n in ns)
            err = "" if np.isnan(se[(h, est)]) else f" ± {se[(h, est)]:.2f}"
            lines.append(f"    {est:<16}{cells}   {sl[(h, est)]:6.2f}{err}")
    lines.append(f"  paper: {PAPER_SLOPES}")
    return "\n".join(lines)
