"""Interval rules compared on the same replicates: how the default interval of ``socal.ce2`` / ``socal.ce1`` was chosen.

Every replicate is the one ``benchmarks/coverage.py`` draws (same member, h, n and seed).  For each, the script records
what every degree Lepski's rule compared produced (its plug-in, its two bias corrections and its ``n_boot`` bootstrap
deviations, via ``socal.pipeline.choose_degree``), then evaluates interval rules on those records, so the rules are
compared on identical data at no extra cost:

* ``bracket`` (the default): from est - b_hi - q_hi to est - b_lo - q_lo (``socal.bootstrap.bootstrap``);
* ``widened``: the former default, ``bracket`` widened by one bootstrap SD plus half the gap b_hi - b_lo;
* ``imbens-manski``: the bracket's ends moved by c sd(N), where c solves Phi(c + gap/sd) - Phi(-c) = level
  (Imbens & Manski, Econometrica 72, 2004: one-sided quantiles when the bracket is wide);
* ``gum``: the corrected estimate +- z sqrt(sd^2 + gap^2/12) (the bias uniform on the bracket, as the GUM treats a
  bounded systematic error);
* ``inversion`` (where the records hold the shrunken worlds' curves): ``bracket`` with its lower end taken down to
  the smallest truth among the shrunken worlds whose mean plug-in the observed one does not exceed by more than
  q_hi (test inversion over that family, ``socal.bootstrap.shrunk_estimate`` at est - q_hi): a union of two
  confidence sets, each valid under its own condition;
* each at the chosen degree only (suffix ``-chosen``), as the union over the chosen degree and the finer ones that
  Lepski's rule found in agreement with it (suffix ``-upward``: the coarser candidates it rejected left out), or as
  the union over every degree compared (the default);
* ``bracket-inner``, ``imbens-manski-inner`` (where the records hold the inner level, ``--inner``): the rule with the
  one-step-corrected estimate's fluctuation (each refit's delta less its own closed-form one-step bias,
  ``BootstrapOptions(inner=True)``) in place of the plug-in's, about the same mean (the bracket unchanged);
* ``iterated`` (where the records hold the inner level): the iterated bootstrap bias correction, the one-step-
  corrected estimate less its own bias in the bootstrap world, with the percentile interval of the inner deltas
  (:func:`iterated_interval`; measured, not adopted);
* ``bracket-identified``: the union over the chosen degree and the candidates whose bracket gap |b_hi - b_lo| is
  at most their own noise interval's width q_hi - q_lo (a candidate whose bias is identified less sharply than its
  noise left out; a tuned constant, 1, measured and not adopted: docs/numbers.md).

It prints, per rule and kind x n, how many cells cover within [level - 0.02, level + 0.05] with mean width at most
4.5 times the estimate's RMSE (issue 24), the coverage range and the cells below level - 0.02 and above level + 0.05,
and how many of those are so by more than the replicates' noise: the cell's 95% Clopper-Pearson interval for its
coverage lies wholly outside the band.  (With 200 replicates an interval that covers exactly 0.915 everywhere falls
outside the band in 5.5% of cells by chance, 7 of 120, so "every cell on target" cannot be seen at this size; the
significance columns are the reading that can.)  For ``bracket`` the numbers are the ones ``coverage.py`` prints for
the same cells.

Record with one BLAS thread per process (``OMP_NUM_THREADS=1``) and ``--jobs 1``, one recording per core: 100
replicates of a CE2 cell at n = 50,000 then take 71-103 s on this kind of machine, against 10-13 minutes with
numpy's two threads in each of two or three recordings (docs/numbers.md, "Which records").  The records are the
same either way, to rounding.

    python benchmarks/interval_rules.py --reps 200 --sizes 1000,5000 --save rules.pkl   # record, then evaluate
    python benchmarks/interval_rules.py --load rules.pkl [--load more.pkl] [--cells]     # evaluate recorded runs
    python benchmarks/interval_rules.py --load rules.pkl --grid   # the default rule's rows, as coverage.py's grid
    python benchmarks/interval_rules.py --load rules.pkl --summary   # the grid's summary per kind x n
    python benchmarks/interval_rules.py --load rules.pkl --margins   # what a widening of the bracket trades
    python benchmarks/interval_rules.py --load rules.pkl --spread    # where the chosen degree's interval misses
    python benchmarks/interval_rules.py --load rules.pkl --width     # where the union's width comes from
    python benchmarks/interval_rules.py --load new.pkl --against old.pkl   # the default, before -> after a change
    python benchmarks/interval_rules.py --inner --reps 100 --jobs 1 --save inner.pkl   # record the inner level too
    python benchmarks/interval_rules.py --load inner.pkl --inner-spread   # what the correction adds to the noise
    python benchmarks/interval_rules.py --load inner.pkl --null-join   # the default with and without the test's 0
    python benchmarks/interval_rules.py --reps 100 --first 100 --sizes 50000 --kind ce2 --save more.pkl   # 100 more
    python benchmarks/interval_rules.py --load rules.pkl --extend more.pkl --grid   # ... evaluated with the first
"""

import argparse
import pickle
import time
import zlib
from fractions import Fraction

import numpy as np
from scipy import optimize, stats

import socal
import socal.pipeline
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options
from socal.deviations import CE_RANGE
from socal.parallel import iter_jobs
from socal.testing import TestPass

RULES = ("bracket", "widened", "imbens-manski", "gum")


def _sample(name, h, n, rep):
    """coverage.py's replicate ``rep`` of a cell: the member's sample under its own seed."""
    pop = socal.synthetic.validation_zoo()[name].population
    return pop.sample(n, h=h, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, rep]))


def null_pvalue(kind, name, hinv, n, rep):
    """The calibration test's p-value of CE = 0 on a replicate's sample, as ``ce2``/``ce1`` compute it for their
    interval (``CalibrationError.null_pvalue``): for records made before the interval joined the test's 0."""
    m, v, y = _sample(name, 1 / hinv, n, rep)
    order = 2 if kind == "ce2" else 1  # the pipeline's own pass (socal.testing.TestPass), on the whole sample
    stats = TestPass(order, checked=True)(0, m, v if order == 2 else None, y.sum(axis=1), np.full(n, float(y.shape[1])))
    return 0.0 if stats.impossible else float(stats.test().pvalue)


def null_join(cells, level, jobs):
    """The default interval with and without the calibration test's 0 (docs/numbers.md, "At CE = 0"), on the same
    records: the rules table's counts, and every cell the test's 0 reaches."""
    keyed = [(key, j) for key, cell in ordered(cells) for j in range(len(cell["rows"]))]
    todo = [(k, j) for k, j in keyed if "null_p" not in cells[k]["rows"][j]]
    for (key, j), p in zip(todo, iter_jobs(null_pvalue, [(*key, cells[key].get("first", 0) + j) for key, j in todo],
                                           n_jobs=jobs)):
        cells[key]["rows"][j] = dict(cells[key]["rows"][j], null_p=p)
    tallies, moved = {False: [], True: []}, []
    for key, cell in ordered(cells):
        before, after = (default_stats(cell, key[0], level, join=join) for join in (False, True))
        share = float(np.mean([(r["null_p"] or 0.0) >= 1 - level for r in cell["rows"]]))
        for join, s in ((False, before), (True, after)):
            tallies[join].append(s)
        if share > 0:
            moved.append(f"{key[0]} {key[1]} 1/{key[2]} n={key[3]}: the test's 0 in {share:.2f} of replicates; "
                         f"covers {before['cover']:.3f} -> {after['cover']:.3f}, width / RMSE {before['width']:.1f} -> "
                         f"{after['width']:.1f} {after['tag']}")
    print("on target / below / significantly below / above / significantly above / wider than 4.5 RMSE / lowest")
    for join in (False, True):
        s = tallies[join]
        cov, w = np.array([x["cover"] for x in s]), np.array([x["width"] for x in s])
        on = np.sum((cov >= level - 0.02 - 1e-9) & (cov <= level + 0.05 + 1e-9) & (w <= 4.5))
        print(f"{'with the test' if join else 'bracket alone':>14}: {on} / {np.sum(cov < level - 0.02 - 1e-9)} / "
              f"{sum(x['tag'] == 'below' for x in s)} / {np.sum(cov > level + 0.05 + 1e-9)} / "
              f"{sum(x['tag'] == 'above' for x in s)} / {np.sum(w > 4.5)} / {cov.min():.3f}")
    print("\n".join(moved))


def record(kind, name, h, n, rep, n_boot, inner=False):
    """One coverage.py replicate; every compared degree's (plug-in, bias, corrected estimate, deltas); with ``inner``
    also each refit's one-step-corrected delta and the analytic one-step (``BootstrapOptions(inner=True)``)."""
    got = {}
    choose = socal.pipeline.choose_degree
    options = BootstrapOptions(inner=inner)

    def spy(cands):
        got["k"], rule = choose(cands)
        got["cands"] = [(c.plugin, c.boot.bias, c.boot.debiased, c.boot.deltas) for c in cands]
        got["shrunk"] = [(c.boot.shrunk_truth, c.boot.shrunk_plugin) for c in cands]  # for rules to come
        if inner:
            got["inner"] = [c.boot.inner for c in cands]
        return got["k"], rule

    socal.pipeline.choose_degree = spy
    try:
        m, v, y = _sample(name, h, n, rep)
        if kind == "ce2":
            res = ce_with_options("ce2", options, m, v, y, h=h, ci=0.9, upper=0.95, n_boot=n_boot, rng=rep)
        else:
            res = ce_with_options("ce1", options, m, y, h=h, ci=0.9, upper=0.95, n_boot=n_boot, rng=rep)
    finally:
        socal.pipeline.choose_degree = choose
    return dict(got, est=res.estimate, null_p=res.null_pvalue)


def one_interval(rule, plug, bias, deb, deltas, level, top, margin=(1.0, 0.5)):
    """One degree's interval under ``rule`` (clipped to [0, top] and holding the corrected estimate); ``margin``
    (SDs, gaps) is the widening of the ``widened`` rule."""
    one = float(deltas.mean())
    shr = 2 * bias - one  # bias is the mean of the one-step and the shrunken-world corrections
    b_lo, b_hi = min(one, shr), max(one, shr)
    noise = deltas - one
    sd, gap = float(noise.std()), b_hi - b_lo
    lo_q, hi_q = np.quantile(noise, [(1 - level) / 2, (1 + level) / 2])
    if rule == "bracket":  # socal's own rule
        ci, _ = socal.bootstrap.bracket_interval(plug, (one, shr), noise, deb, top, level)
        return ci.low, ci.high
    if rule == "widened":
        m = margin[0] * sd + margin[1] * gap
        lo, hi = plug - b_hi - hi_q - m, plug - b_lo - lo_q + m
    elif rule == "imbens-manski":
        c = optimize.brentq(lambda c: stats.norm.cdf(c + gap / sd) - stats.norm.cdf(-c) - level, 0, 10) if sd else 0
        lo, hi = plug - b_hi - c * sd, plug - b_lo + c * sd
    elif rule == "gum":
        half = stats.norm.ppf((1 + level) / 2) * np.sqrt(sd**2 + gap**2 / 12)
        lo, hi = deb - half, deb + half
    return min(max(lo, 0.0), deb), min(max(hi, deb), top)


def inversion_interval(plug, bias, deb, deltas, shrunk, level, top):
    """``bracket`` with the lower end lowered to the test-inversion bound over the shrunken worlds."""
    lo, hi = one_interval("bracket", plug, bias, deb, deltas, level, top)
    noise = deltas - float(deltas.mean())
    q_hi = np.quantile(noise, (1 + level) / 2)
    return min(lo, max(socal.bootstrap.shrunk_estimate(plug - q_hi, *shrunk), 0.0)), hi


def bracket_bound(plug, bias, deb, deltas, upper, top):
    """The default upper bound at one degree (socal.bootstrap.bracket_interval)."""
    one = float(deltas.mean())
    return socal.bootstrap.bracket_interval(plug, (one, 2 * bias - one), deltas - one, deb, top, upper=upper)[1].value


def default_stats(cell, kind, level, upper=0.95, reps=None, join=None):
    """The default rule (bracket, union over Lepski's candidates, joined with the calibration test's 0 where the
    records hold its p-value; ``join`` forces either) on a cell's first ``reps`` replicates (all by default): the
    numbers coverage.py prints for it, plus whether the coverage is off [level - 0.02, level + 0.05] beyond the
    replicates' noise (``tag``) and the mean number of candidates."""
    truth, rows, top = cell["truth"], cell["rows"][:reps], CE_RANGE[2 if kind == "ce2" else 1]
    est = np.array([r["est"] for r in rows])
    plug = np.array([r["cands"][r["k"]][0] for r in rows])
    ivs = [[one_interval("bracket", *c, level, top) for c in r["cands"]] for r in rows]
    lo = np.array([min(a for a, _ in iv) for iv in ivs])
    if join is None:
        join = all(r.get("null_p") is not None for r in rows)
    if join:
        # None: recorded by a call whose candidates' interval reached 0 by itself (the test was not run)
        lo = np.where(np.array([r["null_p"] or 0.0 for r in rows]) >= 1 - level, 0.0, lo)
    hi = np.array([max(b for _, b in iv) for iv in ivs])
    up = np.array([max(bracket_bound(*c, upper, top) for c in r["cands"]) for r in rows])
    rmse = float(np.sqrt(np.mean((est - truth) ** 2)))
    x = int(np.sum((lo <= truth) & (truth <= hi)))
    cp_lo, cp_hi = clopper_pearson(x, len(rows))
    return dict(truth=truth, reps=len(rows), plug_err=float(np.mean(plug - truth)), err=float(np.mean(est - truth)),
                rmse=rmse, cover=x / len(rows), bound=float(np.mean(truth <= up)),
                width=float(np.mean(hi - lo)) / rmse, fine=float(np.mean([r["k"] > 0 for r in rows])),
                cands=float(np.mean([len(r["cands"]) for r in rows])),
                tag="below" if cp_hi < level - 0.02 else "above" if cp_lo > level + 0.05 else "")


def ordered(cells):
    """The cells in the docs' order: tuning members before held-out ones, then CE2 before CE1, n, zoo order, h."""
    zoo = list(socal.synthetic.validation_zoo())
    return sorted(cells.items(), key=lambda kv: (kv[1]["held_out"], kv[0][0] != "ce2", kv[0][3], zoo.index(kv[0][1]),
                                                  kv[0][2]))


def grid(cells, level, upper):
    """The default rule's rows in docs/numbers.md's grid format (the columns coverage.py prints), tuning members
    first, then the held-out ones."""
    head = None
    for (kind, name, hinv, n), cell in ordered(cells):
        if head != cell["held_out"]:
            head = cell["held_out"]
            print(f"\n{'Held-out' if head else 'Tuning'} members:\n\n| kind | member | h | n | reps | CE^pert | bias "
                  "plug-in | bias estimate | RMSE estimate | 90% interval covers | 95% bound covers | width / RMSE | "
                  "finer degree used |\n" + "| --- " * 13 + "|")
        s = default_stats(cell, kind, level, upper)
        print(f"| {kind} | {name} | 1/{hinv} | {n} | {s['reps']} | {s['truth']:.4f} | {s['plug_err']:+.4f} | "
              f"{s['err']:+.4f} | {s['rmse']:.4f} | {s['cover']:.2f} | {s['bound']:.2f} | {s['width']:.1f} | "
              f"{s['fine']:.2f} |")


def summary(cells, level, upper):
    """docs/numbers.md's summary of the grid: per kind and n, the tuning members' coverage range, lowest bound
    coverage, largest |mean error| of the estimate (and of the chosen degree's plug-in) and width / RMSE range; then
    the held-out members' the same; and the count of cells off the band beyond the replicates' noise."""
    stats = {key: default_stats(cell, key[0], level, upper) for key, cell in ordered(cells)}
    print(f"| cells | n | replicates | {level:.0%} interval covers | {upper:.0%} bound covers | max |mean error| "
          f"of the estimate (plug-in) | width / RMSE |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for held_out in (False, True):
        for kind in ("ce2", "ce1"):
            for n in sorted({k[3] for k in stats}):
                g = [s for k, s in stats.items() if k[0] == kind and k[3] == n and cells[k]["held_out"] == held_out]
                if not g:
                    continue
                col = lambda f: np.array([s[f] for s in g])  # noqa: E731
                reps = sorted({s["reps"] for s in g})
                print(f"| {kind.upper()}, {len(g)}{' held out' if held_out else ''} | {n:,} | "
                      f"{'/'.join(map(str, reps))} | {col('cover').min():.2f}-{col('cover').max():.2f} | "
                      f">= {col('bound').min():.2f} | {np.abs(col('err')).max():.4f} "
                      f"({np.abs(col('plug_err')).max():.4f}) | {col('width').min():.1f}-{col('width').max():.1f} |")
    for tag in ("below", "above"):
        off = [k for k, s in stats.items() if s["tag"] == tag]
        print(f"significantly {tag} the band: {len(off)} of {len(stats)}"
              + "".join(f"\n  {k[0]} {k[1]} 1/{k[2]} {k[3]}: {stats[k]['cover']:.3f}" for k in off))
    print(f"wider than 4.5 RMSE: {sum(s['width'] > 4.5 for s in stats.values())} of {len(stats)}")


def margins(cells, level, grid=((0, 0), (0.25, 0), (0.5, 0), (0, 0.25), (0, 0.5), (0.25, 0.25), (1, 0.5))):
    """The bracket interval widened by a SDs + g gaps, over every recorded cell: how many cells meet the target,
    fall below level - 0.02 or rise above level + 0.05 (the trade-off a margin buys)."""
    print(f"{'widening':<20}{'cells ok':>12}{'below':>7}{'above':>7}{'lowest':>8}{'width/RMSE':>12}")
    for a, g in grid:
        ok = below = above = 0
        low, wide = 1.0, 0.0
        for (kind, *_), cell in cells.items():
            truth, rows, top = cell["truth"], cell["rows"], CE_RANGE[2 if kind == "ce2" else 1]
            est = np.array([r["est"] for r in rows])
            ivs = [[one_interval("widened", *c, level, top, (a, g)) for c in r["cands"]] for r in rows]
            lo = np.array([min(x for x, _ in iv) for iv in ivs])
            hi = np.array([max(x for _, x in iv) for iv in ivs])
            cover = float(np.mean((lo <= truth) & (truth <= hi)))
            width = float(np.mean(hi - lo) / np.sqrt(np.mean((est - truth) ** 2)))
            ok += level - 0.02 - 1e-9 <= cover <= level + 0.05 + 1e-9 and width <= 4.5
            below, above = below + (cover < level - 0.02 - 1e-9), above + (cover > level + 0.05 + 1e-9)
            low, wide = min(low, cover), max(wide, width)
        print(f"{f'{a:g} SD + {g:g} gap':<20}{ok:>6} / {len(cells):<5}{below:>7}{above:>7}{low:>8.3f}{wide:>12.1f}")


def spread(cells, level, show=12):
    """Why the interval is a union over Lepski's candidates: per cell, the chosen degree's own bracket interval's
    coverage, against the union's; and the spread of the cross-validated fit's plug-in over the replicates against
    its bootstrap's SD (median over replicates).  Where the two SDs agree, the bootstrap prices the label and item
    noise right, and what the chosen degree's interval misses is its bias: the true bias outside the bracket of the
    two corrections."""
    rows = []
    for (kind, name, hinv, n), cell in cells.items():
        truth, recs, top = cell["truth"], cell["rows"], CE_RANGE[2 if kind == "ce2" else 1]
        chosen, union = [], []
        for r in recs:
            ivs = [one_interval("bracket", *c, level, top) for c in r["cands"]]
            lo, hi = ivs[r["k"]]
            chosen.append(lo <= truth <= hi)
            union.append(min(a for a, _ in ivs) <= truth <= max(b for _, b in ivs))
        plug = np.array([r["cands"][0][0] for r in recs])
        boot = np.median([np.std(r["cands"][0][3]) for r in recs])
        rows.append(((kind, name, hinv, n), np.mean(chosen), np.mean(union), np.std(plug) / boot))
    ratio = np.array([r[3] for r in rows])
    print(f"spread of the CV fit's plug-in / its bootstrap SD over {len(rows)} cells: quantiles 10/25/50/75/90% "
          + ", ".join(f"{q:.2f}" for q in np.quantile(ratio, [0.1, 0.25, 0.5, 0.75, 0.9])))
    print(f"chosen degree's interval covers {min(r[1] for r in rows):.3f}-{max(r[1] for r in rows):.3f} "
          f"(below {level - 0.02:.2f} in {sum(r[1] < level - 0.02 - 1e-9 for r in rows)} cells); the union "
          f"{min(r[2] for r in rows):.3f}-{max(r[2] for r in rows):.3f}")
    print(f"\n{'cell':<36}{'chosen covers':>14}{'union covers':>13}{'spread / boot SD':>18}")
    for key, c, u, q in sorted(rows, key=lambda r: r[1])[:show]:
        print(f"{' '.join(map(str, key)):<36}{c:>14.3f}{u:>13.3f}{q:>18.2f}")


def inner_spread(cells):
    """What the bias correction adds to the estimate's fluctuation, at the finest candidate (one degree per cell),
    from records made with ``--inner``: over the replicates, the SD of its plug-in, of its one-step-corrected
    estimate (plug-in less the deltas' mean) and of its corrected estimate (the midpoint of the bracket), each over
    the median bootstrap SD that should price it: the plug-in's deltas for the first and third, the one-step-corrected
    deltas of the inner level for the second.  Quantiles over the cells (10/50/90%)."""
    cols = {"plug-in / its deltas' SD": [], "one-step-corrected / the inner deltas' SD": [],
            "midpoint-corrected / the plug-in deltas' SD": [], "one-step-corrected SD / plug-in SD": []}
    for cell in cells.values():
        recs = [r for r in cell["rows"] if "inner" in r]
        if len(recs) < 20:
            continue
        fin = [r["cands"][-1] for r in recs]
        inner = [r["inner"][-1] for r in recs]
        plug = np.array([c[0] for c in fin])
        one = plug - np.array([c[3].mean() for c in fin])
        mid = np.array([c[2] for c in fin])
        boot = np.median([np.std(c[3]) for c in fin])
        boot_inner = np.median([np.std(i[0]) for i in inner])
        cols["plug-in / its deltas' SD"].append(np.std(plug, ddof=1) / boot)
        cols["one-step-corrected / the inner deltas' SD"].append(np.std(one, ddof=1) / boot_inner)
        cols["midpoint-corrected / the plug-in deltas' SD"].append(np.std(mid, ddof=1) / boot)
        cols["one-step-corrected SD / plug-in SD"].append(np.std(one, ddof=1) / np.std(plug, ddof=1))
    count = len(next(iter(cols.values())))
    print(f"finest candidate, {count} cells: SD over the replicates / bootstrap SD, quantiles 10/50/90%")
    for name, v in cols.items():
        print(f"  {name:<46}" + "  ".join(f"{q:.2f}" for q in np.quantile(v, [0.1, 0.5, 0.9])))


def width_sources(cells, level, limit=4.5):
    """Where the union's width comes from, in the cells where it exceeds ``limit`` RMSEs: the mean error of the
    coarsest, the chosen and the finest candidate's corrected estimate (with the replicates' 95% half-width), and the
    union's mean width split into the span of the candidates' corrected estimates (max - min) and the rest (the
    noise quantiles and bracket gaps at its two ends), with the finest candidate's bracket gap |b_hi - b_lo| and
    bootstrap SD, all in RMSEs.  Then, over every cell, how often the finest candidate errs significantly high and
    the coarsest significantly low: the union spans both."""
    def err(rows, pick, truth):
        e = np.array([pick(r)[2] - truth for r in rows])
        return e.mean(), 1.96 * e.std(ddof=1) / np.sqrt(e.size)

    print(f"{'cell':<36}{'width/RMSE':>11}{'span':>6}{'rest':>6}{'gap':>6}{'SD':>6}  mean error of the corrected "
          f"estimate: {'coarsest':>17}{'chosen':>17}{'finest':>17}")
    high = low = 0
    for (kind, name, hinv, n), cell in ordered(cells):
        truth, rows, top = cell["truth"], cell["rows"], CE_RANGE[2 if kind == "ce2" else 1]
        ivs = [[one_interval("bracket", *c, level, top) for c in r["cands"]] for r in rows]
        width = np.mean([max(b for _, b in iv) - min(a for a, _ in iv) for iv in ivs])
        span = np.mean([max(c[2] for c in r["cands"]) - min(c[2] for c in r["cands"]) for r in rows])
        rmse = float(np.sqrt(np.mean([(r["est"] - truth) ** 2 for r in rows])))
        gap = np.mean([bracket_gap(r["cands"][-1]) for r in rows])
        sd = np.mean([np.std(r["cands"][-1][3]) for r in rows])
        errs = [err(rows, f, truth) for f in (lambda r: r["cands"][0], lambda r: r["cands"][r["k"]],
                                               lambda r: r["cands"][-1])]
        high += errs[2][0] - errs[2][1] > 0
        low += errs[0][0] + errs[0][1] < 0
        if width / rmse > limit:
            print(f"{kind + ' ' + name + ' 1/' + str(hinv) + ' ' + str(n):<36}{width / rmse:>11.1f}{span / rmse:>6.1f}"
                  f"{(width - span) / rmse:>6.1f}{gap / rmse:>6.1f}{sd / rmse:>6.1f}  {'':>26}"
                  + "".join(f"{m:>+10.4f} ± {h:.4f}" for m, h in errs))
    print(f"finest candidate significantly high in {high} of {len(cells)} cells, coarsest significantly low in {low}")


INNER_RULES = ("bracket-inner", "imbens-manski-inner", "iterated")


def iterated_interval(cand, inner, level, top):
    """The iterated (double) bootstrap bias correction (Hall, The Bootstrap and Edgeworth Expansion, 1992, Sec. 1.4),
    from records made with ``--inner``: the one-step-corrected estimate (the plug-in less the analytic one-step
    bias) less that estimator's own bias in the bootstrap world (the mean of the refits' one-step-corrected
    deltas), with the percentile interval of those deltas about it.  No bracket: the second level is the bias
    estimate.  Measured, not adopted (docs/numbers.md)."""
    plug = cand[0]
    corrected, one_step = inner
    est = plug - one_step - float(corrected.mean())
    lo_q, hi_q = np.quantile(corrected - corrected.mean(), [(1 - level) / 2, (1 + level) / 2])
    return min(max(est - hi_q, 0.0), top), min(max(est - lo_q, 0.0), top)


def with_inner_noise(cand, inner):
    """A candidate whose deltas fluctuate as its one-step-corrected estimate does (recorded with ``--inner``: each
    refit's delta less its own analytic one-step bias), about the same mean (so the one-step bias, and with it the
    bracket, is the candidate's own): the ``-inner`` rules are the plain rules with that noise."""
    plug, bias, deb, deltas = cand
    corrected = inner[0]
    return plug, bias, deb, corrected - corrected.mean() + deltas.mean()


def bracket_gap(cand):
    """A candidate's bracket gap |b_hi - b_lo|: the one-step correction (its deltas' mean) against the shrunken
    world's (2 bias - one-step, since the recorded bias is their mean)."""
    _, bias, _, deltas = cand
    return abs(2 * (bias - float(deltas.mean())))


def identified(cand, level):
    """Whether a candidate's bracket gap is at most its noise interval's width q_hi - q_lo."""
    deltas = cand[3]
    lo_q, hi_q = np.quantile(deltas - deltas.mean(), [(1 - level) / 2, (1 + level) / 2])
    return bracket_gap(cand) <= hi_q - lo_q


def evaluate(cells, level, show_cells):
    summary = {}
    for (kind, name, hinv, n), cell in cells.items():
        truth, rows = cell["truth"], cell["rows"]
        est = np.array([r["est"] for r in rows])
        rmse = float(np.sqrt(np.mean((est - truth) ** 2)))
        line = f"{kind:<5}{name:<19}{'1/' + str(hinv):>5}{n:>7}{truth:>8.4f}{est.mean() - truth:>+9.4f}{rmse:>8.4f}"
        top = CE_RANGE[2 if kind == "ce2" else 1]
        for rule in RULES + (("inversion",) if all("shrunk" in r for r in rows) else ()) + (
                INNER_RULES if all("inner" in r for r in rows) else ()):
            for scope in ("", "-chosen", "-upward") + (("-identified",) if rule == "bracket" else ()):
                ivs = []
                for r in rows:
                    if rule == "inversion":
                        each = [inversion_interval(*c, s, level, top) for c, s in zip(r["cands"], r["shrunk"])]
                    elif rule == "iterated":
                        each = [iterated_interval(c, i, level, top) for c, i in zip(r["cands"], r["inner"])]
                    elif rule in INNER_RULES:
                        each = [one_interval(rule.removesuffix("-inner"), *with_inner_noise(c, i), level, top)
                                for c, i in zip(r["cands"], r["inner"])]
                    else:
                        each = [one_interval(rule, *c, level, top) for c in r["cands"]]
                    if scope == "-identified":
                        each = [iv for j, (iv, c) in enumerate(zip(each, r["cands"]))
                                if j == r["k"] or identified(c, level)]
                    else:
                        each = {"": each, "-chosen": each[r["k"]:r["k"] + 1], "-upward": each[r["k"]:]}[scope]
                    ivs.append((min(lo for lo, _ in each), max(hi for _, hi in each)))
                lo, hi = np.array(ivs).T
                cover, width = float(np.mean((lo <= truth) & (truth <= hi))), float(np.mean(hi - lo)) / rmse
                ok = level - 0.02 - 1e-9 <= cover <= level + 0.05 + 1e-9 and width <= 4.5
                low_cp, high_cp = clopper_pearson(round(cover * len(rows)), len(rows))
                summary.setdefault((rule + scope, kind, n), []).append(
                    (cover, width, ok, high_cp < level - 0.02, low_cp > level + 0.05))
                line += f"  {cover:.2f}/{width:.1f}{' ' if ok else '*'}"
        if show_cells:
            print(line)
    print(f"\n{'rule':<28}{'kind':<5}{'n':>7}{'cells ok':>10}{'coverage':>13}{'below':>7}{'above':>7}"
          f"{'width/RMSE':>12}{'sig. below':>12}{'sig. above':>12}")
    order = RULES + ("inversion",) + INNER_RULES
    base = lambda rule: rule.removesuffix("-chosen").removesuffix("-upward").removesuffix("-identified")  # noqa: E731
    for (rule, kind, n), v in sorted(summary.items(), key=lambda kv: (order.index(base(kv[0][0])), kv[0][0], kv[0][1],
                                                                       kv[0][2])):
        c, w, ok, sig_lo, sig_hi = np.array(v).T
        print(f"{rule:<28}{kind:<5}{n:>7}{int(ok.sum()):>6} / {len(ok):<3}{c.min():>6.3f}-{c.max():.3f}"
              f"{int(np.sum(c < level - 0.02 - 1e-9)):>7}{int(np.sum(c > level + 0.05 + 1e-9)):>7}"
              f"{w.min():>7.1f}-{w.max():.1f}{int(sig_lo.sum()):>12}{int(sig_hi.sum()):>12}")
    print(f"\n{'rule':<28}{'cells ok':>10}{'below':>7}{'above':>7}{'lowest':>8}{'sig. below':>12}{'sig. above':>12}"
          f"{'width > 4.5':>13}")
    for rule in sorted({r for r, _, _ in summary}, key=lambda r: (order.index(base(r)), r)):
        c, w, ok, sig_lo, sig_hi = np.concatenate([np.array(v) for (r, _, _), v in summary.items() if r == rule]).T
        print(f"{rule:<28}{int(ok.sum()):>4} / {len(ok):<3}{int(np.sum(c < level - 0.02 - 1e-9)):>7}"
              f"{int(np.sum(c > level + 0.05 + 1e-9)):>7}{c.min():>8.3f}{int(sig_lo.sum()):>12}{int(sig_hi.sum()):>12}"
              f"{int(np.sum(w > 4.5)):>13}")


def against(cells, before, level):
    """The default rule on the same replicates recorded with two versions of the code (``--load`` the new records,
    ``--against`` the old): every cell the new records hold, on the replicates both hold (the seeds are the
    replicate's index, so the first r of 200 are the r of a shorter run)."""
    print("| kind | member | h | n | reps | mean error (before -> after) | RMSE | covers | width / RMSE | candidates |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, cell in cells.items():
        if key not in before:
            continue
        kind, name, hinv, n = key
        reps = min(len(cell["rows"]), len(before[key]["rows"]))
        b, a = (default_stats(c, kind, level, reps=reps) for c in (before[key], cell))
        cov = lambda s: f"{s['cover']:.3f}" + (f" ({s['tag']})" if s["tag"] else "")  # noqa: E731
        print(f"| {kind} | {name} | 1/{hinv} | {n} | {reps} | {b['err']:+.4f} -> {a['err']:+.4f} | {b['rmse']:.4f} -> "
              f"{a['rmse']:.4f} | {cov(b)} -> {cov(a)} | {b['width']:.1f} -> {a['width']:.1f} | {b['cands']:.1f} -> "
              f"{a['cands']:.1f} |")


def extend(cells, more):
    """Append ``more``'s replicates to the same cells of ``cells``: each must continue where the cell's rows end
    (recorded with ``--first`` equal to their count) and have the same truth (to 1e-12: the exact reference's last
    bits can differ between thread counts), else a ValueError."""
    for key, cell in more.items():
        if key not in cells:
            raise ValueError(f"--extend: cell {key} is not among the loaded records")
        old = cells[key]
        start = old.get("first", 0) + len(old["rows"])
        if cell.get("first", 0) != start or abs(cell["truth"] - old["truth"]) > 1e-12 * abs(old["truth"]):
            raise ValueError(f"--extend: cell {key} holds replicates from {cell.get('first', 0)} (truth "
                             f"{cell['truth']}); the loaded one ends before {start} (truth {old['truth']})")
        cells[key] = dict(old, rows=old["rows"] + cell["rows"])


def clopper_pearson(x, n, conf=0.95):
    """The exact (Clopper-Pearson) two-sided interval for a binomial proportion with x successes in n trials."""
    lo = stats.beta.ppf((1 - conf) / 2, x, n - x + 1) if x > 0 else 0.0
    hi = stats.beta.ppf((1 + conf) / 2, x + 1, n - x) if x < n else 1.0
    return float(lo), float(hi)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--first", type=int, default=0, help="the first replicate's index (record more of a cell)")
    p.add_argument("--sizes", default="1000,5000")
    p.add_argument("--hs", default="1/16,1/64")
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--kind", default="ce2,ce1")
    p.add_argument("--inner", action="store_true",
                   help="record each refit's one-step-corrected delta too (the corrected estimate's fluctuation)")
    p.add_argument("--members", default=None, help="comma-separated zoo names (default: all)")
    p.add_argument("--save", default=None, help="write the records here (pickle), after every cell")
    p.add_argument("--load", action="append", default=[], help="evaluate recorded runs instead (repeatable)")
    p.add_argument("--extend", action="append", default=[],
                   help="further replicates of loaded cells (recorded with --first): appended (repeatable)")
    p.add_argument("--against", action="append", default=[],
                   help="older records of the same cells: the default rule before -> after (repeatable)")
    p.add_argument("--cells", action="store_true", help="print every cell (coverage/width per rule)")
    p.add_argument("--grid", action="store_true", help="print the default rule's rows in docs/numbers.md's format")
    p.add_argument("--summary", action="store_true", help="the grid's summary: docs/numbers.md's table per kind x n")
    p.add_argument("--margins", action="store_true", help="the bracket interval widened by SDs and gaps: the trade-off")
    p.add_argument("--spread", action="store_true", help="the chosen degree's coverage, and the bootstrap SD's fit")
    p.add_argument("--inner-spread", action="store_true",
                   help="(records made with --inner) what the correction adds to the finest candidate's fluctuation")
    p.add_argument("--width", action="store_true", help="where the union's width comes from, in the wide cells")
    p.add_argument("--null-join", action="store_true",
                   help="the default with and without the calibration test's 0 (computed for records made before it)")
    a = p.parse_args()
    cells = {}
    for path in a.load:
        with open(path, "rb") as f:
            cells.update(pickle.load(f))
    for path in a.extend:
        with open(path, "rb") as f:
            extend(cells, pickle.load(f))
    if not a.load:
        zoo = socal.synthetic.validation_zoo()
        names = a.members.split(",") if a.members else list(zoo)
        for kind in a.kind.split(","):
            for n in [int(float(s)) for s in a.sizes.split(",")]:
                for name in names:
                    for h in [float(Fraction(s)) for s in a.hs.split(",")]:
                        pop, t0 = zoo[name].population, time.perf_counter()
                        truth = (pop.ce2(h) if kind == "ce2" else pop.ce1(h)).value
                        jobs = [(kind, name, h, n, r, a.n_boot, a.inner) for r in range(a.first, a.first + a.reps)]
                        cells[(kind, name, round(1 / h), n)] = dict(truth=truth, held_out=zoo[name].held_out,
                                                                    first=a.first,
                                                                    rows=list(iter_jobs(record, jobs, n_jobs=a.jobs)))
                        print(f"recorded {kind} {name} 1/{round(1 / h)} n={n}: {time.perf_counter() - t0:.0f} s",
                              flush=True)
                        if a.save:
                            with open(a.save, "wb") as f:
                                pickle.dump(cells, f)
    if a.against:
        before = {}
        for path in a.against:
            with open(path, "rb") as f:
                before.update(pickle.load(f))
        return against(cells, before, 0.9)
    if a.grid:
        return grid(cells, 0.9, 0.95)
    if a.summary:
        return summary(cells, 0.9, 0.95)
    if a.margins:
        return margins(cells, 0.9)
    if a.spread:
        return spread(cells, 0.9)
    if a.width:
        return width_sources(cells, 0.9)
    if a.null_join:
        return null_join(cells, 0.9, a.jobs)
    if a.inner_spread:
        return inner_spread(cells)
    evaluate(cells, 0.9, a.cells)


if __name__ == "__main__":
    main()
