"""Would a sharper estimate of the plug-in's bias at Lepski's finest degree narrow the interval?  The unbiased
polynomial estimate of |g| (Cai & Low, Ann. Statist. 39, 2011) against the bracket socal computes (issue 24).

The union interval of ``socal.ce2`` is as wide as the finest candidate's, and that is wide because the two bias
corrections (the one-step and the shrunken worlds) disagree there (docs/numbers.md, "Where the width comes from").
Per row the fitted value is g-hat = g + sigma Z (the refits' spread sigma; Gaussian, as the refits are linear in
the labels), and the plug-in |g-hat| has bias sigma psi(g / sigma), anywhere in [0, 0.798 sigma] as g / sigma
ranges over the line (0.798 = sqrt(2 / pi), at g = 0).  No estimator removes that bias for every g: the best known
(Cai & Low) approximates |x| on [-M sigma, M sigma] by an even polynomial of degree K and estimates each power
g^j without bias by sigma^j He_j(g-hat / sigma) (He the probabilists' Hermite polynomials), keeping |g-hat| where
|g-hat| > M2 sigma.  What is left is a bias range over g / sigma, which a valid interval must cover as the bracket
covers [b_lo, b_hi].

* Part 1 (exact, by quadrature over Z): that estimator's worst-case bias range and SD, in units of sigma, for a few
  (M, K, M2), against the plug-in's range [0, 0.798] and SD 0.60.
* Part 2 (measured): the finest candidate's bracket |b_hi - b_lo| on zoo cells where the interval is widest, in
  units of 0.798 times the rows' mean sigma (summed over CE2's two responses: the plug-in's own worst-case range).
  A ratio near or below part 1's best range / 0.798 means the polynomial estimator's guaranteed range is no
  narrower than the bracket the data already give.  For the first replicate it prints every candidate's interval.

    python benchmarks/hermite_bracket.py                # both parts (about a minute)
    python benchmarks/hermite_bracket.py --reps 5 --cells "calibrated-many 1/64 50000,smooth 1/64 50000"
"""

from __future__ import annotations

import argparse
import zlib
from fractions import Fraction

import numpy as np
from numpy.polynomial import chebyshev, hermite_e
from scipy import stats

import socal
import socal.refits as boot

CELLS = ("calibrated-many 1/64 50000", "calibrated-few 1/64 50000", "smooth 1/64 50000",
         "nearly-calibrated 1/64 50000", "calibrated-many 1/16 50000", "held-out-mixed 1/64 5000")
SETTINGS = ((2.5, 4, 2.5), (3, 4, 3), (3, 6, 3), (3, 6, 2.5), (4, 6, 4), (3, 8, 3), (4, 8, 4), (5, 10, 5))


def abs_polynomial(M, K, nodes=4000):
    """Power coefficients (in x) of the degree-K Chebyshev interpolant of |x| on [-M, M] (near-minimax)."""
    x = M * np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    c = chebyshev.cheb2poly(chebyshev.chebfit(x / M, np.abs(x), K))
    return np.array([c[j] / M**j for j in range(len(c))])


def estimate(t_hat, coef, M2):
    """sum_j a_j He_j(t_hat) where |t_hat| <= M2 (unbiased for sum_j a_j t^j, sigma = 1), |t_hat| elsewhere."""
    # E He_j(t + Z) = t^j: the power coefficients a_j, read as a Hermite series, estimate sum_j a_j t^j
    poly = hermite_e.hermeval(t_hat, coef) if len(coef) else np.zeros_like(t_hat)
    return np.where(np.abs(t_hat) <= M2, poly, np.abs(t_hat))


def bias_and_sd(coef, M2, ts=np.linspace(0.0, 8.0, 161)):
    """(bias, SD) of :func:`estimate` at each t = g / sigma, by quadrature over Z on [-9, 9]."""
    z = np.linspace(-9.0, 9.0, 20001)
    w = stats.norm.pdf(z)
    w /= w.sum()
    out = []
    for t in ts:
        v = estimate(t + z, coef, M2)
        mean = float(v @ w)
        out.append((mean - t, float(np.sqrt(((v - mean) ** 2) @ w))))
    return np.array(out)


def part1():
    print("Part 1: bias range over g / sigma and SD, in units of sigma (exact, by quadrature)")
    plug = bias_and_sd(np.zeros(0), -1.0)
    print(f"{'estimator':<34}{'bias range':>20}{'range width':>13}{'SD at g = 0':>13}{'max SD':>8}")
    print(f"{'plug-in |g-hat|':<34}{f'[{plug[:, 0].min():+.3f}, {plug[:, 0].max():+.3f}]':>20}"
          f"{np.ptp(plug[:, 0]):>13.3f}{plug[0, 1]:>13.2f}{plug[:, 1].max():>8.2f}")
    best = np.inf
    for M, K, M2 in SETTINGS:
        r = bias_and_sd(abs_polynomial(M, K), M2)
        width = float(np.ptp(r[:, 0]))
        best = min(best, width)
        label = f"Hermite M = {M:g}, K = {K}, M2 = {M2:g}"
        print(f"{label:<34}{f'[{r[:, 0].min():+.3f}, {r[:, 0].max():+.3f}]':>20}{width:>13.3f}"
              f"{r[0, 1]:>13.2f}{r[:, 1].max():>8.2f}")
    print(f"narrowest polynomial range: {best:.3f} sigma = {best / np.sqrt(2 / np.pi):.2f} of the plug-in's")
    return best


class _SigmaSpy:
    """Records the rows' refit SD sigma (R, rows) of each refit pass (one per candidate, in order)."""

    def __init__(self):
        self.calls = []

    def __enter__(self):
        self._std, self._call = boot._std_over_refits, boot.RefitPass.__call__
        spy = self

        def std(e, scratch):
            s = spy._std(e, scratch)
            spy.calls[-1].append(s.copy())
            return s

        def call(pass_, *args):
            spy.calls.append([])
            return spy._call(pass_, *args)

        boot._std_over_refits, boot.RefitPass.__call__ = std, call
        return self

    def __exit__(self, *exc):
        boot._std_over_refits, boot.RefitPass.__call__ = self._std, self._call


def part2(cells, reps, best):
    print("\nPart 2: the finest candidate's bracket gap, in units of 0.798 x the rows' mean sigma (summed over the "
          "responses)")
    print(f"{'cell':<32}{'finest':>7}{'gap':>9}{'mean sigma':>12}{'gap / (0.798 sigma)':>21}{'  polynomial':>13}")
    zoo = socal.synthetic.validation_zoo()
    for cell in cells:
        name, h, n = cell.split()
        h, n = Fraction(h), int(n)
        pop = zoo[name].population
        ratios, gaps, sigmas, degs = [], [], [], []
        for rep in range(reps):  # coverage.py's seeds
            m, v, y = pop.sample(n, h=float(h), k=2, rng=np.random.default_rng(
                [zlib.crc32(name.encode()), round(1 / h), n, rep]))
            with _SigmaSpy() as spy:
                res = socal.ce2(m, v, y, h=float(h), ci=0.9, upper=0.95, rng=rep)
            finest = res.candidates[-1]
            sigma = float(np.concatenate(spy.calls[-1], axis=1).sum(axis=0).mean())
            gap = finest.bias_high - finest.bias_low
            gaps.append(gap), sigmas.append(sigma), degs.append(finest.degree)
            ratios.append(gap / (np.sqrt(2 / np.pi) * sigma))
            if rep == 0:
                first = ", ".join(f"{c.degree}: [{c.ci.low:.4f}, {c.ci.high:.4f}]" for c in res.candidates)
        label = f"{name} 1/{round(1 / h)} {n}"
        print(f"{label:<32}{int(np.median(degs)):>7}{np.mean(gaps):>9.4f}{np.mean(sigmas):>12.4f}"
              f"{f'{min(ratios):.2f}-{max(ratios):.2f}':>21}{best / np.sqrt(2 / np.pi):>13.2f}")
        print(f"    replicate 0, each candidate's interval (truth {float(pop.ce2(float(h))):.4f}): {first}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cells", default=",".join(CELLS), help="'member 1/H n', comma-separated")
    a = ap.parse_args(argv)
    best = part1()
    part2([c.strip() for c in a.cells.split(",") if c.strip()], a.reps, best)


if __name__ == "__main__":
    main()
