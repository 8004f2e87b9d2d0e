"""Helpers shared by the bootstrap test modules: the determinism data and headline, and the world's law."""


import numpy as np
from scipy import stats

import socal


def _determinism_data():
    pop = socal.synthetic.validation_zoo()["toy"].population
    return pop.sample(3000, h=1 / 16, rng=4)


def _headline(res):
    """The reported numbers, and every Lepski candidate's (``res.candidates``), as one array."""
    cands = [[c.degree, c.plugin, c.estimate, c.bias_low, c.bias_high, c.noise_sd, c.ci.low, c.ci.high, c.upper.value]
             for c in res.candidates]
    return np.array([res.estimate, res.plugin, res.ci.low, res.ci.high, res.upper.value, res.degree]
                    + [x for c in cands for x in c])



def _world_pmf(p1, p2, k):
    """P(a = 0..k) for a ~ Binomial(k, f*), f* of the world's law: a point mass at p1 (no spread), Bernoulli(p1) (the
    largest spread), otherwise Beta with mean p1 and second moment p2 (exact enumeration, for the tests)."""
    var, a = p2 - p1 * p1, np.arange(k + 1)
    if var <= 1e-12:
        return stats.binom.pmf(a, k, p1)
    if var >= p1 * (1 - p1) * (1 - 1e-9):
        return np.where(a == 0, 1 - p1, 0.0) + np.where(a == k, p1, 0.0)
    s = p1 * (1 - p1) / var - 1
    return stats.betabinom.pmf(a, k, p1 * s, (1 - p1) * s)
