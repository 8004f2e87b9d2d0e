"""The Gram matrix from the moment table: socal's strided views (socal.chebyshev.tensor_gram) against gathering with
index arrays (the naive way: G[(a,b),(c,e)] read from M at index grids), in one run, medians of ``--reps`` calls.

    python benchmarks/gram.py                  # degrees 22, 44, 88 (2-D tensor basis)
    python benchmarks/gram.py --degrees 88 --reps 5

Both build the same matrix (checked to 1e-12 relative before timing).  The moments are those of 20,000 random
scores, so the entries are realistic; the cost does not depend on them.
"""

from __future__ import annotations

import argparse

import numpy as np

from socal.chebyshev import tensor_gram
from timing import median_time


def gathered(M, l, lw):
    """The Gram by index arrays: G[(a,b),(c,e)] = (M[a+c, b+e] + M[a+c, |b-e|] + M[|a-c|, b+e] + M[|a-c|, |b-e|])/4."""
    a = np.repeat(np.arange(l + 1), lw + 1)
    b = np.tile(np.arange(lw + 1), l + 1)
    P, Pm = np.add.outer(a, a), np.abs(np.subtract.outer(a, a))
    Q, Qm = np.add.outer(b, b), np.abs(np.subtract.outer(b, b))
    return 0.25 * (M[P, Q] + M[P, Qm] + M[Pm, Q] + M[Pm, Qm])


def moments(l, n=20000, seed=0):
    rng = np.random.default_rng(seed)
    th, ph = np.arccos(rng.uniform(-1, 1, n)), np.arccos(rng.uniform(-1, 1, n))
    p = np.arange(2 * l + 1)
    return np.cos(np.outer(th, p)).T @ np.cos(np.outer(ph, p))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--degrees", default="22,44,88")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"{'degree':>6} {'unknowns':>9} {'strided (s)':>12} {'index arrays (s)':>17} {'ratio':>6}")
    for l in (int(x) for x in a.degrees.split(",")):
        M = moments(l)
        ref = gathered(M, l, l)
        got = tensor_gram(M, l, l)
        assert np.allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max()), "the two Grams differ"
        t_s = median_time(lambda: tensor_gram(M, l, l), a.reps)
        t_g = median_time(lambda: gathered(M, l, l), a.reps)
        print(f"{l:>6} {(l + 1) ** 2:>9,} {t_s:>12.3f} {t_g:>17.3f} {t_g / t_s:>6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
