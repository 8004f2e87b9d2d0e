"""Lepski's finer candidates: the ridge searched from cross-validation's ridge against every ridge (issue 24).

Each finer degree's ridge is cross-validated.  Trying every ridge of the grid costs one factorisation per ridge and
fold; the greedy walk from cross-validation's ridge (as the greedy search moves from one degree to the next) costs
two or three.  Per cell of the zoo x h x n x {CE2, CE1} (one replicate, coverage.py's seed): whether the two choose
the same ridge, the relative CV-error gap where not, and the seconds each took, summed.

    python benchmarks/lepski_ridge.py                 # n = 5,000 and 50,000
    python benchmarks/lepski_ridge.py --sizes 5000
"""

from __future__ import annotations

import argparse
import time
import zlib

import numpy as np

import socal
from socal import lepski, pipeline
from socal.degrees import resolve_alphas
from socal.fitting import select_and_fit


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,50000")
    a = ap.parse_args(argv)
    zoo = socal.synthetic.validation_zoo()
    same, other, t_all, t_walk = 0, [], 0.0, 0.0
    for name, member in zoo.items():
        for h in (1 / 16, 1 / 64):
            for n in (int(float(x)) for x in a.sizes.split(",")):
                rng = np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, 0])
                m, v, y = member.population.sample(n, h=h, rng=rng)
                for kind, ndim in (("ce2", 2), ("ce1", 1)):
                    opts = pipeline.estimator_settings(kind, ndim=ndim, h=h, degree=None, ridge=None, folds=5,
                                                       max_degree=44, rng=None, ci=0.9, n_boot=200)
                    source, stats = pipeline.data_source(kind, ndim, m, v if ndim == 2 else None, y, None, None)
                    fit, stats = pipeline.fit_from(source, stats, opts, ndim, kind, use_h_floor=False)
                    alphas, select = resolve_alphas(kind, None)
                    for f in lepski.finer_fits(stats, fit, opts, kind):
                        d = f.calmap.degree
                        t0 = time.perf_counter()
                        every = select_and_fit(stats, degrees=(d,), alphas=alphas, select=select)
                        t1 = time.perf_counter()
                        walk = select_and_fit(stats, degrees=(d,), alphas=alphas, select=select,
                                              start_alpha=fit.calmap.alpha)
                        t_all, t_walk = t_all + t1 - t0, t_walk + time.perf_counter() - t1
                        if walk.calmap.alpha == every.calmap.alpha:
                            same += 1
                            continue
                        e_all = np.nanmin(every.selection.cv_error)
                        gap = (np.nanmin(walk.selection.cv_error) - e_all) / e_all
                        other.append((name, f"1/{round(1 / h)}", n, kind, fit.calmap.degree, d,
                                      every.calmap.alpha, walk.calmap.alpha, gap))
    print(f"finer fits: {same + len(other)}; the same ridge in {same}; every ridge {t_all:.2f} s, the walk "
          f"{t_walk:.2f} s")
    for row in other:
        print("  {} h={} n={} {}: cv degree {}, finer {}: ridge {:g} (every) vs {:g} (walk), CV error +{:.2%}"
              .format(*row))


if __name__ == "__main__":
    main()
