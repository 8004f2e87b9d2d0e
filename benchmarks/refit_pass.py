"""The refit pass (``socal.refits.RefitPass``) against its plain-expression form, in the same run: same bits?

The pass evaluates B refitted maps on a keyed subset of about 5,000 rows (``socal.refits.REFIT_ROWS``) with
Poisson(1) item weights keyed by row content.  socal's version mixes the weights' hashes in place and reads them
through one table with ``np.take``, and keeps the block's arrays in buffers reused block after block.  The baseline
below is the same computation written with plain numpy expressions (a new array per step, the weights by their
definition: the code before that change, but for the weights' table).  Both are run on the pass of a default ``ce2``
call at a fixed degree (toy population, h = 1/16), their outputs compared for exact equality, and timed
alternately; the weights are drawn afresh in every call (no cache).

    python benchmarks/refit_pass.py                      # n = 50,000, l = 12 and 44, medians of 9
    python benchmarks/refit_pass.py --sizes 1000000 --reps 5
    python benchmarks/refit_pass.py --inner              # socal's pass with the inner level against without it
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import socal
from socal import refits as sb
from socal.weights import PoissonWeights, salt
from socal.chebyshev import tensor_features, to_unit
from socal.deviations import score_moments
from socal.fitting import feasible
from socal.rowkeys import keyed_uniforms, row_keys

# socal.refits' block size and number of refits per shrunken world, restated (a change there shows as DIFFER)
BLOCK_FLOATS, N_SHRINK = 2**22, 50
POISSON_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, j + 1, dtype=float)) for j in range(20)])


def plain_poisson_weights(keys, seed, B):
    """The item weights by their definition: the inverse Poisson(1) CDF at each row's keyed uniform (stream 1, b)."""
    salts = np.array([salt("poisson weights", b) for b in range(B)], dtype=np.uint64)
    u = keyed_uniforms(np.asarray(keys, dtype=np.uint64), salts)
    return np.searchsorted(POISSON_CDF, u, side="right").astype(np.uint8)


def soft(g, t):
    return np.sign(g) * np.maximum(np.abs(g) - t, 0.0)


def plain_refit_pass(self, index, m, v, a, k):
    """``RefitPass.__call__`` with a new array per step (the inner level left out)."""
    calmap = self.calmap
    basis, ndim = calmap.basis, calmap.ndim
    d, B, R = self.betas.shape
    keys = row_keys(m, v if ndim == 2 else None, a, k, self.seed)
    q = self.fraction
    if q < 1.0:
        keep = keyed_uniforms(keys, salt("refit subset")) < q
        m, v, keys = m[keep], (v[keep] if ndim == 2 else v), keys[keep]
    weights = plain_poisson_weights(keys, self.seed, B)
    num, den = np.zeros(B), np.zeros(B)
    truth = 0.0
    shrunk_truth, shrunk_plug = np.zeros(len(sb.THRESHOLDS)), np.zeros(len(sb.THRESHOLDS))
    nb = min(B, N_SHRINK)
    coef = basis.to_tensor(self.betas.transpose(0, 2, 1).reshape(d, R * B)).reshape(R * B, -1)
    coef = np.concatenate([coef, basis.to_tensor(calmap.beta)[:R].reshape(R, -1)])
    u, w = to_unit(m, v if ndim == 2 else None)
    rows = max(64, BLOCK_FLOATS // (B * R * (basis.degree + 1)))
    for start in range(0, m.size, rows):
        sl = slice(start, min(start + rows, m.size))
        phi = tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
        both = coef @ phi
        pred = np.clip(both[:R * B], 0.0, 1.0, out=both[:R * B]).reshape(R, B, -1)
        p = feasible(both[R * B:].T, project=True).T
        score = score_moments(m[sl], v[sl] if ndim == 2 else None)
        dev = np.abs(pred - score[:, None, :])
        s = dev[0] if R == 1 else dev[0] + dev[1]
        wts = weights[sl]
        if q < 1.0:
            wts = 1.0 + np.sqrt(q) * (wts - 1.0)
        num += np.einsum("ib,bi->b", wts, s)
        den += wts.sum(axis=0)
        e = np.subtract(pred, p[:, None, :], out=pred)
        sigma = e.std(axis=1)
        g = p - score
        truth += np.abs(g).sum()
        en = e[:, :nb, :]
        for j, tau in enumerate(sb.THRESHOLDS):
            gt = np.zeros_like(g) if np.isinf(tau) else soft(g, tau * sigma)
            shrunk_truth[j] += np.abs(gt).sum()
            shrunk_plug[j] += np.abs(gt[:, None, :] + en).sum() / nb
    return (num, den, shrunk_truth, shrunk_plug, np.array([m.size, truth]))


def captured_pass(n, degree):
    """The refit pass of a default ce2 call at ``degree`` on n toy rows, and the arguments it was called with."""
    m, v, y = socal.synthetic.toy_population().sample(n, h=1 / 16, rng=0)
    got = {}
    call = sb.RefitPass.__call__

    def spy(self, *args):
        got["pass"], got["args"] = self, args
        return call(self, *args)

    sb.RefitPass.__call__ = spy
    try:
        socal.ce2(m, v, y, degree=degree, ridge=1e-3, ci=0.9, upper=0.95)
    finally:
        sb.RefitPass.__call__ = call
    refit = got["pass"]
    refit.weights = PoissonWeights(0)  # every call draws its weights, as the baseline does
    return refit, got["args"]


def inner_cost(sizes, degrees, reps):
    """socal's refit pass with and without the inner level (each refit's one-step bias in closed form), alternated;
    the pass's other outputs must not move."""
    print(f"{'n':>9} {'l':>3} {'without ms':>10} {'with ms':>8} {'ratio':>6}  other outputs")
    for n in sizes:
        for degree in degrees:
            refit, args = captured_pass(n, degree)
            off, on = [], []
            for _ in range(reps):
                refit.inner = False
                t0 = time.perf_counter()
                plain = refit(*args).arrays
                off.append(time.perf_counter() - t0)
                refit.inner = True
                t0 = time.perf_counter()
                inner = refit(*args).arrays
                on.append(time.perf_counter() - t0)
            same = all(np.array_equal(x, y) for x, y in zip(plain[:5], inner[:5]))
            t_off, t_on = statistics.median(off), statistics.median(on)
            print(f"{n:>9} {degree:>3} {1e3 * t_off:>10.1f} {1e3 * t_on:>8.1f} {t_on / t_off:>6.2f}  "
                  f"{'identical' if same else 'DIFFER'}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50000")
    ap.add_argument("--degrees", default="12,44")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--inner", action="store_true",
                    help="time socal's pass with the inner level (BootstrapOptions(inner=True)) against without it "
                         "instead")
    a = ap.parse_args(argv)
    if a.inner:
        return inner_cost([int(float(s)) for s in a.sizes.split(",")], [int(s) for s in a.degrees.split(",")], a.reps)
    print(f"{'n':>9} {'l':>3} {'rows read':>9} {'plain ms':>9} {'socal ms':>9} {'ratio':>6}  outputs")
    for n in (int(float(s)) for s in a.sizes.split(",")):
        for degree in (int(s) for s in a.degrees.split(",")):
            refit, args = captured_pass(n, degree)
            ours, plain = [], []
            for _ in range(a.reps):  # alternated
                t0 = time.perf_counter()
                got = refit(*args).arrays
                ours.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                want = plain_refit_pass(refit, *args)
                plain.append(time.perf_counter() - t0)
            same = all(np.array_equal(x, y) for x, y in zip(got[:5], want))
            to, tp = statistics.median(ours), statistics.median(plain)
            print(f"{n:>9} {degree:>3} {int(got[4][0]):>9} {1e3 * tp:>9.1f} {1e3 * to:>9.1f} {tp / to:>6.2f}  "
                  f"{'identical' if same else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
