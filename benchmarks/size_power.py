"""Size and power of socal.calibration_test, with first-order peers on the same draws; its cost against one pass.

    python benchmarks/size_power.py --size          # size table: every calibrated population x n, 2,000 replicates
    python benchmarks/size_power.py --power         # power curves (docs/_static/power.png) and their table
    python benchmarks/size_power.py --timing        # calibration_test vs one SufficientStats pass, n = 1e6
    python benchmarks/size_power.py --sandwich      # why the null covariance: its size against a sandwich's
    python benchmarks/size_power.py --labels 3,10,50   # size with k labels per item (the covariance's free moments)
    python benchmarks/size_power.py --power --labels 2,3,10   # power with k labels per item
    python benchmarks/size_power.py --mixed-labels 3,10,100,1000   # size with k drawn per item from 2..K
    python benchmarks/size_power.py --oracle 10,50   # k labels: the pooled covariance against the exact one
    python benchmarks/size_power.py --power-in-k 2,3,5,10,50,100,0   # power in k, means calibrated or off

Populations with exact truth: the calibrated members of the validation zoo (calibrated-few, calibrated-many,
nearly-calibrated) and smooth ensemble-like calibrated populations (socal.synthetic.EnsembleLikePopulation) with
average Var f* in {1e-4, 1e-3, 1e-2, 0.05}.  Every replicate draws k = 2 labels per item; on the same draw the script
runs the order-2 test (both labels), the order-1 test (both labels, and the first label alone) and the two classical
first-order tests on the first label: Spiegelhalter's z (two-sided) and Hosmer-Lemeshow (10 groups by deciles of
the mean, chi-square on 10 df: the predictions are external, not fitted).  Seeds: replicate r of cell c draws from
numpy.random.default_rng([c, r]).  ``--labels`` draws k labels per item instead (seeds [c, k, r]), on five of these
populations and a calibrated law far from any Beta (:class:`BernoulliOrPoint`), and runs the order-2 and order-1
tests.  ``--mixed-labels`` draws each item's k uniformly from 2..K (seeds [9100, K, r]), on f* = m and on the
ensemble-like population with average Var f* 0.01, and runs the order-2 test on the counts.  ``--oracle`` splits
the k-label test's excess size into what the pooled covariance costs and what remains: on the Bernoulli-or-m
populations, whose E[f*^3 | S] and E[f*^4 | S] are known, it runs the test as it is and with the exact covariance
in its place (the exact moments decorrelate, and nothing is pooled), on the same draws (seeds [c, k, r] as
``--labels``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats

import socal
from socal.synthetic import EnsembleLikePopulation, validation_zoo

ROOT = pathlib.Path(__file__).resolve().parents[1]
METHODS = ("order 2", "order 1", "order 1 (1 label)", "Spiegelhalter z", "Hosmer-Lemeshow")


def populations_null():
    zoo = validation_zoo()
    pops = {name: zoo[name].population for name in ("calibrated-few", "calibrated-many", "nearly-calibrated")}
    for lvl in (1e-4, 1e-3, 1e-2, 0.05):
        pops[f"ensemble Var f* {lvl:g}"] = EnsembleLikePopulation(lvl)
    return pops


def populations_alt():
    base = 0.01
    return {
        "variances x0.1": EnsembleLikePopulation(base, var_factor=0.1),
        "variances x0.5": EnsembleLikePopulation(base, var_factor=0.5),
        "variances x2": EnsembleLikePopulation(base, var_factor=2.0),
        "means +0.02": EnsembleLikePopulation(base, mean_shift=0.02),
        "means tempered T=1.25": EnsembleLikePopulation(base, temperature=1.25),
        "variances x0.3 where m >= 0.7": EnsembleLikePopulation(base, var_factor=0.3, region_from=0.7),
    }


def spiegelhalter(m, y):
    """Spiegelhalter's z for labels y of means m (two-sided p-value)."""
    w = 1.0 - 2.0 * m
    z = np.sum((y - m) * w) / np.sqrt(np.sum(w * w * m * (1.0 - m)))
    return 2.0 * stats.norm.sf(abs(z))


def hosmer_lemeshow(m, y, groups=10):
    """Hosmer-Lemeshow's C-hat: groups of equal size by the sorted mean, chi-square on ``groups`` df.

    The predictions are given, not fitted to these labels (external validation), so the reference has ``groups``
    degrees of freedom; the familiar groups - 2 is for a logistic model fitted on the same data, and with fixed
    predictions it rejected 10-14% of calibrated draws at level 0.05.
    """
    order = np.argsort(m, kind="stable")
    H = 0.0
    for idx in np.array_split(order, groups):
        o, e, n = y[idx].sum(), m[idx].sum(), idx.size
        denom = e * (1.0 - e / n)
        if denom > 0:
            H += (o - e) ** 2 / denom
    return stats.chi2.sf(H, groups)


def pvalues(m, v, y):
    return (socal.calibration_test(m, v, y).pvalue,
            socal.calibration_test(m, None, y, order=1).pvalue,
            socal.calibration_test(m, None, y[:, :1], order=1).pvalue,
            spiegelhalter(m, y[:, 0]),
            hosmer_lemeshow(m, y[:, 0]))


def run_cell(args):
    cell, pop, n, reps, offset = args
    out = np.empty((reps, len(METHODS)))
    for r in range(reps):
        m, v, _, y = pop.sample_raw(n, rng=np.random.default_rng([cell, offset + r]))
        out[r] = pvalues(m, v, y)
    return out


def run(pops, sizes, reps, jobs, *, only=None, offset=0, size_index=None):
    """Every (population, n) cell; cell c = 1000 i + j (population i, size j of the full lists) draws replicates
    offset .. offset + reps - 1 from default_rng([c, r]), so ``only`` and ``offset`` rerun a cell with fresh ones."""
    tasks, keys = [], []
    for i, (name, pop) in enumerate(pops.items()):
        if only is not None and name != only:
            continue
        for j, n in enumerate(sizes):
            jj = j if size_index is None else size_index[n]
            tasks.append((1000 * i + jj, pop, n, reps, offset))
            keys.append((name, n))
    t0 = time.perf_counter()
    results = {}
    with ProcessPoolExecutor(jobs) as ex:
        for done, (key, ps) in enumerate(zip(keys, ex.map(run_cell, tasks)), 1):
            results[key] = ps
            print(f"  [{done}/{len(tasks)}] {key[0]}, n = {key[1]}: {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                  flush=True)
    return results


def size_table(results, reps):
    lines = [f"Rejection rate of calibrated populations ({reps} replicates per cell; asked: within alpha +- 0.015).",
             "",
             "| population | n | " + " | ".join(f"{m} @0.05 / @0.10" for m in METHODS) + " |",
             "| --- | --- | " + " | ".join("---" for _ in METHODS) + " |"]
    worst = {m: 0.0 for m in METHODS}
    for (name, n), ps in results.items():
        cells = []
        for j, meth in enumerate(METHODS):
            r05, r10 = np.mean(ps[:, j] < 0.05), np.mean(ps[:, j] < 0.10)
            worst[meth] = max(worst[meth], abs(r05 - 0.05), abs(r10 - 0.10))
            cells.append(f"{r05:.3f} / {r10:.3f}")
        lines.append(f"| {name} | {n:,} | " + " | ".join(cells) + " |")
    lines += ["", "Largest |rejection rate - alpha| over all cells: "
              + ", ".join(f"{m} {w:.3f}" for m, w in worst.items())]
    return "\n".join(lines), worst


def power_table(results, sizes):
    lines = ["| alternative | method | " + " | ".join(f"{n:,}" for n in sizes) + " |",
             "| --- | --- | " + " | ".join("---" for _ in sizes) + " |"]
    names = list(dict.fromkeys(k[0] for k in results))
    for name in names:
        for j, meth in enumerate(METHODS):
            row = [np.mean(results[(name, n)][:, j] < 0.05) for n in sizes]
            lines.append(f"| {name} | {meth} | " + " | ".join(f"{p:.2f}" for p in row) + " |")
    return "\n".join(lines)


def power_figure(results, sizes, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(k[0] for k in results))
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True, sharey=True)
    styles = {"order 2": ("C3", "-", "o"), "order 1": ("C0", "-", "s"), "order 1 (1 label)": ("C0", ":", "s"),
              "Spiegelhalter z": ("C2", "--", "^"), "Hosmer-Lemeshow": ("C7", "--", "v")}
    for ax, name in zip(axes.ravel(), names):
        for j, meth in enumerate(METHODS):
            c, ls, mk = styles[meth]
            ax.plot(sizes, [np.mean(results[(name, n)][:, j] < 0.05) for n in sizes], color=c, ls=ls, marker=mk,
                    ms=4, label=meth)
        ax.axhline(0.05, color="k", lw=0.6, ls=":")
        ax.set_xscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("n (items, 2 labels each)")
    for ax in axes[:, 0]:
        ax.set_ylabel("rejection rate at level 0.05")
    axes[0, 0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Power of socal.calibration_test (orders 2 and 1) and first-order peers; ensemble-like predictor, "
                 "average Var f* = 0.01", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


class BernoulliOrPoint:
    """A calibrated population whose f* is far from any Beta law: mean m ~ U(0.1, 0.9), and f* = Bernoulli(m) with
    probability ``lam``, else m (Var f* = lam m (1 - m), reported exactly).  Its E[f*^4 | S] is the largest of the
    laws with these two moments that keep an atom at m: the hardest case for a covariance that must estimate it."""

    def __init__(self, lam):
        self.lam = lam

    def sample_raw(self, n, k=2, rng=None):
        rng = np.random.default_rng(rng)
        m = rng.uniform(0.1, 0.9, n)
        f = np.where(rng.random(n) < self.lam, (rng.random(n) < m).astype(float), m)
        y = (rng.random((n, k)) < f[:, None]).astype(float)
        return m, self.lam * m * (1.0 - m), f, y


def _labels_cell(args):
    cell, pop, n, k, reps = args
    out = np.empty((reps, 2))
    for r in range(reps):
        m, v, _, y = pop.sample_raw(n, k=k, rng=np.random.default_rng([cell, k, r]))
        out[r] = [socal.calibration_test(m, v, y).pvalue, socal.calibration_test(m, None, y, order=1).pvalue]
    return out


def _rates(p):
    """Rejection rates at 0.05 and 0.10 of p-values ``p``, as printed in the tables."""
    return f"{np.mean(p < 0.05):.3f} / {np.mean(p < 0.10):.3f}"


def _map(fn, tasks, jobs):
    """``fn`` over ``tasks`` on ``jobs`` processes, results in the tasks' order."""
    with ProcessPoolExecutor(jobs) as ex:
        return list(ex.map(fn, tasks))


def _head(title, columns):
    """A table's title line and its markdown header."""
    print(title + "\n")
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" for _ in columns) + " |")


def _label_populations():
    """The populations of the k-label tables, in their order: population i draws from seeds [7000 + i, k, r]."""
    pops = populations_null()
    pops = {nm: pops[nm] for nm in ("calibrated-few", "calibrated-many", "nearly-calibrated",
                                   "ensemble Var f* 0.01", "ensemble Var f* 0.0001")}
    pops["Bernoulli(m) or m, lam 0.5"] = BernoulliOrPoint(0.5)
    pops["Bernoulli(m) or m, lam 0.2"] = BernoulliOrPoint(0.2)
    return pops


def labels(ks, n, reps, jobs):
    """Size at 0.05 / 0.10 with k labels per item: with k >= 3 the null leaves E[f*^3 | S] and E[f*^4 | S] free,
    and the order-2 test pools the covariance they enter from the rows' residual products, so its size depends on
    k and on the law of f* in the level sets."""
    pops = _label_populations()
    tasks = [(7000 + i, pop, n, k, reps) for i, pop in enumerate(pops.values()) for k in ks]
    res = _map(_labels_cell, tasks, jobs)
    _head(f"Rejection rate of calibrated populations with k labels per item, n = {n:,}, {reps} replicates per "
          f"cell, at 0.05 / 0.10:", ["population", "k", "order 2", "order 1"])
    names = list(pops)
    for (cell, _, _, k, _), ps in zip(tasks, res):
        cols = " | ".join(_rates(ps[:, j]) for j in range(2))
        print(f"| {names[cell - 7000]} | {k} | {cols} |")


def _oracle_cell(args):
    cell, lam, n, k, reps = args
    from socal import testing

    pooled = (testing.beta_moments, testing._many_label_covariance)

    def exact(p1, p2):  # f* = m with probability 1 - lam, Bernoulli(m) with lam: E f*^j = (1 - lam) m^j + lam m
        return tuple([p1] + [(1.0 - lam) * p1 ** j + lam * p1 for j in (2, 3, 4)])

    pop = BernoulliOrPoint(lam)
    out = np.empty((reps, 2))
    try:
        for r in range(reps):
            m, v, _, y = pop.sample_raw(n, k=k, rng=np.random.default_rng([cell, k, r]))
            testing.beta_moments, testing._many_label_covariance = pooled
            out[r, 0] = socal.calibration_test(m, v, y).pvalue
            # the exact law's moments decorrelate, and its covariance needs no pooled correction
            testing.beta_moments, testing._many_label_covariance = exact, lambda S, occ, *_: (S[4, occ], S[5, occ])
            out[r, 1] = socal.calibration_test(m, v, y).pvalue
    finally:  # a worker process runs other cells after this one
        testing.beta_moments, testing._many_label_covariance = pooled
    return out


def oracle(ks, n, reps, jobs):
    """Size at 0.05 / 0.10 of the k-label order-2 test as it is and with the exact null covariance, same draws."""
    # the --labels table's own seeds: the Bernoulli-or-m populations at their places in its list
    cells = {name: (7000 + i, pop.lam) for i, (name, pop) in enumerate(_label_populations().items())
             if isinstance(pop, BernoulliOrPoint)}
    tasks = [(cell, lam, n, k, reps) for cell, lam in cells.values() for k in ks]
    res = _map(_oracle_cell, tasks, jobs)
    _head(f"Order-2 test with k labels per item, n = {n:,}, {reps} replicates per cell, at 0.05 / 0.10:",
          ["population", "k", "pooled covariance (socal)", "exact covariance"])
    names = {cell: name for name, (cell, _) in cells.items()}
    for (cell, _, _, k, _), ps in zip(tasks, res):
        print(f"| {names[cell]} | {k} | {_rates(ps[:, 0])} | {_rates(ps[:, 1])} |")


def _mixed_cell(args):
    K, level, n, reps = args
    out = np.empty(reps)
    for r in range(reps):
        rng = np.random.default_rng([9100, K, r])
        if level:
            m, v, f, _ = EnsembleLikePopulation(level).sample_raw(n, rng=rng)
        else:
            m = rng.uniform(0.05, 0.95, n)
            v, f = np.zeros(n), m
        k = rng.integers(2, K + 1, n)
        a = rng.binomial(k, f)
        out[r] = socal.calibration_test(m, v, counts=(a.astype(float), k.astype(float))).pvalue
    return out


def labels_mixed(tops, n, reps, jobs):
    """Size at 0.05 / 0.10 with each item's k drawn uniformly from 2..K: rows with k = 2 keep the exact null
    covariance, the others the pooled one, in one statistic."""
    tasks = [(K, level, n, reps) for level in (0.0, 0.01) for K in tops]
    res = _map(_mixed_cell, tasks, jobs)
    _head(f"Rejection rate of calibrated populations, k per item uniform on 2..K, n = {n:,}, {reps} replicates per "
          f"cell, order 2 at 0.05 / 0.10:", ["population", "K", "order 2"])
    for (K, level, _, _), ps in zip(tasks, res):
        name = "f* = m" if not level else f"ensemble Var f* {level:g}"
        print(f"| {name} | {K} | {_rates(ps)} |")


def labels_power(ks, sizes, reps, jobs):
    """Power at 0.05 with k labels per item, on the alternatives of the power table (replicate r draws from
    default_rng([cell, k, r]), as ``labels`` does; the sizes share these seeds).  The k = 2 column is the power
    table's rule (the null's exact covariance); with k >= 3 the rows are decorrelated and their covariance pooled
    (``socal.testing``), and the columns show what the extra labels buy."""
    pops = populations_alt()
    tasks = [(8000 + i, pop, n, k, reps) for i, pop in enumerate(pops.values()) for n in sizes for k in ks]
    res = _map(_labels_cell, tasks, jobs)
    _head(f"Power at level 0.05 with k labels per item, {reps} replicates per cell, order 2 / order 1:",
          ["alternative", "n"] + [f"k = {k}" for k in ks])
    names, rows = list(pops), {}
    for (cell, _, n, k, _), ps in zip(tasks, res):
        rows.setdefault((cell, n), []).append(f"{np.mean(ps[:, 0] < 0.05):.2f} / {np.mean(ps[:, 1] < 0.05):.2f}")
    for (cell, n), cols in rows.items():
        print(f"| {names[cell - 8000]} | {n:,} | " + " | ".join(cols) + " |")


def populations_k_alt(level=0.02):
    """The alternatives of the power table in k: variances too small, alone and with means that are also off (the
    case where the variance part went blind with many labels: issue 62)."""
    return {
        "variances x0.1": EnsembleLikePopulation(level, var_factor=0.1),
        "variances x0.1, means +0.15": EnsembleLikePopulation(level, var_factor=0.1, mean_shift=0.15),
        "variances x0.1, means tempered T=1.6": EnsembleLikePopulation(level, var_factor=0.1, temperature=1.6),
        "variances x0.7": EnsembleLikePopulation(level, var_factor=0.7),
        "variances x0.7, means +0.03": EnsembleLikePopulation(level, var_factor=0.7, mean_shift=0.03),
        "variances x0.7, means tempered T=1.15": EnsembleLikePopulation(level, var_factor=0.7, temperature=1.15),
    }


def _power_k_cell(args):
    cell, pop, n, k, reps = args
    out = np.empty((reps, 3))
    for r in range(reps):
        rng = np.random.default_rng([cell, k, r])
        if k == 0:  # k per item uniform on 2..100
            m, v, f, _ = pop.sample_raw(n, k=1, rng=rng)
            kk = rng.integers(2, 101, n).astype(float)
            res = socal.calibration_test(m, v, counts=(rng.binomial(kk.astype(int), f).astype(float), kk))
        else:
            m, v, _, y = pop.sample_raw(n, k=k, rng=rng)
            res = socal.calibration_test(m, v, y)
        nested = res.statistic >= res.mean_part.statistic * (1 - 1e-9) - 1e-9
        out[r] = [res.pvalue, res.variance_part.pvalue, float(nested)]
    return out


def power_in_k(ks, n, reps, jobs):
    """Power at level 0.05 of the joint test and of its variance part, by k (0: k per item uniform on 2..100), on
    alternatives whose variances are too small and whose means are calibrated, shifted or tempered; and the count
    of replicates whose joint statistic fell below its means-only part (never, when the split is nested)."""
    pops = populations_k_alt()
    tasks = [(8500 + i, pop, n, k, reps) for i, pop in enumerate(pops.values()) for k in ks]
    res = _map(_power_k_cell, tasks, jobs)
    label = lambda k: "k 2..100" if k == 0 else f"k = {k}"
    _head(f"Power at level 0.05 by labels per item, n = {n:,}, {reps} replicates per cell, joint / variance part:",
          ["alternative"] + [label(k) for k in ks])
    names, rows, broken = list(pops), {}, 0
    for (cell, _, _, k, _), ps in zip(tasks, res):
        rows.setdefault(cell, []).append(f"{np.mean(ps[:, 0] < 0.05):.2f} / {np.mean(ps[:, 1] < 0.05):.2f}")
        broken += int(reps - ps[:, 2].sum())
    for cell, cols in rows.items():
        print(f"| {names[cell - 8500]} | " + " | ".join(cols) + " |")
    print(f"\nReplicates with T below T_mean: {broken} of {len(tasks) * reps}")


def _sandwich_cell(args):
    cell, pop, n, reps = args
    out = np.empty((reps, 4))
    for r in range(reps):
        m, v, _, y = pop.sample_raw(n, rng=np.random.default_rng([cell, r]))
        out[r] = [socal.calibration_test(m, v, y).pvalue,
                  socal.calibration_test(m, v, y, covariance="sandwich").pvalue,
                  socal.calibration_test(m, None, y, order=1).pvalue,
                  socal.calibration_test(m, None, y, order=1, covariance="sandwich").pvalue]
    return out


def sandwich(reps, jobs):
    """Size at 0.05 of the null covariance (the default) against the sandwich, orders 2 and 1, on the same draws."""
    pops = populations_null()
    names = ["calibrated-few", "ensemble Var f* 0.01", "ensemble Var f* 0.0001"]
    sizes = (500, 2000, 10000)
    tasks = [(5000 + 10 * i + j, pops[nm], n, reps) for i, nm in enumerate(names) for j, n in enumerate(sizes)]
    res = _map(_sandwich_cell, tasks, jobs)
    _head(f"Rejection rate at 0.05 of calibrated populations, {reps} replicates per cell:",
          ["population", "n", "order 2 null", "order 2 sandwich", "order 1 null (pooled)", "order 1 sandwich"])
    for (_, pop, n, _), ps in zip(tasks, res):
        name = next(k for k, p in pops.items() if p is pop)
        print(f"| {name} | {n:,} | " + " | ".join(f"{np.mean(ps[:, j] < 0.05):.3f}" for j in range(4)) + " |")


def timing(n, repeats):
    """calibration_test against one SufficientStats pass (degree 44, the estimators' default cap), same data."""
    pop = EnsembleLikePopulation(0.01)
    m, v, _, y = pop.sample_raw(n, rng=0)
    rows = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        socal.calibration_test(m, v, y)
        t1 = time.perf_counter()
        socal.SufficientStats(max_degree=44).update(m, np.clip(v, 0, 0.25), y)
        t2 = time.perf_counter()
        socal.SufficientStats(max_degree=12).update(m, np.clip(v, 0, 0.25), y)
        t3 = time.perf_counter()
        rows.append((t1 - t0, t2 - t1, t3 - t2))
    med = np.median(np.array(rows), axis=0)
    print(f"n = {n:,}, medians of {repeats}: calibration_test {med[0]:.3f} s; one SufficientStats pass at degree 44 "
          f"{med[1]:.3f} s (ratio {med[0] / med[1]:.2f}); at degree 12 {med[2]:.3f} s (ratio {med[0] / med[2]:.2f})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", action="store_true")
    p.add_argument("--power", action="store_true")
    p.add_argument("--timing", action="store_true")
    p.add_argument("--sandwich", action="store_true")
    p.add_argument("--labels", default=None, help="comma-separated k: the size with k labels per item")
    p.add_argument("--mixed-labels", default=None, help="comma-separated K: the size with k per item from 2..K")
    p.add_argument("--power-in-k", default=None, help="comma-separated k (0: k per item from 2..100): power of the "
                   "joint test and its variance part against variances too small, the means calibrated or off")
    p.add_argument("--oracle", default=None, help="comma-separated k: the pooled covariance against the exact one")
    p.add_argument("--reps", type=int, default=None, help="replicates per cell (size 2000, power 500)")
    p.add_argument("--sizes", default=None, help="comma-separated n")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--only", default=None, help="with --size: one population by name")
    p.add_argument("--offset", type=int, default=0, help="with --size: first replicate index (fresh replicates)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="folder for the JSON results")
    p.add_argument("--figure", default=str(ROOT / "docs" / "_static" / "power.png"))
    args = p.parse_args(argv)
    out = pathlib.Path(args.out)
    if args.size:
        reps = args.reps or 2000
        full = [500, 2000, 10000, 100000]
        sizes = [int(float(s)) for s in args.sizes.split(",")] if args.sizes else full
        index = {n: (full.index(n) if n in full else 100 + k) for k, n in enumerate(sizes)}
        res = run(populations_null(), sizes, reps, args.jobs, only=args.only, offset=args.offset, size_index=index)
        table, _ = size_table(res, reps)
        print(table)
        out.mkdir(parents=True, exist_ok=True)
        (out / "size.json").write_text(json.dumps({f"{k[0]}|{k[1]}": v.tolist() for k, v in res.items()}))
    if args.power and not args.labels:
        reps = args.reps or 500
        full = [500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]
        sizes = [int(float(s)) for s in args.sizes.split(",")] if args.sizes else full
        # a size keeps its seed from the full list, so a subset reruns the table's own replicates
        index = {n: (full.index(n) if n in full else 100 + k) for k, n in enumerate(sizes)}
        res = run(populations_alt(), sizes, reps, args.jobs, size_index=index)
        out.mkdir(parents=True, exist_ok=True)
        (out / "power.json").write_text(json.dumps({f"{k[0]}|{k[1]}": v.tolist() for k, v in res.items()}))
        print(f"Power at level 0.05 ({reps} replicates per cell):\n")
        print(power_table(res, sizes))
        power_figure(res, sizes, args.figure)
        print(f"\nfigure: {args.figure}")
    if args.timing:
        timing(int(float(args.sizes or 1e6)), args.reps or 5)
    if args.sandwich:
        sandwich(args.reps or 1000, args.jobs)
    if args.labels and args.power:
        return labels_power([int(x) for x in args.labels.split(",")],
                            [int(float(x)) for x in (args.sizes or "1000,5000").split(",")], args.reps or 200,
                            args.jobs)
    if args.mixed_labels:
        labels_mixed([int(x) for x in args.mixed_labels.split(",")], int(float(args.sizes or 3000)), args.reps or 200,
                     args.jobs)
    if args.power_in_k:
        power_in_k([int(x) for x in args.power_in_k.split(",")], int(float(args.sizes or 3000)), args.reps or 200,
                   args.jobs)
    if args.oracle:
        oracle([int(x) for x in args.oracle.split(",")], int(float(args.sizes or 3000)), args.reps or 400, args.jobs)
    if args.labels:
        labels([int(x) for x in args.labels.split(",")], int(float(args.sizes or 3000)), args.reps or 400, args.jobs)


if __name__ == "__main__":
    main()
