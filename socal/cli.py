"""The ``socal`` command line: estimate, demo, and subcommands registered by other packages (``socal audit``).

Subcommands from other distributions register under the entry-point group ``socal.commands`` as a function
``register(subparsers)`` that adds a parser and sets ``func``; socal itself never imports them by name (the
``verify`` package imports socal, never the reverse).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from importlib.metadata import entry_points

import numpy as np

from .files import atomic_write, save_figure, write_text_atomic
from .pipeline import N_BOOT

__all__ = ["main", "require_extra", "check_output_path", "check_output_paths"]


def _bandwidth_or_auto(text):
    """evaluate's --h: 'auto' (chosen from the data, :mod:`socal.bandwidth`) or a bandwidth as :func:`_bandwidth`."""
    return "auto" if text.strip() == "auto" else _bandwidth(text)


def _bandwidth(text):
    """--h: a positive number, as a decimal (0.0625) or a fraction (1/16); or two, 'h_mean,h_var' (1/16,1/64)."""
    from fractions import Fraction

    parts = text.split(",")
    try:
        if "_" in text:  # Python reads '1_6' as 16: a typo of 1/6 would blur by 16
            raise ValueError
        hs = [float(Fraction(p.strip())) for p in parts]
    except (ValueError, ZeroDivisionError):
        hs = []
    if len(parts) > 2 or not hs or not all(h > 0 and np.isfinite(h) for h in hs):
        raise argparse.ArgumentTypeError(f"must be a positive number such as 0.0625 or 1/16, or two for the mean and "
                                         f"the variance axes such as 1/16,1/64 (got {text!r})")
    return hs[0] if len(hs) == 1 else tuple(hs)


def _level(text):
    try:
        x = float(text) if "_" not in text else float("nan")  # Python reads '0.9_5' as 0.95
    except ValueError:
        x = float("nan")
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"must be a confidence level in (0, 1), e.g. 0.9 (got {text!r})")
    return x


def _int_in(lo, hi):
    def parse(text):
        try:
            # ASCII digits only, as _level reads levels: Python's int() also takes '1_000' and other scripts' digits
            if not text.isascii() or "_" in text:
                raise ValueError(text)
            x = int(text)
        except ValueError:
            # scientific notation for a whole number ('--n 1e6', '2.5e5'), as people write sizes; 1.5 is not whole
            try:
                f = float(text) if "_" not in text and text.isascii() else math.nan
            except ValueError:
                f = math.nan
            if not (math.isfinite(f) and f == int(f)):
                raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None
            x = int(f)
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"must be in [{lo}, {hi}] (got {x})")
        return x

    return parse


def require_extra(command, extra, *modules):
    """Fail before any work when an optional dependency of ``command`` is missing, naming the pip command."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"'socal {command}' needs {', '.join(missing)}, which is not installed; install it with: "
                          f"pip install 'socal[{extra}]'")


def _require_backend(args):
    if getattr(args, "backend", "loky") == "dask":
        require_extra(f"{args.command} --backend dask", "dask", "dask", "distributed", "joblib")


def _backend_of(args):
    from .parallel import backend

    return backend(args.backend, scheduler=args.scheduler)


def _parallel_args(parser, jobs=1):
    parser.add_argument("--jobs", type=_int_in(1, 1024), default=jobs,
                        help=f"parallel replicates (joblib; default {jobs}); the numbers do not depend on it")
    parser.add_argument("--backend", choices=("loky", "dask"), default="loky",
                        help="where replicates run: local processes (loky) or a dask cluster (same numbers)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="with --backend dask: the scheduler's address (default: a local 2-worker cluster)")


def _fmt(res):
    ci = "" if res.ci is None else f"  {round(res.ci.level * 100)}% CI [{res.ci.low:.4f}, {res.ci.high:.4f}]"
    if res.null_pvalue is not None and res.null_pvalue >= 1 - res.ci.level:  # where the lower end comes from
        ci += f" (reaches 0: the calibration test of {res.kind.upper()} = 0 does not reject, p = {res.null_pvalue:.2f})"
    up = "" if res.upper is None else f"  {round(res.upper.level * 100)}% upper bound {res.upper.value:.4f}"
    what = "bias-corrected" if res.debiased is not None else "plug-in"
    plug = "" if res.debiased is None else f"plug-in {res.plugin:.4f}; "
    return (f"{res.kind.upper()} = {res.estimate:.4f} ({what}){ci}{up}  ({plug}mean term {res.mean_term:.4f}, "
            f"moment term {res.moment_term:.4f}; degree {res.degree}, alpha {res.alpha:g}, n {res.n})")


def _fmt_candidates(res):
    """The degrees Lepski's rule compared (``res.candidates``), one line each: where the union interval comes from."""
    if res.ci is None:
        return "  (no bootstrap: one degree, the plug-in)"
    level = f"{round(res.ci.level * 100)}% CI"
    lines = [f"  {'degree':>6} {'alpha':>7} {'plug-in':>8} {'bias low':>9} {'bias high':>9} {'noise SD':>9} "
             f"{'estimate':>9}   {level:<18}"]
    for c in res.candidates:
        lines.append(f"  {c.degree:>6} {c.alpha:>7g} {c.plugin:>8.4f} {c.bias_low:>9.4f} {c.bias_high:>9.4f} "
                     f"{c.noise_sd:>9.4f} {c.estimate:>9.4f}   [{c.ci.low:.4f}, {c.ci.high:.4f}]"
                     + ("   <- reported" if c.chosen else ""))
    if res.null_pvalue is not None:
        lines.append(f"  calibration test of {res.kind.upper()} = 0 on the same scores: p = {res.null_pvalue:.3g}"
                     + (f" >= {1 - res.ci.level:.2g}, so the interval reaches 0" if res.null_pvalue >= 1 - res.ci.level
                        else ""))
    return "\n".join(lines)


def _estimate(args):
    import warnings

    from .estimators import ce1, ce2
    from .io import read_chunks

    given = [flag for flag, value in (("--ci", args.ci), ("--upper", args.upper), ("--n-boot", args.n_boot))
             if value is not None]
    if args.no_interval and given:  # they were ignored
        raise ValueError(f"--no-interval runs no bootstrap, so {', '.join(given)} would do nothing; drop "
                         f"{'them' if len(given) > 1 else 'it'}, or drop --no-interval")
    reader = _EnoughLabels(read_chunks(args.file, mean=args.mean, var=args.var, chunk_rows=args.chunk_rows,
                                      **_label_columns(args)), args.min_labels, args.file, _why_few(args))
    ci = None if args.no_interval else _or(args.ci, CI)
    upper = None if args.no_interval else _or(args.upper, UPPER)
    kw = dict(h=args.h, ci=ci, upper=upper, debias=not args.no_interval, n_boot=_or(args.n_boot, N_BOOT),
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
            print(_fmt(res))
            if args.candidates:
                print(_fmt_candidates(res))
    return 0


def _data_args(parser, mean_help, var_help, required=True):
    """The file and column arguments shared by 'estimate' and 'evaluate' (``required`` False: 'evaluate', whose
    multiclass mode names its columns by patterns)."""
    parser.add_argument("file", help="a .csv or .tsv file (header row, UTF-8; also compressed as .gz, .bz2 or .xz) "
                                     "or a .parquet file")
    parser.add_argument("--mean", required=required, help=mean_help)
    parser.add_argument("--var", required=required, help=var_help)
    parser.add_argument("--labels",
                        help="comma-separated 0/1 label columns, at least two; an empty cell is a missing vote")
    parser.add_argument("--positives", help="instead of --labels: column counting the positive labels per item")
    parser.add_argument("--trials", help="with --positives: column counting the labels per item (at least 2)")


CI, UPPER = 0.9, 0.95  # the CLI's defaults for --ci and --upper (--n-boot's is the API's, N_BOOT)


def _or(value, default):
    return default if value is None else value


def _quick(args, name, quick, default):
    """--quick's value of ``name`` (repeats, seeds), else the option's or its default; --quick with the option given
    is refused (the option was ignored)."""
    value = getattr(args, name)
    if args.quick and value is not None:
        raise ValueError(f"--quick runs {quick} {name}, so --{name} {value} would do nothing; drop one of them")
    return quick if args.quick else _or(value, default)


def _run_args(parser, seed_help):
    """The interval, chunking and seed arguments shared by 'estimate' and 'evaluate'."""
    # None stands for the default, so that 'estimate --no-interval' can tell an option given from one left out
    parser.add_argument("--ci", type=_level, default=None,
                        help="confidence level of the bootstrap intervals (default 0.9)")
    parser.add_argument("--n-boot", type=_int_in(20, 100_000), default=None, help="bootstrap replicates (default 200)")
    parser.add_argument("--chunk-rows", type=_int_in(1000, 10**9), default=1_000_000,
                        help="rows read at a time (memory is bounded by this; default 1,000,000)")
    parser.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help=seed_help)
    parser.add_argument("--checkpoint", metavar="FILE",
                        help="save the run's statistics to this file as it goes (atomically); after a kill, the same "
                             "command with the same file resumes where it stopped and prints the same numbers. A "
                             "file from other settings or data is refused. The state is saved after each pass and each "
                             "chunk of --chunk-rows rows.")
    _progress_arg(parser, "rows read, bootstrap replicates; default: on when stderr is a terminal and --json is not "
                          "given")


def _progress_arg(parser, what="default: on when stderr is a terminal"):
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help=f"progress bars on stderr ({what})")


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


class _EnoughLabels:
    """A reader's chunks without the rows of fewer than ``least`` labels (missing votes: empty label cells), so
    that 'estimate' streams what 'evaluate' keeps in memory; every pass leaves out the same rows, and counts them
    (``dropped``, ``rows``, the data rows of the first few in ``first``)."""

    def __init__(self, reader, least, name, why="missing votes"):
        self.reader, self.least, self.name, self.why = reader, least, name, why
        self.dropped = self.rows = 0
        self.first = []

    def chunks(self):
        self.dropped = self.rows = 0
        self.first = []
        for chunk in self.reader.chunks():
            start, self.rows = self.rows, self.rows + len(chunk["mean"])
            if chunk.get("counts") is None:
                k = np.shape(chunk["labels"])[1]
                if k < self.least:
                    raise ValueError(f"every row of {self.name} has fewer than {self.least} labels (--min-labels): "
                                     f"it has {k} label columns")
                yield chunk
                continue
            few = chunk["counts"][1] < self.least
            if few.any():
                rows = np.flatnonzero(few)
                self.dropped += rows.size
                self.first += [start + int(r) + 1 for r in rows[: max(0, 5 - len(self.first))]]
                keep = ~few
                if not keep.any():
                    continue
                chunk = {key: (None if val is None else tuple(x[keep] for x in val) if key == "counts" else val[keep])
                         for key, val in chunk.items()}
            yield chunk
        if self.rows and self.dropped == self.rows:
            raise ValueError(f"every row of {self.name} has fewer than {self.least} labels (--min-labels)")

    def note(self):
        first = ", ".join(map(str, self.first)) + (", ..." if self.dropped > len(self.first) else "")
        return (f"left out {self.dropped} of {self.rows} rows with fewer than {self.least} labels ({self.why}; "
                f"data rows {first}); --min-labels sets the threshold (at least 2)")


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

        cols = {}
        for c, e in zip(classes, res.classes):
            cols[f"perturbed_mean_{c}"], cols[f"perturbed_var_{c}"] = e.mean, e.var
        write_table(args.out, cols)
        if not args.json:
            print(f"perturbed class scores (one row per input row, same order): {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from .files import save_figure
        from .plot import multiclass_figure

        fig = multiclass_figure(res, **votes, rng=args.seed)
        save_figure(fig, args.plot, dpi=110)
        plt.close(fig)
        if not args.json:
            print(f"figure (per-class reliability, CE2 against the references): {args.plot}")
    return 0


def _evaluate(args):
    import warnings

    from ._evaluate import evaluate
    from .io import MissingVotesWarning, read_all, read_chunks, write_table

    check_output_paths(args, "out", "plot")
    check_table_path(args.out, "--out")
    if args.plot:
        require_extra("evaluate --plot", "plot", "matplotlib")
        _check_image_format(args.plot, "--plot")
    if args.classes:
        return _evaluate_multiclass(args)
    if args.members or args.counts:
        raise ValueError("--members and --counts are for a multiclass predictor: give --classes too")
    if not args.mean or not args.var:
        raise ValueError("the following arguments are required: --mean, --var (or --classes for C >= 3 classes)")

    reader = read_chunks(args.file, mean=args.mean, var=args.var, chunk_rows=args.chunk_rows,
                         **_label_columns(args))
    enough = _EnoughLabels(reader, args.min_labels, args.file, _why_few(args))  # as 'estimate' streams them
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
    return failed


def check_output_paths(args, *names):
    """Refuse, before any work, an output path whose folder does not exist, that is a folder, that is the input
    file (``args.file``: writing there would replace the data with the results) or that another output names too
    (the later file would replace the earlier)."""
    import os

    given = [(name, getattr(args, name, None)) for name in names if getattr(args, name, None)]
    for i, (a, pa) in enumerate(given):
        for b, pb in given[i + 1:]:
            if os.path.abspath(pa) == os.path.abspath(pb):
                raise ValueError(f"--{a} and --{b} name the same file ({pa}): one would replace the other; give two "
                                 f"file names (nothing was computed)")
    for name in names:
        path = getattr(args, name, None)
        check_output_path(path, f"--{name}")
        source = getattr(args, "file", None)
        if path and source and os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise ValueError(f"--{name} {path} is the input file: writing it would replace the data; give another "
                             f"file name (nothing was computed)")


def _check_image_format(path, flag):
    """Refuse, before any work, an image file whose extension matplotlib cannot write (it would fail only after the
    whole evaluation); a name without an extension gets matplotlib's default format."""
    import os

    from matplotlib.backend_bases import FigureCanvasBase

    ext = os.path.splitext(path)[1][1:].lower()
    kinds = FigureCanvasBase.get_supported_filetypes()
    if ext and ext not in kinds:
        raise ValueError(f"{flag} {path}: matplotlib cannot write '.{ext}' files (it writes "
                         f"{', '.join(sorted(kinds))}); nothing was computed")


def check_table_path(path, flag):
    """Refuse, before any work, a table file socal cannot write in the format its name says: a Parquet name
    without pyarrow, or a compressed Parquet name (:func:`socal.io.write_table`); and '-', which means standard
    output to Unix tools, where socal prints its report."""
    import pathlib

    from .io import table_format

    if not path:
        return
    if path == "-":  # the Unix name of standard output, which carries the report: a file named '-' would surprise
        raise ValueError(f"{flag} -: standard output carries the report; give the table a file name (nothing was "
                         f"computed)")
    fmt, packed = table_format(pathlib.Path(path))
    if fmt != "parquet":
        return
    if packed is not None:
        raise ValueError(f"{flag} {path}: a Parquet file is compressed inside; drop the {pathlib.Path(path).suffix} "
                         f"ending (nothing was computed)")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{flag} {path}: writing Parquet needs pyarrow (pip install 'socal[parquet]'), or give a "
                         f".csv name (nothing was computed)") from None


def check_output_path(path, flag):
    """Raise ValueError (naming ``flag``) unless ``path`` can be written: its folder exists and is writable, it is
    not a folder, and it is not '-' (standard output to Unix tools, where socal prints its report).  Called before
    any work, so a typo costs nothing (``socal evaluate``, ``socal audit``)."""
    import os

    if not path:
        return
    if path == "-":  # the Unix name of standard output, which carries the report: a file named '-' would surprise
        raise ValueError(f"{flag} -: standard output carries the report; give a file name (nothing was computed)")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} does not exist (create it "
                         f"first; nothing was computed)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} is not writable (nothing "
                         f"was computed)")


def _demo(args):
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
    print(_fmt(r2) + f"\n    exact CE2^pert = {truth2.value:.4f}")
    print(_fmt(r1) + f"\n    exact CE1^pert = {truth1.value:.4f}")
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


def _reproduce_decision(args):
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


def _reproduce_recalibration(args):
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


def _reproduce_rate(args):
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


_REAL_DEFAULTS = {"weather": 1, "cifar10h": "cat", "chaosnli": "n", "rte": 1, "temp": 1, "dog": 1}


def _reproduce_real_labels(args):
    import pathlib
    import warnings

    from . import datasets
    from .experiments.real_labels import PAPER_AT_5, plot_yield, run_real_labels

    if not pathlib.Path(args.data_dir).is_dir():
        raise ValueError(f"--data-dir {args.data_dir!r} is not a folder (it should hold one sub-folder per data set)")
    _require_backend(args)
    names = list(_REAL_DEFAULTS) if args.dataset == "all" else [args.dataset]
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
        positive = args.positive if (args.positive is not None and len(names) == 1) else _REAL_DEFAULTS[name]
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


def build_parser():
    from . import __version__

    p = argparse.ArgumentParser(
        prog="socal",
        description="Is a predictor's uncertainty calibrated?  For a model that outputs a probability (mean) and "
                    "an epistemic variance (e.g. an ensemble's mean and the spread of its members), socal measures "
                    "how far both are from calibrated, using items that have two or more labels each, and checks "
                    "the theory behind the measurement.",
        epilog="Start with:  socal demo --write demo.csv  then  socal evaluate demo.csv --mean mean --var var "
               "--labels y1,y2")
    p.add_argument("--version", action="version", version=f"socal {__version__}")
    p.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("estimate", help="estimate CE2 and CE1 from a CSV or Parquet file of scores and labels",
                       description="Estimate how far a predictor's (mean, variance) are from second-order calibrated "
                                   "(CE2) and its mean from first-order calibrated (CE1), for scores that are "
                                   "already perturbed (for raw scores use 'socal evaluate'). The file holds one row "
                                   "per item: the deployed (sech-perturbed) mean and variance, and two or more 0/1 "
                                   "labels from independent annotators (or the counts of positive labels and of "
                                   "labels). Files larger than memory are read in chunks.")
    _data_args(e, "column of the predicted means in [0, 1] (after perturbation)",
               "column of the predicted variances in [0, 1/4] (after perturbation)")
    e.add_argument("--h", type=_bandwidth, default=None,
                   help="the perturbation bandwidth used to make the scores (e.g. 1/16): with it the polynomial "
                        "degree follows the paper's rule; without it, cross-validation alone picks it")
    e.add_argument("--upper", type=_level, default=None,
                   help="level of the one-sided upper confidence bound ('CE2 <= U with this confidence'; default 0.95)")
    e.add_argument("--no-interval", action="store_true",
                   help="skip the bootstrap: the paper's plug-in estimate alone (no bias correction, interval, bound)")
    _run_args(e, "random seed (same seed, same numbers)")
    e.add_argument("--min-labels", type=_int_in(2, 10**6), default=2,
                   help="rows with fewer labels (empty cells are missing votes) are left out, with a note "
                        "(default 2)")
    e.add_argument("--candidates", action="store_true",
                   help="also print every degree Lepski's rule compared, with its bias bracket and interval (the "
                        "reported interval is their union)")
    e.add_argument("--json", action="store_true", help="print JSON (with the candidates)")
    e.set_defaults(func=_estimate)
    ev = sub.add_parser("evaluate", help="start here: is a predictor's (mean, variance) calibrated? (reads raw "
                                         "scores and labels, reports CE2 and CE1 against a calibrated reference)",
                        description="The guided evaluation.  The file holds one row per item: the predictor's own "
                                    "(raw) mean and variance (e.g. an ensemble's mean and the variance of its "
                                    "members) and two or more 0/1 labels from independent annotators.  socal "
                                    "perturbs the scores with a seeded sech kernel (the guarantee is about the "
                                    "perturbed predictor, which is what you deploy), estimates CE2 and CE1 with "
                                    "intervals, and compares them with the value a perfectly calibrated predictor "
                                    "with the same raw scores would have.")
    _data_args(ev, "column of the predicted means, in [0, 1] (with --classes: a pattern such as 'mean_{c}')",
               "column of the predicted variances, in [0, mean (1 - mean)] (with --classes: a pattern such as "
               "'var_{c}', the class variances)", required=False)
    ev.add_argument("--classes", metavar="A,B,C",
                    help="C >= 3 classes: evaluate a multiclass predictor in one call (joint, trace, top-label and "
                         "Holm-adjusted class-wise tests, per-class CE2 and CE1); column patterns put each class "
                         "name in {c}")
    ev.add_argument("--members", metavar="PATTERN",
                    help="with --classes: the members' probability columns, e.g. 'p{m}_{c}' ({m}: the members found "
                         "in the file; gives the full covariance, so the joint test runs); or an .npz array name "
                         "of shape (n, M, C)")
    ev.add_argument("--counts", metavar="PATTERN",
                    help="with --classes: votes per class, e.g. 'n_{c}' (or an .npz array (n, C)); or use --labels "
                         "with columns of class indices 0..C-1 (an empty cell is a missing vote)")
    ev.add_argument("--h", type=_bandwidth_or_auto, default="auto",
                    help="how much to blur the scores before the CE2 estimate: 'auto' (default: per axis from the "
                         "scores' spreads and n, at most 1/16,1/64; see socal.bandwidth), one value or 'mean,var'; "
                         "each score moves by about 1.6 h; the test on the raw scores does not depend on it")
    _run_args(ev, "seed of the perturbation and the bootstrap (same seed, same numbers)")
    ev.add_argument("--min-labels", type=_int_in(2, 10**6), default=2,
                    help="rows with fewer labels (empty cells are missing votes) are dropped, with a note (default 2)")
    ev.add_argument("--out", help="write the perturbed scores (the ones to deploy) to this file (.csv, .tsv, "
                                  ".parquet; .gz, .bz2 or .xz compresses a text file)")
    ev.add_argument("--plot", metavar="FILE.png", help="also draw second-order reliability diagrams (before and "
                    "after recalibration) and a residual map to this image file (needs matplotlib)")
    ev.add_argument("--json", action="store_true", help="print JSON")
    ev.set_defaults(func=_evaluate)
    d = sub.add_parser("demo", help="try socal on a built-in synthetic predictor whose true calibration error is "
                                    "known exactly",
                       description="A made-up predictor with six distinct (mean, variance) outputs, both somewhat "
                                   "miscalibrated, and two labels per item.  Prints the estimates beside the exact "
                                   "values, or with --write saves the data for 'socal evaluate'.")
    d.add_argument("--n", type=_int_in(100, 10**7), default=20000, help="number of items (default 20000)")
    d.add_argument("--h", type=_bandwidth, default=None,
                   help="how much the scores are blurred before measuring (the perturbation bandwidth; default 1/16)")
    d.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    d.add_argument("--write", metavar="FILE.csv",
                   help="instead of estimating, write the demo predictor's raw scores and labels to a file "
                        "(input for 'socal evaluate'; .csv, .tsv, .parquet, and .gz, .bz2 or .xz compresses text)")
    _progress_arg(d)
    d.set_defaults(func=_demo)
    r = sub.add_parser("reproduce", help="reproduce an experiment of the paper")
    rsub = r.add_subparsers(dest="experiment", required=True)
    dec = rsub.add_parser("decision", help="Experiment 3: referral gain against threshold (Figure 3)")
    dec.add_argument("--repeats", type=_int_in(2, 10**6), default=None,
                     help="independent repetitions (fresh data and fits) averaged in the figure (default 200)")
    dec.add_argument("--quick", action="store_true", help="20 repeats")
    dec.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    dec.add_argument("--out", default="out/decision", help="folder for the table, checks and figure")
    _progress_arg(dec)
    _parallel_args(dec)
    dec.set_defaults(func=_reproduce_decision)
    rec = rsub.add_parser("recalibration", help="Experiment 2: recalibrated variance against the truth (Figure 2)")
    rec.add_argument("--seeds", type=_int_in(1, 10**5), default=None,
                     help="independent calibration sets, each recalibrated and scored (default 20)")
    rec.add_argument("--quick", action="store_true", help="3 seeds, 2^14 Sobol points for the ground truth")
    rec.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    rec.add_argument("--out", default="out/recalibration", help="folder for the summary and figure")
    _progress_arg(rec)
    _parallel_args(rec)
    rec.set_defaults(func=_reproduce_recalibration)
    rat = rsub.add_parser("rate", help="Experiment 1: error against n for the polynomial estimator and baselines")
    rat.add_argument("--seeds", type=_int_in(1, 10**5), default=None,
                     help="independent data sets per sample size (default 20, the paper's)")
    rat.add_argument("--quick", action="store_true", help="3 seeds, n in {500, 2000, 10000}")
    rat.add_argument("--out", default="out/rate", help="folder; finished seeds found there are not recomputed")
    _progress_arg(rat)
    _parallel_args(rat, jobs=2)
    rat.set_defaults(func=_reproduce_rate)
    rl = rsub.add_parser("real-labels", help="Experiment 4: audit yield on real multi-annotator labels (Figure 4)")
    rl.add_argument("--dataset", default="weather", choices=[*_REAL_DEFAULTS, "all"])
    rl.add_argument("--data-dir", default="../shared/data", help="folder with one sub-folder per data set")
    rl.add_argument("--positive", default=None, help="class for one-vs-rest (default per data set)")
    rl.add_argument("--repeats", type=_int_in(2, 10**6), default=1000,
                    help="random splits into calibration and audit halves (default 1000)")
    rl.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    rl.add_argument("--out", default="out/real_labels", help="folder for the summary and figures")
    _progress_arg(rl)
    _parallel_args(rl)
    rl.set_defaults(func=_reproduce_real_labels)
    for ep in entry_points(group="socal.commands"):
        try:
            register = ep.load()
        except ImportError as exc:  # an optional extra is not installed
            sub.add_parser(ep.name, help=f"(unavailable: {exc})").set_defaults(
                func=lambda a, exc=exc, name=ep.name: _unavailable(name, exc))
            continue
        register(sub)
    return p


def _unavailable(name, exc):
    if getattr(exc, "name", None) == "socal.verify":
        # socal imported from a source checkout (python -m socal run from the repository's root) whose verify/ is
        # mapped into the package by the installer, not by a link: the installed command or an editable install
        print(f"socal {name}: error: socal.verify is not importable here ({exc}). From a source checkout, run the "
              f"installed command 'socal {name}' (not python -m socal), or install the checkout with "
              f"pip install -e '.[verify]'", file=sys.stderr)
        return 2
    print(f"socal {name}: error: needs an optional extra that is not installed ({exc}); "
          f"install it with: pip install 'socal[verify]'", file=sys.stderr)
    return 2


_USER_ERRORS = (ValueError, TypeError, ImportError, OSError)


def _attach_negative_fractions(argv):
    """'--h -1/16' as '--h=-1/16': argparse reads a token starting with '-' as an option unless it looks like a
    number ('-1', '-0.5'), so a negative fraction made "expected one argument" instead of --h's own message."""
    out = list(argv)
    for i in range(len(out) - 1):
        if out[i] == "--h" and out[i + 1][:1] == "-" and out[i + 1][1:2].isdigit():
            out[i:i + 2] = [f"--h={out[i + 1]}", None]
    return [a for a in out if a is not None]


def main(argv=None):
    """Run the ``socal`` command line on ``argv`` (default: sys.argv[1:]) and return its exit status: 0 when the
    command ran, 2 when an input was refused; a command may add its own (``socal audit``: 1 when a number moved from
    ``--baseline``, 2 when a claim raised)."""
    args = build_parser().parse_args(_attach_negative_fractions(sys.argv[1:] if argv is None else argv))
    try:
        return args.func(args)
    except _USER_ERRORS as exc:
        if args.debug:
            raise
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"socal {args.command}: error: {msg} (--debug shows the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
