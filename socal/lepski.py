"""Lepski's rule: the degree of the CE estimate, chosen among the cross-validated fit and finer ones.

Cross-validated squared error picks the degree that best predicts labels; the CE functional can need more (structure
of width ~h in the score costs little squared error and is exactly the error).  So the bias-corrected estimate is
also computed at finer degrees, each with its ridge cross-validated, and the smallest degree whose estimate agrees
with every finer one's within ``LEPSKI_Z`` standard errors is kept (Lepski, 1991: a coarser fit is kept unless the
data show that it smoothed away some of the error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .chebyshev import assemble_gram
from .degrees import MIN_ROWS_PER_COEF, admissible_degree, resolution_degree, training_rows
from .deviations import DeviationStats
from .fitting import select_and_fit

__all__ = ["Candidate", "finer_fits", "choose_degree", "label_noise_factor", "MIN_ROWS_PER_COEF", "LEPSKI_Z"]


@dataclass(frozen=True)
class Candidate:
    """A fitted degree with its CE average (pass 2) and, with ``debias``, its bootstrap."""

    fit: Any
    dev: DeviationStats
    plugin: float
    boot: Any  # BootstrapResult or None


LEPSKI_Z = 2.0
_NOISE_DEAD_ZONE = 1.01  # a label-noise factor below this counts as two labels' (rounding of the sums, k = 2)


def label_noise_factor(stats, fit):
    """How many rows with two labels each one row of these data is worth, for the noise of the a/k target: the
    ratio of the target's mean variance given the scores with two labels per item to its variance here (1 for
    two labels, more with more; second-order statistics only, 1 otherwise).

    With a ~ Binomial(k, f*), Var(a/k | S) = E[f* (1 - f*) / k | S] + Var(f* | S): the first part is the label noise,
    which more labels shrink; the second, the spread of f* within a level set, they do not.  Every part has an
    unbiased estimate from the sufficient statistics: E[(a/k)^2 - z2] = E[f* (1 - f*) / k] and E[a/k - z2] =
    E[f* (1 - f*)] (z2 = a(a-1)/(k(k-1)), E[z2 | f*] = f*^2), and E Var(f* | S) = E[z2] - E[eta1(S)^2], the last from
    the cross-validated fit (beta' G beta / n).  So the factor is (E[f*(1-f*)]/2 + V) / (E[f*(1-f*)/k] + V).  Why it
    matters: the finest degree Lepski's rule compares has MIN_ROWS_PER_COEF training rows per coefficient, a rule
    measured with two labels per item; with 10 labels the finer degrees cost little noise, and at n = 5,000,
    h = 1/16 the interval held the truth in 0.84 of samples on the toy population with the rule as it was
    (docs/numbers.md, "With k >= 3 labels per item").  Factors below 1.01 count as 1: two labels' own factor is 1
    up to the sums' rounding, and the rule for two labels is left exactly as it was."""
    if stats.Z.shape[1] < 2 or fit.calmap.beta.shape[1] < 2:
        return 1.0
    n = float(stats.count.sum())
    s1, s2 = float(stats.Z[:, 0, 0, 0].sum()), float(stats.Z[:, 1, 0, 0].sum())
    noise_k = (float(stats.zz[:, 0].sum()) - s2) / n  # E[f* (1 - f*) / k]
    noise_2 = (s1 - s2) / n / 2.0  # E[f* (1 - f*)] / 2
    beta = fit.calmap.beta[:, 0]
    eta_sq = float(beta @ assemble_gram(stats.M.sum(axis=0), fit.calmap.basis) @ beta) / n
    spread = max(s2 / n - eta_sq, 0.0)  # E Var(f* | S)
    if not (noise_2 > 0 and noise_k + spread > 0):
        return 1.0
    factor = (noise_2 + spread) / (noise_k + spread)
    return factor if factor >= _NOISE_DEAD_ZONE else 1.0


def finer_fits(stats, fit, opts, func):
    """Fits at finer degrees than the cross-validated one (the ridge cross-validated at each), smallest first: the
    schedule's degrees with at least MIN_ROWS_PER_COEF training rows per coefficient; the largest degree with that
    many (at most the schedule's top), unless a candidate within 10% below it is already there; and, when ``h`` is
    given, the resolution degree ceil(1/(pi h)) if the schedule reaches it (unless a schedule degree within 10%
    above it is already there).

    Why the largest admissible degree: nothing checks the finest candidate's smoothing bias, and the interval's
    union rests on it, so the comparison must reach as fine as the data support.  The halving schedule alone
    leaves a gap of up to a factor 2: at n = 50,000 in 2-D it stops at 22 while 27 has 50 rows per coefficient.
    With more than two labels per item the training rows count as :func:`label_noise_factor` rows each, as their
    targets are less noisy."""
    if opts.degree is not None or fit.selection.method not in ("cv", "holdout") or not fit.selection.degrees:
        return []
    lc, top = fit.calmap.degree, max(fit.selection.degrees)
    n_train = training_rows(stats.n, stats.folds, stats.holdout)
    # the finest with MIN_ROWS_PER_COEF rows per coefficient, rows counted by their label noise
    admissible = admissible_degree(int(n_train * label_noise_factor(stats, fit)), stats.ndim)
    finer = {d for d in fit.selection.degrees if lc < d <= admissible}
    widest = min(admissible, top)
    if widest > lc and not any(widest <= 1.1 * d for d in finer | {lc}):
        finer.add(widest)
    if opts.h is not None:
        res = resolution_degree(opts.h)
        if lc < res <= top and not any(res <= d <= 1.1 * res for d in finer):
            finer.add(res)
    # the ridge search at each starts from cross-validation's ridge, as the greedy search does from one degree to
    # the next (the best ridge does not fall as the degree grows), instead of trying every ridge: a third of the
    # factorisations (measured in docs/numbers.md); and it reads the errors cross-validation already computed (the
    # degree above cross-validation's choice, where its search stopped, was walked from the same ridge)
    known = fit.selection.errors()
    return [select_and_fit(stats, degrees=(d,), alphas=opts.alphas, select=opts.select_alpha, search=opts.search,
                           start_alpha=fit.calmap.alpha, known=known) for d in sorted(finer)]


def choose_degree(cands):
    """Lepski's rule over the candidates (the cross-validated fit first, then finer degrees): the smallest degree
    whose bias-corrected estimate is within LEPSKI_Z standard errors of every finer one's.  The bootstraps share
    their draws, so the spread of the difference of two candidates' bootstrap deviations is the standard error of
    the difference of their estimates.  A coarser fit is kept unless the data show that it smoothed away some of
    the error.

    Returns (the chosen candidate's index, what was decided and why)."""
    lc = cands[0].fit.calmap.degree
    if len(cands) == 1:
        return 0, "cv"
    for k, c in enumerate(cands):
        for f in cands[k + 1:]:
            diff = f.boot.debiased - c.boot.debiased
            se = float(np.std(f.boot.deltas - c.boot.deltas))
            if abs(diff) > LEPSKI_Z * se:
                break
        else:
            lk = c.fit.calmap.degree
            finer = ", ".join(str(f.fit.calmap.degree) for f in cands[1:])
            if k == 0:
                return 0, (f"cv: degree {lc}; the finer degrees {finer} agree within {LEPSKI_Z:g} standard errors")
            return k, (f"lepski: degree {lk}; cv's degree {lc} and the others below {lk} differ from a finer degree "
                       f"by more than {LEPSKI_Z:g} standard errors (finer degrees tried: {finer})")
    raise AssertionError("the finest candidate always agrees with itself")  # pragma: no cover
