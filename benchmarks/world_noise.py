"""Does the bootstrap world's label noise match the data's?  The model's covariance against the rows' residuals.

The bootstrap draws its refits' label noise from the world's model: per row, the covariance of the targets
(z1 = a/k, z2 = a(a-1)/(k(k-1))) when f* has the world's law around the fitted map
(``socal.snapshots.target_covariances``).  Where the map misses the calibration functions (a degree too low for
their structure), the real estimate also moves with the draw of the scores: a fresh sample's fit projects the
functions onto the polynomials anew, and that part of its noise is the rows' squared approximation error.  The
sandwich of random-design regression (Huber 1967, White 1980; the wild bootstrap's covariance, Wu 1986) estimates the
noise of both parts from the rows' residual products e e' (e = z - fitted map), which are unbiased for the model's
covariance plus the squared approximation error.

This script runs the same replicates as ``benchmarks/coverage.py`` (member, h, n and seed), at the degree and ridge
that replicate 0 selects (fixed, so that the choice of degree does not add its own noise), twice: with the world's
model covariance (socal's) and with the residual products in its place (scaled by n / (n - d)), and prints the
spread of the plug-in over the replicates against the median bootstrap SD of each.  Equal SDs say the model's noise
is the data's, including what the map's approximation error adds.

    python benchmarks/world_noise.py                      # CE1 overconfident 1/64 at 50,000 (the grid's lowest cell)
    python benchmarks/world_noise.py --cells ce2:toy:16:50000,ce1:calibrated-few:64:5000 --reps 100
"""

from __future__ import annotations

import argparse
import zlib

import numpy as np

import socal
import socal.world as bs
from socal.parallel import iter_jobs
from socal.snapshots import targets

_WORLD_SUMS, _CALL = bs.world_sums, bs.DeviationWorldPass.__call__


def _residual_world(on):
    """Set (or undo) the residual products in place of the model's covariance in the world pass (in this process;
    every row summed, so at most ``socal.world.WORLD_ROWS`` rows)."""
    if not on:
        bs.world_sums, bs.DeviationWorldPass.__call__ = _WORLD_SUMS, _CALL
        return

    def call(self, index, m, v, a, k):
        _labels[0] = (a, k)  # the pass's labels, for the covariance below
        return _CALL(self, index, m, v, a, k)

    def sums(calmap, raw, p, m, v, k, *args, **kw):
        a, kk = _labels[0]
        R = 2 if calmap.ndim == 2 else 1
        z1, z2 = targets(a, kk)
        e = np.column_stack([z1, z2])[:, :R] - raw[:, :R]
        cols = [e[:, 0] ** 2] if R == 1 else [e[:, 0] ** 2, e[:, 0] * e[:, 1], e[:, 1] ** 2]
        C = np.column_stack(cols) * (m.size / max(m.size - calmap.basis.size, 1))
        model = bs.target_covariances
        bs.target_covariances = lambda *_: C
        try:
            return _WORLD_SUMS(calmap, raw, p, m, v, k, *args, **kw)
        finally:
            bs.target_covariances = model

    bs.world_sums, bs.DeviationWorldPass.__call__ = sums, call


_labels = [None]


def _sample(name, h, n, rep):
    pop = socal.synthetic.validation_zoo()[name].population
    return pop.sample(n, h=h, k=2, rng=np.random.default_rng([zlib.crc32(name.encode()), round(1 / h), n, rep]))


def _call(kind, m, v, y, h, rep, **kw):
    if kind == "ce1":
        return socal.ce1(m, y, h=h, ci=0.9, rng=rep, **kw)
    return socal.ce2(m, v, y, h=h, ci=0.9, rng=rep, **kw)


def one(kind, name, h, n, rep, degree, alpha, residual):
    _residual_world(residual)  # a worker's module state outlives the call that set it: set for every call
    try:
        m, v, y = _sample(name, h, n, rep)
        res = _call(kind, m, v, y, h, rep, degree=degree, ridge=alpha)
        return res.plugin, res.estimate, res.candidates[0].noise_sd
    finally:
        _residual_world(False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="ce1:overconfident:64:50000", help="kind:member:1/h:n, comma-separated")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    print(f"{'cell':<36} {'l':>3} {'alpha':>6} {'plug-in spread':>15} {'estimate spread':>16} "
          f"{'boot SD model':>14} {'boot SD residuals':>18} {'spread / SD':>12}")
    for cell in a.cells.split(","):
        kind, name, hinv, n = cell.split(":")
        h, n = 1.0 / int(hinv), int(float(n))
        m, v, y = _sample(name, h, n, 0)
        first = _call(kind, m, v, y, h, 0)
        degree, alpha = first.degree, first.ridge
        if n > bs.WORLD_ROWS:
            raise ValueError(f"n = {n}: the residual world sums every row, at most WORLD_ROWS = {bs.WORLD_ROWS}")
        out = {}
        for residual in (False, True):
            jobs = [(kind, name, h, n, rep, degree, alpha, residual) for rep in range(a.reps)]
            out[residual] = np.array(list(iter_jobs(one, jobs, n_jobs=a.jobs)))
        model, resid = out[False], out[True]
        spread, est_spread = float(np.std(model[:, 0], ddof=1)), float(np.std(model[:, 1], ddof=1))
        sd_model, sd_resid = float(np.median(model[:, 2])), float(np.median(resid[:, 2]))
        print(f"{kind + ' ' + name + ' 1/' + hinv + ' ' + str(n):<36} {degree:>3} {alpha:>6g} {spread:>15.5f} "
              f"{est_spread:>16.5f} {sd_model:>14.6f} {sd_resid:>18.6f} {spread / sd_model:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
