"""The CE average's pass: absolute deviations of fitted calibration functions from the scores (Eq. (cehat)).

The CE terms are defined here once: ``t1 = |eta1 - m|`` (first order) and ``t2 = |eta2 - (m^2 + var)|`` (second
order), averaged over the rows.  They are not linear in the data, so the CE average is a second pass after the fit;
:class:`DeviationStats` keeps its sums mergeable like :class:`socal.SufficientStats`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CE_RANGE", "score_moments", "ce_terms", "ce_value", "DeviationStats", "DeviationPass"]

# The CE functional's range, by order: t1 = |eta1 - m| <= 1 (both in [0, 1]); t2 = |eta2 - (m^2 + var)| <= 5/4, since
# eta2 lies in [0, 1] and m^2 + var in [0, 5/4] (a perturbed score may have var up to 1/4 at any m: it leaves the
# feasible region var <= m (1 - m)).  So CE1 lies in [0, 1] and CE2 in [0, 9/4].
CE_RANGE = {1: 1.0, 2: 2.25}


def score_moments(m, v):
    """The scores the CE terms compare with, shape (R, n): m (first order, ``v`` None), or m and m^2 + v."""
    return m[None, :] if v is None else np.stack([m, m * m + v])


def ce_terms(eta, m, v):
    """(t1, t2) per row: ``|eta[:, 0] - m|`` and ``|eta[:, 1] - (m^2 + v)|``; t2 = 0 when ``v`` is None (first
    order, or a one-column ``eta``).  ``eta`` is (n, 1) or (n, 2) predicted moments at the scores."""
    eta = np.asarray(eta)
    if eta.shape[1] < 2:
        v = None
    dev = np.abs(eta[:, : 1 if v is None else 2].T - score_moments(m, v))
    return dev[0], (np.zeros_like(dev[0]) if v is None else dev[1])


def ce_value(eta, m, v):
    """The CE average of Eq. (cehat): mean t1 + mean t2 (:func:`ce_terms`)."""
    t1, t2 = ce_terms(eta, m, v)
    return float(t1.mean() + t2.mean())


class DeviationStats:
    """The second pass: sums of the absolute deviations ``t1 = |eta1-hat - m|``, ``t2 = |eta2-hat - (m^2 + var)|``.

    Mergeable like :class:`SufficientStats`.  Holds n and the sums of t1, t2, t1^2, t2^2 and t1 t2, so the CE
    average and its sampling variance come out of any chunking.
    """

    def __init__(self, calmap: Any) -> None:
        self.calmap = calmap
        self.sums = np.zeros(6)  # n, t1, t2, t1^2, t2^2, t1 t2

    def update_validated(self, m: np.ndarray, v: np.ndarray | None) -> DeviationStats:
        """Add validated rows (:func:`socal.sources.check_rows`); returns self."""
        vv = v if self.calmap.ndim == 2 else None
        return self.add_predictions(self.calmap.predict(m, vv), m, vv)

    def add_predictions(self, eta: np.ndarray, m: np.ndarray, v: np.ndarray | None) -> DeviationStats:
        """Add rows whose eta-hat (the map's clipped prediction, (n, R)) is already computed; returns self."""
        t1, t2 = ce_terms(eta, m, v)
        self.sums += [t1.size, t1.sum(), t2.sum(), (t1 * t1).sum(), (t2 * t2).sum(), (t1 * t2).sum()]
        return self

    def merge(self, other: DeviationStats) -> DeviationStats:
        """The deviations of both chunks (exact, associative sums)."""
        out = DeviationStats(self.calmap)
        out.sums = self.sums + other.sums
        return out

    __add__ = merge

    @property
    def n(self):
        return int(round(self.sums[0]))

    @property
    def mean_term(self):
        return float(self.sums[1] / self.sums[0])

    @property
    def moment_term(self):
        return float(self.sums[2] / self.sums[0])


class DeviationPass:
    """The pass over a source that builds :class:`DeviationStats` at a fitted map."""

    def __init__(self, calmap):
        self.calmap = calmap

    def __call__(self, index, m, v, a, k):
        return DeviationStats(self.calmap).update_validated(m, v)
