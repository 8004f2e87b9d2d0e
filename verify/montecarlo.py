"""Monte Carlo harnesses for the finite-sample claims: replicated errors, intervals, slopes, acceptance rules.

Every statistical verdict here comes from a test with a stated false-alarm rate, never from one seed:

* :func:`markov_acceptance`: a claim E|err| <= B(n) implies P(|err| > 2 B(n)) <= 1/2 (Markov); the count of
  replicates above 2 B(n) is compared with Binomial(R, 1/2) and the claim is rejected when the one-sided p-value is
  below ``false_alarm``.
* :func:`slope`: least-squares slope of log10(mean |err|) on log10(n) with a bootstrap interval over replicates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from socal.parallel import iter_jobs

from ._core import steps

__all__ = ["replicate_errors", "markov_acceptance", "slope", "mean_interval"]


def replicate_errors(estimate, truth, ns, reps, *, seed=0, n_jobs=1):
    """errors[n] = array of |estimate(n, rng) - truth| over ``reps`` replicates (joblib over replicates)."""
    jobs = [(n, np.random.SeedSequence([seed, n, r])) for n in ns for r in range(reps)]

    def one(n, ss):
        return abs(estimate(n, np.random.default_rng(ss)) - truth)

    # loky or dask, as socal.parallel.backend chose; same seeds, same values; each replicate moves the audit's bar
    vals = list(steps(iter_jobs(one, jobs, n_jobs=n_jobs), total=len(jobs), desc="replicates"))
    out = {n: [] for n in ns}
    for (n, _), v in zip(jobs, vals):
        out[n].append(v)
    return {n: np.array(v) for n, v in out.items()}


def mean_interval(errs, level=0.9):
    e = np.asarray(errs)
    half = stats.t.ppf((1 + level) / 2, len(e) - 1) * e.std(ddof=1) / math.sqrt(len(e))
    return float(e.mean()), float(e.mean() - half), float(e.mean() + half)


def slope(errors, *, n_boot=2000, seed=0):
    """(slope, low, high): slope of log10 mean error on log10 n, 95% bootstrap interval over replicates."""
    ns = np.array(sorted(errors))
    x = np.log10(ns)

    def fit(means):
        return float(np.polyfit(x, np.log10(np.maximum(means, 1e-300)), 1)[0])

    est = fit(np.array([errors[n].mean() for n in ns]))
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        boots.append(fit(np.array([rng.choice(errors[n], len(errors[n])).mean() for n in ns])))
    lo, hi = np.quantile(boots, [0.025, 0.975])
    return est, float(lo), float(hi)


def markov_acceptance(errors, bound, *, false_alarm=1e-3):
    """Reject 'E|err| <= bound(n) for every n' when replicates exceed 2 bound(n) too often (Binomial(R, 1/2)).

    Returns (accepted, details): details per n with the count above 2 bound(n) and the one-sided p-value; the
    family is Bonferroni-corrected over the n values.
    """
    alpha = false_alarm / len(errors)
    details, accepted = {}, True
    for n, e in sorted(errors.items()):
        B = bound(n)
        k = int(np.sum(e > 2 * B))
        p = float(stats.binom.sf(k - 1, len(e), 0.5)) if k > 0 else 1.0
        details[n] = {"bound": B, "mean_error": float(e.mean()), "above_2B": k, "reps": len(e), "p": p}
        accepted &= p >= alpha
    return accepted, details
