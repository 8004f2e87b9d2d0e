"""What each ``socal`` subcommand does, given its parsed arguments: read, compute, print, write.

The parser (:mod:`socal.cli`) maps each subcommand to one function here; the report text of ``socal estimate`` is
:mod:`socal.report`, the checks of output paths that run before any work are :mod:`socal.files`, and the chunk
filter that leaves out rows with too few labels is :class:`socal.io.EnoughLabels`.
"""

from __future__ import annotations

import csv
import json
import sys

import numpy as np

from .files import (atomic_write, check_image_format, check_output_path, check_output_paths, check_table_path,
                    require_extra, save_figure, write_text_atomic)
from .io import EnoughLabels
from .pipeline import N_BOOT
from .report import candidates_table, estimate_line

__all__ = ["CI", "UPPER", "REAL_DEFAULTS", "estimate_command", "evaluate_command", "demo_command", "reproduce_decision",
           "reproduce_recalibration", "reproduce_rate", "reproduce_real_labels", "reproduce_real_models"]


CI, UPPER = 0.9, 0.95  # the CLI's defaults for --ci and --upper (--n-boot's is the API's, N_BOOT)


def _require_backend(args):
    if getattr(args, "backend", "loky") == "dask":
        require_extra(f"{args.command} --backend dask", "dask", "dask", "distributed", "joblib")


def _backend_of(args):
    from .parallel import backend

    return backend(args.backend, scheduler=args.scheduler)


def estimate_command(args):
    """``socal estimate``: CE2 and CE1 of a file's perturbed scores, streamed in chunks (rows with too few labels left
    out and reported), printed as lines or JSON; resumable with ``--checkpoint``."""
    import warnings

    from .estimators import ce1, ce2
    from .io import read_chunks

    given = [flag for flag, value in (("--ci", args.ci), ("--upper", args.upper), ("--n-boot", args.n_boot))
             if value is not None]
    if args.no_interval and given:  # they were ignored
        raise ValueError(f"--no-interval runs no bootstrap, so {', '.join(given)} would do nothing; drop "
                         f"{'them' if len(given) > 1 else 'it'}, or drop --no-interval")
    reader = EnoughLabels(read_chunks(args.file, mean=args.mean, var=args.var, chunk_rows=args.chunk_rows,
                                      **_label_columns(args)), args.min_labels, args.file, _why_few(args))
    ci = None if args.no_interval else _or(args.ci, CI)
    upper = None if args.no_interval else _or(args.upper, UPPER)
    kw = dict(h=args.h, ci=ci, upper=upper, debias=not args.no_interval, n_boot=args.n_boot,
              progress=_progress_flag(args))
    if args.checkpoint:  # one file for both estimates: their passes are numbered in one run
        from .checkpoint import Checkpoint

        kw["checkpoint"] = Checkpoint(args.checkpoint).start("socal estimate", dict(
            {k: v for k, v in kw.items() if k != "progress"}, seed=args.seed, chunk_rows=args.chunk_rows,
            min_labels=args.min_labels))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r2 = ce2(chunks=reader, rng=args.seed, **kw)
        r1 = ce1(chunks=reader, rng=args.seed, **kw)
    notes = sorted({str(w.message) for w in caught})
    if reader.dropped:
        notes.append(reader.note())
    for note in notes:
        print(f"socal estimate: note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({"ce2": r2.to_dict(), "ce1": r1.to_dict()}, indent=2))
    else:
        for res in (r2, r1):
            print(estimate_line(res))
            if args.candidates:
                print(candidates_table(res))
    return 0


def _or(value, default):
    return default if value is None else value


def _quick(args, name, quick, default):
    """--quick's value of ``name`` (repeats, seeds), else the option's or its default; --quick with the option given
    is refused (the option was ignored)."""
    value = getattr(args, name)
    if args.quick and value is not None:
        raise ValueError(f"--quick runs {quick} {name}, so --{name} {value} would do nothing; drop one of them")
    return quick if args.quick else _or(value, default)


def _progress_flag(args):
    """--progress or --no-progress as given; else on when stderr is a terminal (a log file or a pipe would collect
    every redraw of the bars) and no --json is printed."""
    if args.progress is not None:
        return args.progress
    return not getattr(args, "json", False) and sys.stderr.isatty()


def _label_columns(args):
    """The label arguments of a command as keyword arguments of socal.io.read_chunks."""
    if args.labels is not None:
        label_cols = [c.strip() for c in args.labels.split(",") if c.strip()]
        if not label_cols:
            raise ValueError("--labels needs at least one column name (comma-separated)")
        if args.positives or args.trials:
            raise ValueError("give either --labels or --positives and --trials, not both")
        return {"labels": label_cols}
    if args.positives and args.trials:
        return {"positives": args.positives, "trials": args.trials}
    raise ValueError("give the label columns (--labels Y1,Y2) or the count columns (--positives P --trials K)")


def _why_few(args):
    """Why a row has fewer labels than --min-labels: empty label cells, or the trials column's own count."""
    return "missing votes" if args.labels is not None else f"column {args.trials!r} below it"


def _evaluate_checkpoint(args):
    """evaluate's checkpoint: its rows in chunks of --chunk-rows, the options that change no number left out."""
    if not args.checkpoint:
        return None
    from .checkpoint import Checkpoint

    return Checkpoint(args.checkpoint, rows=args.chunk_rows).start("socal evaluate", dict(
        h=args.h, ci=args.ci, n_boot=args.n_boot, seed=args.seed, min_labels=args.min_labels))


def _multiclass_inputs(args):
    """(probs or (mean, var), counts or votes, class names) of 'socal evaluate --classes'."""
    import re

    from .io import column_names, read_columns

    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    if len(classes) < 3 or len(set(classes)) != len(classes):
        raise ValueError(f"--classes needs at least 3 distinct class names; got {args.classes!r}")
    if args.positives or args.trials:
        raise ValueError("--positives/--trials are for two classes; with --classes use --counts 'n_{c}' or --labels")
    names = column_names(args.file)
    npz = str(args.file).lower().endswith(".npz")
    if args.members:
        if npz:
            probs = read_columns(args.file, [args.members])[args.members]
        else:
            if "{m}" not in args.members or "{c}" not in args.members:
                raise ValueError(f"--members must be a pattern with {{m}} and {{c}}, e.g. 'p{{m}}_{{c}}'; got "
                                 f"{args.members!r}")
            rx = re.compile("^" + re.escape(args.members).replace(re.escape("{m}"), r"(\d+)").replace(
                re.escape("{c}"), "(?:" + "|".join(map(re.escape, classes)) + ")") + "$")
            members = sorted({int(mt.group(1)) for n_ in names if (mt := rx.match(n_))})
            if len(members) < 2:
                raise ValueError(f"--members {args.members!r} matches {len(members)} member(s) in {args.file}; "
                                 f"an ensemble needs at least 2")
            cols = [args.members.replace("{m}", str(j)).replace("{c}", c) for j in members for c in classes]
            got = read_columns(args.file, cols)
            probs = np.stack([np.column_stack([got[args.members.replace("{m}", str(j)).replace("{c}", c)]
                                               for c in classes]) for j in members], axis=1)
        scores = (probs, None)
    else:
        if not args.mean or not args.var or "{c}" not in args.mean + args.var:
            raise ValueError("with --classes give --members 'p{m}_{c}', or --mean 'mean_{c}' and --var 'var_{c}' "
                             "(patterns with {c})")
        got = read_columns(args.file, [p.replace("{c}", c) for p in (args.mean, args.var) for c in classes])
        scores = tuple(np.column_stack([got[p.replace("{c}", c)] for c in classes]) for p in (args.mean, args.var))
    if args.counts:
        key = [args.counts] if npz else [args.counts.replace("{c}", c) for c in classes]
        got = read_columns(args.file, key)
        votes = dict(counts=got[args.counts] if npz else np.column_stack([got[k] for k in key]))
    elif args.labels:
        cols = [c.strip() for c in args.labels.split(",")]
        got = read_columns(args.file, cols)
        votes = dict(labels=np.nan_to_num(np.column_stack([got[c] for c in cols]), nan=-1.0))
    else:
        raise ValueError("with --classes give the votes: --counts 'n_{c}' or --labels (columns of class indices)")
    return scores, votes, classes


def _evaluate_multiclass(args):
    from .multiclass import evaluate_multiclass

    if args.checkpoint:
        raise ValueError("--checkpoint is not available with --classes yet")
    (first, second), votes, classes = _multiclass_inputs(args)
    if second is None:
        from .members import from_members

        first, second = from_members(first)
    res = evaluate_multiclass(first, second, **votes, names=classes, h=args.h, ci=_or(args.ci, CI),
                              n_boot=_or(args.n_boot, N_BOOT), rng=args.seed, progress=_progress_flag(args))
    print(json.dumps(res.to_dict(), indent=2, default=float) if args.json else res.summary())
    if args.out:
        from .io import write_table

        mean = np.asarray(first, dtype=float)
        var = np.asarray(second, dtype=float)
        var = np.diagonal(var, axis1=1, axis2=2) if var.ndim == 3 else var
        cols = {"row": np.arange(len(mean))}  # the input row (0-based): the key back to the input file
        for j, c in enumerate(classes):  # the predictor's class means (a probability vector per row) and variances
            cols[f"mean_{c}"], cols[f"var_{c}"] = mean[:, j], var[:, j]
        for c, e in zip(classes, res.classes):  # each class perturbed on its own: not a probability vector
            cols[f"perturbed_mean_{c}"], cols[f"perturbed_var_{c}"] = e.mean, e.var
        write_table(args.out, cols)
        if not args.json:
            print(f"class means and variances (mean_* sum to 1 per row), and each class's perturbed scores "
                  f"(perturbed_*, one class at a time: they do not sum to 1); one row per input row, 'row' its "
                  f"index: {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from .files import save_figure
        from .plot import multiclass_figure

        fig = multiclass_figure(res, **votes, mean=first, cov=second, rng=args.seed)
        save_figure(fig, args.plot, dpi=110)
        plt.close(fig)
        if not args.json:
            print(f"figure (per-class reliability, CE2 against the references, the covariance's trace against the "
                  f"votes): {args.plot}")
    if args.report:
        _write_page(args, res, votes, scores=(first, second))
    return 0


def _command_line(args):
    """The command as typed, for the report's "reproduce" section."""
    import shlex

    return "socal " + " ".join(shlex.quote(a) for a in getattr(args, "argv", sys.argv[1:]))


def _write_page(args, res, votes, scores=None):
    """``--report``: the self-contained HTML page (:mod:`socal.page`); ``scores``: a multiclass predictor's raw
    (mean, cov), for the covariance's panel."""
    import matplotlib

    matplotlib.use("Agg")
    from .page import write_report

    write_report(args.report, res, **votes, command=_command_line(args), rng=args.seed, scores=scores)
    if not args.json:
        print(f"report (verdict, tables, figures, and how to reproduce them; one file): {args.report}")


def evaluate_command(args):
    """``socal evaluate``: the guided evaluation of raw scores (:func:`socal.evaluate`, or its multiclass form with
    ``--classes``), its report, and the perturbed scores and figure written where asked (outputs checked first)."""
    import warnings

    from ._evaluate import evaluate
    from .io import MissingVotesWarning, read_all, read_chunks, write_table

    check_output_paths(args, "out", "plot", "report")
    check_table_path(args.out, "--out")
    if args.plot:
        require_extra("evaluate --plot", "plot", "matplotlib")
        check_image_format(args.plot, "--plot")
    if args.report:
        require_extra("evaluate --report", "plot", "matplotlib")
        if not str(args.report).lower().endswith((".html", ".htm")):
            raise ValueError(f"--report {args.report}: the report is an HTML page; give a file name ending in .html")
    if args.classes:
        return _evaluate_multiclass(args)
    if args.members or args.counts:
        raise ValueError("--members and --counts are for a multiclass predictor: give --classes too")
    if not args.mean or not args.var:
        raise ValueError("the following arguments are required: --mean, --var (or --classes for C >= 3 classes)")

    reader = read_chunks(args.file, mean=args.mean, var=args.var, chunk_rows=args.chunk_rows,
                         **_label_columns(args))
    enough = EnoughLabels(reader, args.min_labels, args.file, _why_few(args))  # as 'estimate' streams them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingVotesWarning)  # reported below, with the rows left out
        parts = list(enough.chunks())
    if not parts:
        raise ValueError(f"{args.file} has no data rows")
    if enough.dropped:
        print(f"socal evaluate: note: {enough.note()}", file=sys.stderr)
    m, v, labels, counts = read_all(parts)
    res = evaluate(m, v, labels, counts=counts, h=args.h, ci=_or(args.ci, CI), n_boot=_or(args.n_boot, N_BOOT),
                   rng=args.seed, progress=_progress_flag(args),
                   checkpoint=_evaluate_checkpoint(args))
    # the numbers first: a file that cannot be written must not cost the result
    if args.json:
        print(json.dumps(res.to_dict(), indent=2))
    else:  # the whole test (where, what it would miss), then the size of the error
        print(res.summary(full_test=True))
    sys.stdout.flush()
    failed = 0
    if args.out:
        try:
            write_table(args.out, {"perturbed_mean": res.mean, "perturbed_var": res.var})
            if not args.json:
                rows = ("one row per input row" if not enough.dropped else
                        f"one row per input row kept: {enough.dropped} left out, see the note")
                print(f"perturbed scores ({rows}, same order): {args.out}")
        except OSError as exc:
            print(f"socal evaluate: could not write --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
            failed = 1
    if args.plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from .plot import evaluation_figure

            fig = evaluation_figure(res.mean, res.var, labels, counts=counts, h=res.h, rng=args.seed)
            save_figure(fig, args.plot, dpi=110)
            plt.close(fig)
            if not args.json:
                print(f"figure (reliability before/after recalibration, residual map): {args.plot}")
        except OSError as exc:
            print(f"socal evaluate: could not write --plot {args.plot}: {exc.strerror or exc}", file=sys.stderr)
            failed = 1
    if args.report:
        try:
            _write_page(args, res, {"labels": labels, "counts": counts})
        except OSError as exc:
            print(f"socal evaluate: could not write --report {args.report}: {exc.strerror or exc}", file=sys.stderr)
            failed = 1
    return failed


def demo_command(args):
    """``socal demo``: the estimators on the toy population, printed beside its exact truth (``--write``: its raw
    scores to a file, for ``socal evaluate``)."""
    from . import synthetic
    from .estimators import ce1, ce2
    from .io import write_table

    pop = synthetic.toy_population()
    if args.write:
        if args.h is not None:  # it was ignored: the file holds the raw scores, for 'socal evaluate' to perturb
            raise ValueError("--write saves the raw (unperturbed) scores, so --h would do nothing; drop --h (and "
                             "give it to 'socal evaluate' instead)")
        check_output_path(args.write, "--write")
        check_table_path(args.write, "--write")
        m, v, _, y = pop.sample_raw(args.n, rng=args.seed)
        write_table(args.write, {"mean": m, "var": v, "y1": y[:, 0].astype(int), "y2": y[:, 1].astype(int)})
        print(f"wrote {args.n} rows of raw (unperturbed) scores and two labels per item to {args.write}; evaluate "
              f"them with: socal evaluate {args.write} --mean mean --var var --labels y1,y2")
        return 0
    h = _or(args.h, 1 / 16)
    try:  # first: an h the exact truth cannot resolve is refused before any sampling
        truth2, truth1 = pop.ce2(h), pop.ce1(h)
    except ValueError as exc:
        raise ValueError(f"--h {h:g} is narrower than the demo's exact truth resolves: {exc}") from None
    print(f"A synthetic predictor with 6 raw scores, sech-perturbed at h = {h:g}; n = {args.n} 2-snapshots.")
    m, v, y = pop.sample(args.n, h=h, rng=args.seed)
    r2 = ce2(m, v, y, h=h, ci=0.9, upper=0.95, rng=args.seed, progress=_progress_flag(args))
    r1 = ce1(m, y, h=h, ci=0.9, upper=0.95, rng=args.seed, progress=_progress_flag(args))
    print(estimate_line(r2) + f"\n    exact CE2^pert = {truth2.value:.4f}")
    print(estimate_line(r1) + f"\n    exact CE1^pert = {truth1.value:.4f}")
    return 0


def _save_figure(draw, path):
    """Draw with ``draw()`` (returns an Axes or an array of them) and save to ``path``; matplotlib is optional."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no figure; pip install 'socal[plot]')")
        return
    ax = draw()
    fig = (ax[0] if hasattr(ax, "__len__") else ax).figure
    fig.tight_layout()
    save_figure(fig, path, dpi=150)
    plt.close(fig)
    print(f"figure: {path}")


def _out_folder(args, create=True):
    """The folder of --out, created with its parents unless ``create`` is False (the experiment creates it); a file
    there is a ValueError naming it, before any work (mkdir's "[Errno 17] File exists" before)."""
    import pathlib

    out = pathlib.Path(args.out)
    if args.out == "-":  # standard output's Unix name, as for the file outputs (check_output_path)
        raise ValueError("--out -: standard output carries the report; give a folder for the figures and tables "
                         "(nothing was computed)")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {args.out} is a file; give a folder for the figures and tables")
    if create:
        out.mkdir(parents=True, exist_ok=True)
    return out


def reproduce_decision(args):
    """``socal reproduce decision``: the paper's decision experiment (:mod:`socal.experiments.decision`)."""
    from .experiments.decision import plot_decision, report, run_decision, shape_checks

    repeats = _quick(args, "repeats", 20, 200)
    _require_backend(args)
    out = _out_folder(args)
    with _backend_of(args):
        res = run_decision(repeats=repeats, rng=args.seed, progress=_progress_flag(args), n_jobs=args.jobs)
    rows = res.to_rows()
    with atomic_write(out / "decision.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    checks = shape_checks(res)
    write_text_atomic(out / "decision_checks.json", json.dumps(checks, indent=2))
    print(report(res, checks))
    _save_figure(lambda: plot_decision(res), out / "decision.png")
    print(f"table: {out / 'decision.csv'}; checks: {out / 'decision_checks.json'}")
    return 0


def reproduce_recalibration(args):
    """``socal reproduce recalibration``: the paper's recalibration experiment
    (:mod:`socal.experiments.recalibration`)."""
    require_extra("reproduce recalibration", "experiments", "sklearn")
    from .experiments.recalibration import PAPER, plot_recalibration, report, run_recalibration

    seeds = _quick(args, "seeds", 3, 20)
    _require_backend(args)
    out = _out_folder(args)
    with _backend_of(args):
        res = run_recalibration(seeds=seeds, rng=args.seed, log2_sobol=14 if args.quick else 18,
                                progress=_progress_flag(args), n_jobs=args.jobs)
    summ = res.summary()
    write_text_atomic(out / "recalibration.json", json.dumps({"ours": summ, "paper": PAPER}, indent=2))
    print(report(res, seeds))
    _save_figure(lambda: plot_recalibration(res), out / "recalibration.png")
    return 0


def reproduce_rate(args):
    """``socal reproduce rate``: the paper's rate experiment (:mod:`socal.experiments.rate`)."""
    import time

    require_extra("reproduce rate", "experiments", "sklearn", "joblib")
    seeds = _quick(args, "seeds", 3, 20)
    _require_backend(args)
    from .experiments.rate import plot_rate, report, run_rate

    out = _out_folder(args, create=False)  # run_rate creates it, after the backend's options are checked
    t0 = time.perf_counter()
    with _backend_of(args):
        if args.quick:
            rows = run_rate(seeds=seeds, sizes=(500, 2000, 10_000), out=out / "quick", n_jobs=args.jobs, log2_sobol=15,
                            progress=_progress_flag(args))
        else:
            rows = run_rate(seeds=seeds, out=out, n_jobs=args.jobs, progress=_progress_flag(args))
    print(report(rows, time.perf_counter() - t0, out))
    _save_figure(lambda: plot_rate(rows), out / "rate.png")
    return 0


REAL_DEFAULTS = {"weather": 1, "cifar10h": "cat", "chaosnli": "n", "rte": 1, "temp": 1, "dog": 1}


def reproduce_real_labels(args):
    """``socal reproduce real-labels``: the methods on a real multi-annotator dataset
    (:mod:`socal.experiments.real_labels`)."""
    import pathlib
    import warnings

    from . import datasets
    from .experiments.real_labels import PAPER_AT_5, plot_yield, run_real_labels

    if not pathlib.Path(args.data_dir).is_dir():
        raise ValueError(f"--data-dir {args.data_dir!r} is not a folder (it should hold one sub-folder per data set)")
    _require_backend(args)
    names = list(REAL_DEFAULTS) if args.dataset == "all" else [args.dataset]
    if args.positive is not None and len(names) > 1:  # it was ignored: each data set has its own classes
        raise ValueError(f"--positive {args.positive} names one data set's class, and --dataset all runs "
                         f"{len(names)} data sets with their own; drop --positive, or name one --dataset")
    out = _out_folder(args)
    summary = {}
    for name in names:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = datasets.load(name, args.data_dir, **({"max_votes": 20} if name == "weather" else {}))
        for w in caught:
            print(f"  note: {w.message}")
        positive = args.positive if (args.positive is not None and len(names) == 1) else REAL_DEFAULTS[name]
        if isinstance(data.classes[0], int) and isinstance(positive, str) and positive.isdigit():
            positive = int(positive)
        with _backend_of(args):
            res = run_real_labels(data, positive=positive, repeats=args.repeats, rng=args.seed,
                                  progress=_progress_flag(args), n_jobs=args.jobs)
        at5 = res.at(0.05)
        lift = res.auc_lift()
        summary[name] = {"positive": str(positive), "cohorts": res.cohort_sizes, "yield_at_5pct": at5,
                         "auc_lift_2d_second_order": lift}
        print(f"{data.name}, one-vs-rest on {positive!r}, cohorts {res.cohort_sizes}, {args.repeats} repeats")
        print(f"  {'method':<20}{'yield at 5%':>14}   AUC lift of 2-D second-order [95% CI], win fraction")
        for m, (mu, half) in at5.items():
            extra = ""
            if m in lift:
                L = lift[m]
                extra = f"   {L['lift']:6.2f} [{L['ci95'][0]:.2f}, {L['ci95'][1]:.2f}], {L['win_fraction']:.3f}"
            print(f"  {m:<20}{mu:>8.1f} +-{half:4.1f}{extra}")
        if name == "weather":
            print(f"  paper at 5%: {PAPER_AT_5}")
        _save_figure(lambda: plot_yield(res), out / f"yield_{name}.png")
    write_text_atomic(out / "real_labels.json", json.dumps(summary, indent=2, default=str))
    print(f"summary: {out / 'real_labels.json'}")
    return 0


def reproduce_real_models(args):
    """``socal reproduce real-models PART``: the real-ensemble tables of the docs, printed as the docs hold them
    (:data:`socal.experiments.real_models.PARTS`; tests/test_docs_reproduce.py compares the two)."""
    from .experiments.real_models import PARTS

    print(PARTS[args.part](args.data_dir, rng=args.seed))
    return 0
