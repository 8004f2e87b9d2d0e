"""The audit's wall time, full and quick, as `socal audit` runs it (README's first command ends in it).

    python benchmarks/audit_time.py --runs 3            # the median of 3 runs each, with --jobs 2 and --jobs 1
    python benchmarks/audit_time.py --runs 1 --quick-only

Each run is a fresh `python -m socal audit` process (imports included, as a user pays them); it prints the median
wall time per mode and jobs, the ratio of one worker to two, and the slowest claims (the claims' own seconds, from
the JSON report).  Machines are shared and noisy: read the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time


def one(mode, jobs):
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/a.json"
        cmd = [sys.executable, "-m", "socal", "audit", "--no-progress", "--jobs", str(jobs), "--json", out]
        if mode == "quick":
            cmd.insert(4, "--quick")
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        wall = time.perf_counter() - t
        with open(out) as fh:
            report = json.load(fh)
    return wall, {c["id"]: c["evidence"].get("seconds", 0.0) for c in report["claims"]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--quick-only", action="store_true")
    args = p.parse_args(argv)
    for mode in (("quick",) if args.quick_only else ("quick", "full")):
        walls = {}
        for jobs in (2, 1):
            runs = [one(mode, jobs) for _ in range(args.runs)]
            walls[jobs] = statistics.median(w for w, _ in runs)
            claims = runs[-1][1]
        slow = sorted(claims.items(), key=lambda kv: -kv[1])[:5]
        print(f"{mode} audit: median {walls[2]:.1f} s with --jobs 2, {walls[1]:.1f} s with --jobs 1 "
              f"(ratio {walls[1] / walls[2]:.2f}; {args.runs} run(s) each); slowest claims: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in slow))


if __name__ == "__main__":
    main()
