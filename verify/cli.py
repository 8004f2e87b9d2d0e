"""``socal audit``: registered with socal's CLI through the ``socal.commands`` entry point."""

from __future__ import annotations

import sys
import time

from socal.files import write_text_atomic
from socal.parallel import BACKENDS, backend

from .registry import run
from .report import first_page, to_json, to_markdown, to_table

__all__ = ["register", "audit"]


def _list_claims():
    from ._core import REGISTRY
    from .registry import load_claims

    load_claims()
    for c in REGISTRY.values():
        print(f"{c.id:<26} {c.ref:<34} {' '.join(c.statement.split())[:100]}")
    return 0


def _check_modes(args):
    """--list and --coverage print and exit without an audit: an option that only a run reads is refused with them
    (it was ignored)."""
    if args.list or args.coverage:
        mode = "--list" if args.list else "--coverage"
        given = [flag for flag, on in (("--coverage", args.list and args.coverage), ("--quick", args.quick),
                                       ("--json", args.json), ("--markdown", args.markdown),
                                       ("--only", args.only is not None), ("--baseline", args.baseline),
                                       ("--backend", args.backend != "loky"), ("--scheduler", args.scheduler),
                                       ("--checkpoint", args.checkpoint)) if on]
        if given:
            raise ValueError(f"{mode} prints and exits without running the audit, so {', '.join(given)} would do "
                             f"nothing; drop {'them' if len(given) > 1 else 'it'}, or drop {mode}")


def audit(args):
    if args.replay:  # re-decide a certificates file alone: no audit runs
        given = [flag for flag, on in (("--quick", args.quick), ("--json", args.json), ("--markdown", args.markdown),
                                       ("--only", args.only is not None), ("--certificates", args.certificates),
                                       ("--checkpoint", args.checkpoint), ("--baseline", args.baseline)) if on]
        if given:
            raise ValueError(f"--replay re-decides a file without running the audit, so {', '.join(given)} would do "
                             f"nothing; drop {'them' if len(given) > 1 else 'it'}")
        from .certificates import replay

        t0 = time.perf_counter()
        ok, text = replay(args.replay)
        print(text)
        print(f"\nreplayed in {time.perf_counter() - t0:.1f} s")
        return 0 if ok else 1
    _check_modes(args)
    if args.list:
        return _list_claims()
    if args.coverage:
        from ._core import REGISTRY
        from .inventory import coverage, format_coverage
        from .registry import load_claims

        load_claims()
        print(format_coverage(coverage(REGISTRY)))
        return 0
    from socal.files import check_output_paths

    check_output_paths(args, "json", "markdown", "certificates")  # before the audit's minutes of work (one file for both refused)
    ids = None
    if args.only is not None:
        ids = list(dict.fromkeys(s.strip() for s in args.only.split(",") if s.strip()))  # each id once
        if not ids:
            raise ValueError("--only needs at least one claim id (comma-separated); omit it for the full audit")
    if args.backend == "dask":
        from socal.files import require_extra

        require_extra("audit --backend dask", "dask", "dask", "distributed")
    base = None
    if args.baseline:  # read before the audit's minutes of work, as the output paths are checked
        from .baseline import load

        base = load(args.baseline)
    t0 = time.perf_counter()
    with backend(args.backend, scheduler=args.scheduler):
        results = run(ids, quick=args.quick, progress=not args.no_progress and sys.stderr.isatty(),
                      record=args.checkpoint, jobs=args.jobs)
    seconds = round(time.perf_counter() - t0, 1)
    print(first_page(results))
    print()
    print(to_table(results))
    status = 0
    if base is not None:
        from .baseline import compare, format_changes, numbers

        changes = compare(base, results)
        ran = {c.id for c, _ in results}
        compared = [c for c in base["claims"] if c["id"] in ran]
        n_numbers = sum(len(c.get("numbers") or numbers(c.get("evidence", {}))) for c in compared)
        print("\n" + format_changes(changes, (len(compared), n_numbers)))
        status = 1 if any(c.counts for c in changes) else 0
    scope = f"only {', '.join(ids)}" if ids else ("quick" if args.quick else "full") + " audit"
    print(f"\n{len(results)} claim{'s' * (len(results) != 1)} in {seconds} s ({scope})")
    meta = {"mode": "quick" if args.quick else "full", "seconds": seconds}
    if args.json:
        write_text_atomic(args.json, to_json(results, **meta))
        print(f"JSON written to {args.json}")
    if args.markdown:
        write_text_atomic(args.markdown, to_markdown(results))
        print(f"Markdown written to {args.markdown}")
    if args.certificates:
        from .certificates import write_certificates

        write_certificates(results, args.certificates, mode="quick" if args.quick else "full")
        print(f"certificates written to {args.certificates} (re-decide them with socal audit --replay "
              f"{args.certificates})")
    raised = [c.id for c, r in results if "error" in r.evidence]
    if raised:  # the other claims ran; the run is not a clean one, and its exit status says so
        print(f"socal audit: {len(raised)} claim(s) raised an error (reported INCONCLUSIVE, with the error): "
              f"{', '.join(raised)}", file=sys.stderr)
        status = 2
    return status  # verdicts are findings, not errors; a change from --baseline is (exit status 1), a claim that
    # raised is (exit status 2)


def register(subparsers):
    p = subparsers.add_parser("audit", help="check the paper's theorems, lemmas and constants one by one",
                              description="Re-derive the claims of the paper (exact algebra, certified interval "
                                          "arithmetic, Monte Carlo) and print a verdict for each: HOLDS, FAILS "
                                          "(false, with a certified counterexample), GAP (not refuted, and the "
                                          "paper's argument does not establish it), VACUOUS (true, but says nothing at "
                                          "the stated settings) or INCONCLUSIVE (the numerics cannot decide). Every "
                                          "decisive comparison is exact, ball arithmetic, or carries an error bound.")
    p.add_argument("--quick", action="store_true", help="reduced checks (under a minute)")
    p.add_argument("--list", action="store_true", help="list the claim ids with where they are in the paper, and exit")
    p.add_argument("--coverage", action="store_true",
                   help="print how many of the paper's checkable statements the audit checks (the inventory), the "
                        "unchecked ones with the reason, and the paper's typos and inconsistencies; then exit")
    p.add_argument("--json", metavar="PATH", help="write the report as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the report as Markdown")
    p.add_argument("--only", metavar="ID,...", help="run only these claim ids (see --list)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--certificates", metavar="FILE",
                   help="write every deciding comparison as exact data, with each claim's provenance (versions, "
                        "commit, arguments): socal audit --replay FILE re-decides them from the file alone")
    p.add_argument("--replay", metavar="FILE",
                   help="re-decide the comparisons of a --certificates file (sympy and python-flint, seconds; no "
                        "audit runs); exit status 1 if any differs from its recorded outcome")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help="run the claims (independent, seeded) in N worker processes (default 2; 1: in this process)")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="keep each finished claim's result in this file; after a kill, the same command with the "
                        "same file runs only the claims still missing, and reports what an uninterrupted run does")
    p.add_argument("--baseline", metavar="FILE.json",
                   help="compare with a stored report (from --json): list verdict changes and evidence numbers that "
                        "moved beyond their tolerance; exit status 1 when anything moved")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="where Monte Carlo replicates run: local processes (loky) or a dask cluster (same numbers)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --backend dask: the cluster's scheduler address (default: a local 2-worker cluster)")
    p.set_defaults(func=audit)
    return p
