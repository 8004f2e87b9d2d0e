"""Where finufft pays: the Chebyshev moments and evaluations by matrix products ('numpy') and by non-uniform FFTs
('finufft'), timed in the same run, with what the 'auto' backend picks.

The three kinds of work of :mod:`socal.chebyshev` and :mod:`socal.sufficient`, on uniform points:

* ``moments``: the statistics' moments, M[g, p, q] = sum_{i in g} T_p(u_i) T_q(w_i) up to twice the degree, in 5
  groups (the folds), :func:`socal.chebyshev.grouped_moments`;
* ``weighted``: moments with a few strength columns, J = 1 (CE1's world), 2 (the targets) or 3 (CE2's world's
  covariance), up to twice the degree, :func:`socal.sufficient.response_moments`;
* ``eval``: a fitted map's values at the rows (R responses), :func:`socal.chebyshev.evaluate_series`.

In 1-D (``--ndim 1``) the degree is the mean's only.  Medians of ``--reps`` alternated calls; the ratio is numpy /
finufft (above 1: finufft is faster); 'auto' names the backend socal picks there.

    python benchmarks/backend.py --ndim 1 --sizes 2e4,5e4,1e5,2e5,1e6 --degrees 12,44
    python benchmarks/backend.py --ndim 2 --sizes 5e4,2e5,1e6 --degrees 12,22,44
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import socal
from socal import chebyshev
from socal.chebyshev import TensorBasis, evaluate_series, grouped_moments
from socal.sufficient import response_moments
from timing import median_time


def _work(kind, n, degree, ndim, rng):
    """(callable, terms, moments?, weighted?) for one kind of work at this size: the arguments of use_nufft."""
    u = rng.uniform(-1, 1, n)
    w = rng.uniform(-1, 1, n) if ndim == 2 else np.ones(n)
    L, Lw = 2 * degree, (2 * degree if ndim == 2 else 0)
    if kind == "moments":
        g = rng.integers(0, 5, n).astype(np.intp)
        return (lambda: grouped_moments(u, w, g, 5, L, Lw)), (L + 1) * (Lw + 1), True, False
    if kind.startswith("weighted"):
        Z = rng.random((n, int(kind[-1])))
        return (lambda: response_moments(u, w, Z, L, Lw)), (L + 1) * (Lw + 1), True, True
    R = int(kind[-1])
    basis = TensorBasis(degree, ndim)
    beta = rng.standard_normal((basis.size, R))
    m, v = (u + 1) / 2, ((w + 1) / 8 if ndim == 2 else None)
    return (lambda: evaluate_series(basis, beta, m, v)), basis.size, False, False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ndim", type=int, choices=(1, 2), default=1)
    ap.add_argument("--sizes", default="2e4,5e4,1e5,2e5,1e6")
    ap.add_argument("--degrees", default="12,44")
    ap.add_argument("--kinds", default="moments,weighted1,weighted2,weighted3,eval1,eval2")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args(argv)
    from socal import nufft

    if not nufft.available():
        raise SystemExit("finufft is not installed (pip install 'socal[fast]')")
    previous = socal.get_backend()
    rng = np.random.default_rng(0)
    print(f"{a.ndim}-D; medians of {a.reps} alternated calls, ms")
    print(f"{'kind':<10} {'n':>9} {'l':>4} {'terms':>6} {'numpy':>9} {'finufft':>9} {'ratio':>7}  auto")
    try:
        for kind in a.kinds.split(","):
            for degree in (int(x) for x in a.degrees.split(",")):
                for n in (int(float(x)) for x in a.sizes.split(",")):
                    fn, terms, moments, weighted = _work(kind, n, degree, a.ndim, rng)
                    times = {"numpy": [], "finufft": []}
                    for _ in range(a.reps):  # alternated, so a busy spell of the machine hits both
                        for name in times:
                            socal.set_backend(name)
                            times[name].append(median_time(fn, 1))
                    tn, tf = (1e3 * statistics.median(times[k]) for k in ("numpy", "finufft"))
                    socal.set_backend("auto")
                    auto = ("finufft" if chebyshev.use_nufft(n, terms, moments, weighted=weighted, one_dim=a.ndim == 1)
                            else "numpy")
                    print(f"{kind:<10} {n:>9} {degree:>4} {terms:>6} {tn:>9.2f} {tf:>9.2f} {tn / tf:>7.2f}  {auto}",
                          flush=True)
    finally:
        socal.set_backend(previous)


if __name__ == "__main__":
    main()
