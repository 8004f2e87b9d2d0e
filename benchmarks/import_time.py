"""The cost of ``import socal`` in a fresh interpreter, against the floor it cannot go below (numpy and
scipy.linalg, which the fits need at import), medians of alternated runs.

    python benchmarks/import_time.py            # 11 runs of each
    python benchmarks/import_time.py --runs 21

It also prints ``python -X importtime -c "import socal"``'s total (the cumulative microseconds of the top-level
import) for the last run, and which heavy scipy modules ``import socal`` loads (none of scipy.stats, scipy.optimize,
scipy.signal, scipy.fft: they load on first use).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

TIMER = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"


def once(mod):
    out = subprocess.run([sys.executable, "-c", TIMER.format(mod=mod)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=11)
    args = p.parse_args(argv)
    ours, floor = [], []
    for _ in range(args.runs):
        ours.append(once("socal"))
        floor.append(once("numpy, scipy.linalg"))
    a, b = statistics.median(ours), statistics.median(floor)
    print(f"import socal: median {a:.3f} s over {args.runs} runs (min {min(ours):.3f}, max {max(ours):.3f})")
    print(f"import numpy, scipy.linalg (the floor): median {b:.3f} s; ratio {a / b:.2f}")
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import socal"], capture_output=True,
                         text=True).stderr.strip().splitlines()
    top = [line for line in err if line.rstrip().endswith("| socal")]
    print("python -X importtime -c 'import socal': " + (top[-1].split("|")[1].strip() + " us cumulative" if top
                                                       else "(no line)"))
    probe = ("import sys, socal; print(sorted(m for m in ('scipy.stats', 'scipy.optimize', 'scipy.signal', "
             "'scipy.fft') if m in sys.modules))")
    print("heavy scipy modules loaded by import socal:",
          subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
