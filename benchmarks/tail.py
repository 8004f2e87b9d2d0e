"""The calibration test where people act on it: its size in the tail on sparse data, its parts against each other's
errors, and the rate of "above the reference" on calibrated predictors (docs/calibration_test.md, "The tail").

    python benchmarks/tail.py --size            # size at 0.05 / 0.01 / 0.005 / 0.001: rare events, ties, mixed k
    python benchmarks/tail.py --cross           # a variance error alone against the means part, and the reverse
    python benchmarks/tail.py --cross --reps 200 --cells 4,9   # chosen rows of the cross table (0-based)
    python benchmarks/tail.py --above           # "CE2 above the reference" on calibrated predictors (socal.evaluate)
    python benchmarks/tail.py --regions         # region sentences beside a direct count of the votes (three cases)
    python benchmarks/tail.py --size --reps 200 --quick   # a reduced run
    python benchmarks/tail.py --size --reps 3000 --cells 2,6,9   # chosen cells of the size table (0-based rows)
    python benchmarks/tail.py --laws --reps 500   # size when f* is not Beta: two-point laws, k >= 3
    python benchmarks/tail.py --law-fallbacks     # the chi-square reference, and two votes per item, on those laws
    python benchmarks/tail.py --law-power --reps 100   # the price: power of the default, 'beta' and two votes per item

Populations with exact truth: socal.synthetic.RareEventPopulation (f* given the scores is Beta with exactly the
reported moments; means from Beta(0.5, 20), Beta(1, 50), log-uniform relative variances, or 30 tied leaves on
[0.001, 0.1]; k = 2 labels, or k drawn per item from {2, 3, 5, 10, 100}) and socal.synthetic.EnsembleLikePopulation
(the smooth ensemble-like population of benchmarks/size_power.py).  Replicate r of cell c draws from
numpy.random.default_rng([7300, c, r]); every replicate runs the default test (reference='auto').  Each table prints
the rejection rate per level, with the chi-square reference's rates beside it on the same draws (--size).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import socal
from socal.synthetic import EnsembleLikePopulation, RareEventPopulation

LEVELS = (0.05, 0.01, 0.005, 0.001)


def size_cells(quick):
    if quick:
        return [("beta(0.5, 20)", 2, 2000), ("ties", "mixed", 2000)]
    return [("beta(0.5, 20)", 2, 500), ("beta(0.5, 20)", 2, 2000), ("beta(0.5, 20)", 2, 20000),
            ("beta(1, 50)", 2, 2000), ("log-uniform", 2, 2000), ("log-uniform", 2, 100000), ("ties", 2, 2000),
            ("beta(0.5, 20)", "mixed", 2000), ("ties", "mixed", 2000), ("beta(0.5, 20)", 10, 2000)]


def _size_cell(args):
    c, (kind, k, n), reps = args
    pop = RareEventPopulation(kind, k=k)
    out = np.empty((reps, 6))
    for r in range(reps):
        m, v, _, counts = pop.sample_counts(n, rng=np.random.default_rng([7300, c, r]))
        res = socal.calibration_test(m, v, counts=counts)
        chi = socal.calibration_test(m, v, counts=counts, reference="chi2")
        out[r] = (res.pvalue, res.mean_part.pvalue, res.variance_part.pvalue, chi.pvalue, chi.mean_part.pvalue,
                  chi.variance_part.pvalue)
    return out


def law_cells():
    """k >= 3 cells with f* two-point (an atom at 0 or at 1) instead of Beta: the reference's Beta law is then wrong
    from the third moment on, as far as the null's two moments allow (socal.synthetic.RareEventPopulation, ``law``)."""
    return [(kind, k, 2000, law) for law in ("atom-0", "atom-1") for kind, k in
            (("beta(0.5, 20)", 10), ("ties", 10), ("beta(0.5, 20)", "mixed"), ("ties", "mixed"), ("beta(0.5, 20)", 3))]


def _law_cell(args):
    c, (kind, k, n, law), reps = args
    pop = RareEventPopulation(kind, k=k, law=law)
    out = np.empty((reps, 3))
    for r in range(reps):
        m, v, _, counts = pop.sample_counts(n, rng=np.random.default_rng([7301, c, r]))
        res = socal.calibration_test(m, v, counts=counts)
        out[r] = (res.pvalue, res.mean_part.pvalue, res.variance_part.pvalue)
    return out


def laws(reps, jobs, only=None):
    chosen = [(c, cell) for c, cell in enumerate(law_cells()) if only is None or c in only]
    cells = [cell for _, cell in chosen]
    t0 = time.time()
    res = _map(_law_cell, [(c, cell, reps) for c, cell in chosen], jobs)
    print(f"Rejection rate at {' / '.join(map(str, LEVELS))} of calibrated populations whose f* is two-point, not "
          f"Beta, {reps} replicates per cell, seeds [7301, c, r] (asked: "
          f"within 1.3 alpha = {' / '.join(f'{1.3 * a:.4g}' for a in LEVELS)}):\n")
    print("| law of f* | population | k | n | verdict (socal) | means part | variances part |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (kind, k, n, law), p in zip(cells, res):
        print(f"| {law} | {kind} | {k} | {n:,} | {_rates(p[:, 0])} | {_rates(p[:, 1])} | {_rates(p[:, 2])} |")
    print(f"\n({time.time() - t0:.0f} s)")
    return cells, res


def _fallback_cell(args):
    c, kind, reps = args
    pop = RareEventPopulation(kind, k=10, law="atom-1")
    out = np.empty((reps, 4))
    for r in range(reps):
        m, v, _, (a, k) = pop.sample_counts(2000, rng=np.random.default_rng([7302, c, r]))
        chi = socal.calibration_test(m, v, counts=(a, k), reference="chi2")
        thin = _two_votes_test(m, v, a, k, r)
        out[r] = (chi.pvalue, chi.variance_part.pvalue, thin.pvalue, thin.variance_part.pvalue)
    return out


def _two_votes_test(m, v, a, k, seed):
    """The default test on two votes per item (socal.datasets.thin_counts; k = 2's law is exact whatever f* is)."""
    from socal.datasets import thin_counts

    two = thin_counts(np.c_[a, k - a].astype(int), 2, rng=seed)
    return socal.calibration_test(m, v, counts=(two[:, 0].astype(float), np.full(m.size, 2.0)))


def _print_table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def law_fallbacks(reps, jobs):
    """On the atom-1 cells at k = 10 (where the Beta law's reference breaks), the chi-square reference and the default
    test on two votes per item (socal.datasets.thin_counts; k = 2's law is exact whatever f* is), same draws."""
    kinds = ("ties", "beta(0.5, 20)")
    t0 = time.time()
    res = _map(_fallback_cell, [(c, kind, reps) for c, kind in enumerate(kinds)], jobs)
    print(f"atom-1, k = 10, n = 2,000, {reps} replicates per cell, seeds [7302, c, r]; rates at "
          f"{' / '.join(map(str, LEVELS))}:\n")
    _print_table(("population", "chi-square reference: verdict", "its variances part", "two votes per item: verdict",
                  "its variances part"), [(kind, *(_rates(p[:, j]) for j in range(4))) for kind, p in zip(kinds, res)])
    print(f"\n({time.time() - t0:.0f} s)")


def law_power_cells():
    """k = 10, f* Beta (where reference='beta' is right): variances reported at 1/2 and 1/3 of the truth."""
    return [(kind, vf) for kind in ("beta(0.5, 20)", "ties") for vf in (0.5, 1 / 3)]


def _law_power_cell(args):
    c, (kind, vf), reps = args
    pop = RareEventPopulation(kind, k=10, var_factor=vf)
    out = np.empty((reps, 3))
    for r in range(reps):
        m, v, _, (a, k) = pop.sample_counts(2000, rng=np.random.default_rng([7303, c, r]))
        bracket = socal.calibration_test(m, v, counts=(a, k))
        beta = socal.calibration_test(m, v, counts=(a, k), reference="beta")
        out[r] = (bracket.pvalue, beta.pvalue, _two_votes_test(m, v, a, k, r).pvalue)
    return out


def law_power(reps, jobs):
    """The price of a reference that holds under every law of f*: the verdict's power, on the same draws, with the
    default reference (the third moment's interval), with reference='beta' (f* Beta, right here) and on two votes
    per item (exact whatever f* is)."""
    cells = law_power_cells()
    t0 = time.time()
    res = _map(_law_power_cell, [(c, cell, reps) for c, cell in enumerate(cells)], jobs)
    print(f"k = 10, n = 2,000, f* Beta, {reps} replicates per cell, seeds [7303, c, r]; verdict's rejection rates at "
          f"{' / '.join(map(str, LEVELS))}:\n")
    _print_table(("population", "reported var / true", "default (third moment's interval)", "reference='beta'",
                  "two votes per item"),
                 [(kind, f"{vf:.3g}", *(_rates(p[:, j]) for j in range(3))) for (kind, vf), p in zip(cells, res)])
    print(f"\n({time.time() - t0:.0f} s)")


def _rates(p):
    return " / ".join(f"{np.mean(p <= a):.3f}" for a in LEVELS)


def _map(fn, tasks, jobs):
    if jobs == 1:
        return [fn(t) for t in tasks]
    with ProcessPoolExecutor(jobs) as ex:
        return list(ex.map(fn, tasks))


def size(reps, jobs, quick, only=None):
    cells = size_cells(quick)
    t0 = time.time()
    chosen = [c for c in range(len(cells)) if only is None or c in only]
    res = _map(_size_cell, [(c, cells[c], reps) for c in chosen], jobs)
    cells = [cells[c] for c in chosen]
    print(f"Rejection rate of calibrated rare-event populations at {' / '.join(map(str, LEVELS))}, {reps} replicates "
          f"per cell (asked: within 1.3 alpha; 1.3 alpha = {' / '.join(f'{1.3 * a:.4g}' for a in LEVELS)}):\n")
    print("| population | k | n | verdict (socal) | means part | variances part | verdict, chi-square reference |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (kind, k, n), p in zip(cells, res):
        print(f"| {kind} | {k} | {n:,} | {_rates(p[:, 0])} | {_rates(p[:, 1])} | {_rates(p[:, 2])} | "
              f"{_rates(p[:, 3])} |")
    print(f"\n({time.time() - t0:.0f} s)")
    return cells, res


def cross_cells():
    """(name, population, sampler kind, k, n, which part should stay at its level)."""
    return [("variances x0.2 (means exact)", EnsembleLikePopulation(0.01, var_factor=0.2), 10, 2000, "mean"),
            ("variances x0.2 (means exact)", EnsembleLikePopulation(0.01, var_factor=0.2), 10, 10000, "mean"),
            ("variances x0.2 (means exact)", EnsembleLikePopulation(0.01, var_factor=0.2), 2, 10000, "mean"),
            ("variances x5 (means exact)", EnsembleLikePopulation(0.01, var_factor=5.0), 10, 10000, "mean"),
            ("rare, variances x0.2", RareEventPopulation(var_factor=0.2, k=10), None, 2000, "mean"),
            ("means +0.05 (variances exact)", EnsembleLikePopulation(0.01, mean_shift=0.05), 2, 10000, "variance"),
            ("means +0.05 (variances exact)", EnsembleLikePopulation(0.01, mean_shift=0.05), 10, 10000, "variance"),
            ("means tempered T = 1.5", EnsembleLikePopulation(0.01, temperature=1.5), 2, 10000, "variance"),
            ("means tempered T = 1.5", EnsembleLikePopulation(0.01, temperature=1.5), 10, 2000, "variance"),
            ("rare, means +0.01", RareEventPopulation(mean_shift=0.01, k=10), None, 2000, "variance")]


def _cross_cell(args):
    c, (name, pop, k, n, _), reps = args
    out = np.empty((reps, 3))
    for r in range(reps):
        rng = np.random.default_rng([7301, c, r])
        if isinstance(pop, RareEventPopulation):
            m, v, _, counts = pop.sample_counts(n, rng=rng)
            res = socal.calibration_test(m, v, counts=counts)
        else:
            m, v, _, y = pop.sample_raw(n, k=k, rng=rng)
            res = socal.calibration_test(m, v, y)
        out[r] = (res.pvalue, res.mean_part.pvalue, res.variance_part.pvalue)
    return out


def cross(reps, jobs, only=None):
    chosen = [(c, cell) for c, cell in enumerate(cross_cells()) if only is None or c in only]
    cells = [cell for _, cell in chosen]
    res = _map(_cross_cell, [(c, cell, reps) for c, cell in chosen], jobs)
    print(f"Each part against the other's error alone: rejection rate at 0.05, {reps} replicates per cell (asked: the "
          f"part whose condition holds stays within 0.05 + 0.015):\n")
    print("| error | k | n | part that should stay at its level | its rate | the other part (power) | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (name, pop, k, n, part), p in zip(cells, res):
        hold, other = (p[:, 1], p[:, 2]) if part == "mean" else (p[:, 2], p[:, 1])
        kk = k if k is not None else pop.k
        print(f"| {name} | {kk} | {n:,} | {part}s | {np.mean(hold <= 0.05):.3f} | {np.mean(other <= 0.05):.3f} | "
              f"{np.mean(p[:, 0] <= 0.05):.3f} |")
    return cells, res


def _above_cell(args):
    c, (name, pop, n), reps = args
    said, rejected = 0, 0
    for r in range(reps):
        rng = np.random.default_rng([7302, c, r])
        if isinstance(pop, RareEventPopulation):
            m, v, _, counts = pop.sample_counts(n, rng=rng)
            ev = socal.evaluate(m, v, counts=counts, rng=r)
        else:
            m, v, _, y = pop.sample_raw(n, rng=rng)
            ev = socal.evaluate(m, v, y, rng=r)
        said += "The perturbed CE2 is above the reference" in ev.summary()
        rejected += ev.test.pvalue <= 0.05
    return said, rejected


def above(reps, jobs):
    cells = [("rare, beta(0.5, 20)", RareEventPopulation(), 2000), ("rare, ties", RareEventPopulation("ties"), 2000),
             ("ensemble-like Var f* 0.01", EnsembleLikePopulation(0.01), 2000),
             ("ensemble-like Var f* 0.01", EnsembleLikePopulation(0.01), 20000)]
    res = _map(_above_cell, [(c, cell, reps) for c, cell in enumerate(cells)], jobs)
    print(f"'The perturbed CE2 is above the reference' printed by socal.evaluate on calibrated predictors, {reps} "
          f"runs per cell (asked: at most 0.05 for a 90% interval):\n")
    print("| population | n | 'above the reference' | test rejects at 0.05 |")
    print("| --- | --- | --- | --- |")
    for (name, _, n), (said, rej) in zip(cells, res):
        print(f"| {name} | {n:,} | {said / reps:.3f} | {rej / reps:.3f} |")


def _region_lines(name, m, v, counts):
    res = socal.calibration_test(m, v, counts=counts)
    print(f"\n### {name} (n = {len(m):,})\n")
    print("```text")
    print(res.summary())
    print("```\n")
    print("| region | part | the sentence says | direct count of the votes (socal.vote_check) | agree |")
    print("| --- | --- | --- | --- | --- |")
    for r in sorted(res.regions, key=lambda r: -abs(r.z))[:4]:
        c = socal.vote_check(m, v, counts=counts, region=r)
        if r.part == "mean":
            said, got = f"{r.direction}: votes {r.observed:.4g} vs mean {r.reported:.4g}", \
                f"frequency {c.frequency:.4g} vs mean {c.mean:.4g} ({c.n} items)"
        else:
            fx = f"x{r.factor:.3g}" if r.observed > 0 else "no spread of f*"
            said, got = f"{r.direction}: Var f* {r.observed:.3g} vs var {r.reported:.3g} ({fx})", \
                f"Var f* {c.votes_var:.3g} vs var {c.var:.3g} ({c.var_words}; {c.n} items)"
        print(f"| {r.where_words()} | {r.part} | {said} (z = {r.z:+.1f}) | {got} | "
              f"{'yes' if r.agrees(c) else 'NO'} |")


def regions(data_dir):
    """The issue's three cases: its synthetic twin, the RoBERTa ChaosNLI ensemble (SNLI, one class against the
    rest) and a sharp CIFAR-10H ensemble (socal.experiments.real_models.cifar10h_sharp_ensemble)."""
    _region_lines("synthetic twin (means too low, f* bimodal)", *socal.synthetic.bimodal_twin(rng=0))
    import os

    from socal.datasets import load_chaosnli_predictions, load_cifar10h
    from socal.experiments.real_models import cifar10h_sharp_ensemble, one_vs_rest

    if not os.path.isdir(os.path.join(data_dir, "chaosnli_predictions")):
        print(f"\n(no data at {data_dir}: the real-data cases are skipped)")
        return
    ens = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", "snli")
    for c, cname in enumerate(ens.votes.classes):
        mm, vv, a, kk = one_vs_rest(ens.probs, ens.votes.counts, c)
        _region_lines(f"ChaosNLI SNLI, RoBERTa x3, {cname} against the rest", mm, vv, (a, kk))
    cif = load_cifar10h(f"{data_dir}/cifar10h")
    probs, judge = cifar10h_sharp_ensemble(cif.counts)
    for c in (1, 3):
        mm, vv, a, kk = one_vs_rest(probs, judge, c)
        _region_lines(f"CIFAR-10H sharp ensemble (5 members), class {cif.classes[c]} against the rest", mm, vv,
                      (a, kk))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", action="store_true")
    ap.add_argument("--cross", action="store_true")
    ap.add_argument("--laws", action="store_true")
    ap.add_argument("--law-fallbacks", action="store_true")
    ap.add_argument("--law-power", action="store_true")
    ap.add_argument("--above", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--regions", action="store_true")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--cells", default=None,
                    help="comma-separated rows of the size, cross or laws table to run (0-based)")
    a = ap.parse_args(argv)
    if a.size:
        size(a.reps or 1000, a.jobs, a.quick, None if a.cells is None else {int(c) for c in a.cells.split(",")})
    if a.cross:
        cross(a.reps or 400, a.jobs, None if a.cells is None else {int(c) for c in a.cells.split(",")})
    if a.laws:
        laws(a.reps or 500, a.jobs, None if a.cells is None else {int(c) for c in a.cells.split(",")})
    if a.law_fallbacks:
        law_fallbacks(a.reps or 300, a.jobs)
    if a.law_power:
        law_power(a.reps or 100, a.jobs)
    if a.above:
        above(a.reps or 400, a.jobs)
    if a.regions:
        regions(a.data)
    if not (a.size or a.cross or a.laws or a.law_fallbacks or a.law_power or a.above or a.regions):
        ap.print_help()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
