"""The ``socal`` command line's parser and entry point: the subcommands, their options, and ``main``.

Each subcommand's work is a function of :mod:`socal.commands`.  Subcommands from other distributions register under
the entry-point group ``socal.commands`` as a function ``register(subparsers)`` that adds a parser and sets
``func``; socal itself never imports them by name (the ``verify`` package imports socal, never the reverse).
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import entry_points

import numpy as np

from .commands import (REAL_DEFAULTS, demo_command, estimate_command, evaluate_command, reproduce_decision,
                       reproduce_rate, reproduce_real_labels, reproduce_real_models, reproduce_recalibration)

__all__ = ["main", "build_parser"]


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


def _parallel_args(parser, jobs=1):
    parser.add_argument("--jobs", type=_int_in(1, 1024), default=jobs,
                        help=f"parallel replicates (joblib; default {jobs}); the numbers do not depend on it")
    parser.add_argument("--backend", choices=("loky", "dask"), default="loky",
                        help="where replicates run: local processes (loky) or a dask cluster (same numbers)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="with --backend dask: the scheduler's address (default: a local 2-worker cluster)")


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


def build_parser():
    """The ``socal`` parser: every built-in subcommand with its options and its function of
    :mod:`socal.commands`, then the subcommands other distributions register (``socal.commands`` entry points)."""
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
    e.set_defaults(func=estimate_command)
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
                    help="C >= 3 classes: evaluate a multiclass predictor in one call (one verdict over the trace, "
                         "top-label and class-wise parts, per-class CE2 and CE1); column patterns put each class "
                         "name in {c}")
    ev.add_argument("--members", metavar="PATTERN",
                    help="with --classes: the members' probability columns, e.g. 'p{m}_{c}' ({m}: the members found "
                         "in the file; gives the means and the class variances); or an .npz array name "
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
    ev.add_argument("--report", metavar="FILE.html", help="also write one self-contained HTML page to share: the "
                    "verdict, the tables, the figures (embedded) and the command and versions that reproduce them "
                    "(needs matplotlib)")
    ev.add_argument("--json", action="store_true", help="print JSON")
    ev.set_defaults(func=evaluate_command)
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
    d.set_defaults(func=demo_command)
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
    dec.set_defaults(func=reproduce_decision)
    rec = rsub.add_parser("recalibration", help="Experiment 2: recalibrated variance against the truth (Figure 2)")
    rec.add_argument("--seeds", type=_int_in(1, 10**5), default=None,
                     help="independent calibration sets, each recalibrated and scored (default 20)")
    rec.add_argument("--quick", action="store_true", help="3 seeds, 2^14 Sobol points for the ground truth")
    rec.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    rec.add_argument("--out", default="out/recalibration", help="folder for the summary and figure")
    _progress_arg(rec)
    _parallel_args(rec)
    rec.set_defaults(func=reproduce_recalibration)
    rat = rsub.add_parser("rate", help="Experiment 1: error against n for the polynomial estimator and baselines")
    rat.add_argument("--seeds", type=_int_in(1, 10**5), default=None,
                     help="independent data sets per sample size (default 20, the paper's)")
    rat.add_argument("--quick", action="store_true", help="3 seeds, n in {500, 2000, 10000}")
    rat.add_argument("--out", default="out/rate", help="folder; finished seeds found there are not recomputed")
    _progress_arg(rat)
    _parallel_args(rat, jobs=2)
    rat.set_defaults(func=reproduce_rate)
    rl = rsub.add_parser("real-labels", help="Experiment 4: audit yield on real multi-annotator labels (Figure 4)")
    rl.add_argument("--dataset", default="weather", choices=[*REAL_DEFAULTS, "all"])
    rl.add_argument("--data-dir", default="../shared/data", help="folder with one sub-folder per data set")
    rl.add_argument("--positive", default=None, help="class for one-vs-rest (default per data set)")
    rl.add_argument("--repeats", type=_int_in(2, 10**6), default=1000,
                    help="random splits into calibration and audit halves (default 1000)")
    rl.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    rl.add_argument("--out", default="out/real_labels", help="folder for the summary and figures")
    _progress_arg(rl)
    _parallel_args(rl)
    rl.set_defaults(func=reproduce_real_labels)
    rm = rsub.add_parser("real-models", help="real ensembles on real crowd votes: the tables of docs/real_models.md "
                                             "and docs/multiclass.md")
    rm.add_argument("part", choices=["report", "multiclass", "recalibration"],
                    help="report: docs/real_models.md (one class against the rest); multiclass: the one call on "
                         "ChaosNLI and CIFAR-10H; recalibration: the held-out comparison of the multiclass maps")
    rm.add_argument("--data-dir", default="../shared/data", help="folder with one sub-folder per data set")
    rm.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="random seed (same seed, same numbers)")
    rm.set_defaults(func=reproduce_real_models)
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
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(_attach_negative_fractions(argv))
    args.argv = argv  # as typed: the report's "reproduce" section quotes it
    try:
        return args.func(args)
    except _USER_ERRORS as exc:
        if args.debug:
            raise
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"socal {args.command}: error: {msg} (--debug shows the traceback)", file=sys.stderr)
        return 2
