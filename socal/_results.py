"""Result objects: frozen dataclasses with named fields, never tuples whose shape depends on a flag."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ConfidenceInterval", "UpperBound", "CalibrationError", "SelectionReport"]


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float
    level: float

    def __iter__(self):  # allows ``low, high = result.ci``
        return iter((self.low, self.high))


@dataclass(frozen=True)
class UpperBound:
    """A one-sided confidence bound: the quantity is <= ``value`` with confidence ``level``."""

    value: float
    level: float

    def __float__(self):
        return float(self.value)


@dataclass(frozen=True)
class SelectionReport:
    """How (degree, alpha) were chosen.

    ``cv_error[i, j]`` is the held-out mean squared error (both responses summed) at ``degrees[i]``, ``alphas[j]``;
    NaN where a combination was not tried.  ``method`` is 'cv', 'holdout' or 'fixed'.  ``rule`` says how the CE
    estimators chose between the cross-validated degree and finer ones (Lepski's rule; :func:`socal.ce2`, Notes).
    """

    method: str
    degrees: tuple
    alphas: tuple
    cv_error: np.ndarray = field(repr=False, compare=False)
    folds: int
    rule: str = "cv"

    def errors(self) -> dict[tuple[int, float], float]:
        """The held-out errors tried, as {(degree, alpha): error}."""
        tried = np.argwhere(~np.isnan(np.asarray(self.cv_error, dtype=float)))
        return {(self.degrees[i], self.alphas[j]): float(self.cv_error[i, j]) for i, j in tried}


@dataclass(frozen=True)
class CalibrationError:
    """An estimate of CE2 (Eq. (cehat)) or CE1 (Remark "First-Order Calibration") with its ingredients.

    Attributes
    ----------
    estimate : float
        The headline estimate: the bias-corrected value (``plugin - bias``, clipped at 0) when the estimator ran
        with ``debias=True`` (the default), else the plug-in.
    plugin : float
        The paper's plug-in estimate (Eq. (cehat)): ``mean_term + moment_term``.
    mean_term : float
        ``(1/n) sum_i |eta1_hat(S_i) - m_i|``.
    moment_term : float
        ``(1/n) sum_i |eta2_hat(S_i) - (m_i^2 + var_i)|``; 0.0 for CE1.
    degree, alpha : the polynomial degree per axis and the relative ridge actually used.
    n : int, number of items.  h : the bandwidth passed (None if not given).
    ci : ConfidenceInterval or None (see the estimator's docstring for what it covers); it contains ``estimate``.
    upper : UpperBound or None, a one-sided upper confidence bound (``upper=`` of the estimator).
    debiased : float or None, ``plugin - bias`` clipped at 0, when a bootstrap was run.
    bias : float or None, the parametric-bootstrap estimate of E[plugin] - truth.
    selection : SelectionReport
    kind : 'ce2' or 'ce1'
    """

    estimate: float
    mean_term: float
    moment_term: float
    degree: int
    alpha: float
    n: int
    h: float | None
    ci: ConfidenceInterval | None
    debiased: float | None
    bias: float | None
    selection: SelectionReport = field(repr=False)
    kind: str = "ce2"
    plugin: float | None = None
    upper: UpperBound | None = None

    def __post_init__(self):
        if self.plugin is None:  # an estimator without bias correction: the headline is its plug-in
            object.__setattr__(self, "plugin", float(self.mean_term + self.moment_term))

    def __float__(self):
        return float(self.estimate)

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        out = {k: getattr(self, k) for k in ("kind", "estimate", "plugin", "mean_term", "moment_term", "degree",
                                             "alpha", "n", "h", "debiased", "bias")}
        out["ci"] = None if self.ci is None else {"low": self.ci.low, "high": self.ci.high, "level": self.ci.level}
        out["upper"] = None if self.upper is None else {"value": self.upper.value, "level": self.upper.level}
        out["selection"] = self.selection.method
        return out
