"""``socal audit``: registered with socal's CLI through the ``socal.commands`` entry point."""

from __future__ import annotations

import sys
import time

from ._core import run
from .report import to_json, to_markdown, to_table

__all__ = ["register", "audit"]


def audit(args):
    ids = [s.strip() for s in args.only.split(",") if s.strip()] if args.only else None
    t0 = time.perf_counter()
    results = run(ids, quick=args.quick, progress=not args.no_progress and sys.stderr.isatty())
    seconds = round(time.perf_counter() - t0, 1)
    print(to_table(results))
    print(f"\n{len(results)} claims in {seconds} s ({'quick' if args.quick else 'full'} audit)")
    meta = {"mode": "quick" if args.quick else "full", "seconds": seconds}
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(to_json(results, **meta))
        print(f"JSON written to {args.json}")
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(to_markdown(results))
        print(f"Markdown written to {args.markdown}")
    return 0  # verdicts are findings, not errors


def register(subparsers):
    p = subparsers.add_parser("audit", help="check the paper's claims one by one and report verdicts")
    p.add_argument("--quick", action="store_true", help="reduced checks (under a minute)")
    p.add_argument("--json", metavar="PATH", help="write the report as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the report as Markdown")
    p.add_argument("--only", metavar="ID,...", help="run only these claim ids")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=audit)
    return p
