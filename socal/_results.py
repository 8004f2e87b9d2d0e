"""Result objects: frozen dataclasses with named fields, never tuples whose shape depends on a flag."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from ._validation import warn_renamed_attribute
from .tables import Tabular

__all__ = ["ConfidenceInterval", "UpperBound", "CalibrationError", "DegreeEstimate", "SelectionReport"]


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float
    level: float

    def __iter__(self):  # allows ``low, high = result.ci``
        return iter((self.low, self.high))

    def __contains__(self, value):
        """``truth in result.ci``: the closed interval [low, high].  Anything but a real number is not in it (as
        ``'a' in range(3)`` is False), rather than an error from converting it; an array of several values is a
        TypeError, as one answer for many would be a guess."""
        if isinstance(value, np.ndarray) and value.size != 1:
            raise TypeError(f"'in' tests one value; for an array of {value.size} use (ci.low <= x) & (x <= ci.high).")
        if isinstance(value, np.ndarray):
            value = value.reshape(())[()]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return False
        return bool(self.low <= float(value) <= self.high)


@dataclass(frozen=True)
class UpperBound:
    """A one-sided confidence bound: the quantity is <= ``value`` with confidence ``level``."""

    value: float
    level: float

    def __float__(self):
        return float(self.value)

    def __format__(self, spec):  # f"{result.upper:.3f}" formats the bound; an empty spec keeps the repr
        return format(float(self.value), spec) if spec else str(self)


@dataclass(frozen=True)
class SelectionReport:
    """How (degree, ridge) were chosen.

    ``cv_error[i, j]`` is the held-out mean squared error (both responses summed) at ``degrees[i]``, ``ridges[j]``;
    NaN where a combination was not tried.  ``method`` is 'cv', 'holdout' or 'fixed'.  ``rule`` says how the CE
    estimators chose between the cross-validated degree and finer ones (Lepski's rule; :func:`socal.ce2`, Notes).
    """

    method: str
    degrees: tuple
    ridges: tuple
    cv_error: np.ndarray = field(repr=False, compare=False)
    folds: int
    rule: str = "cv"

    def errors(self) -> dict[tuple[int, float], float]:
        """The held-out errors tried, as {(degree, ridge): error}."""
        tried = np.argwhere(~np.isnan(np.asarray(self.cv_error, dtype=float)))
        return {(self.degrees[i], self.ridges[j]): float(self.cv_error[i, j]) for i, j in tried}

    @property
    def alphas(self):
        """Deprecated: :attr:`ridges` (its former name)."""
        warn_renamed_attribute("SelectionReport", "alphas", "ridges")
        return self.ridges


@dataclass(frozen=True)
class DegreeEstimate:
    """One degree that Lepski's rule compared (:attr:`CalibrationError.candidates`), and what it gives alone.

    ``plugin`` is the degree's plug-in.  With the bootstrap (``debias=True``): ``bias_low <= bias_high`` are its two
    bias corrections, the one-step and the shrunken-world one in whichever order they fell (the first sees too little
    of the plug-in's bias, the second too much: :func:`socal.bootstrap.bootstrap`), ``estimate`` is the plug-in less
    their midpoint (clipped to the functional's range) and ``noise_sd`` the bootstrap SD of the plug-in.  ``ci`` runs
    from plugin - bias_high - q_hi to plugin - bias_low - q_lo, q the bootstrap quantiles of the plug-in's
    fluctuation (clipped to the functional's range, and holding ``estimate``), so its width is the bracket's gap
    ``bias_high - bias_low`` plus the noise's own interval; the reported interval is the union of the candidates'
    (``CalibrationError.ci``), and the reported bound the largest of their ``upper``.  Without the bootstrap only
    ``degree``, ``ridge`` and ``plugin`` are set.  ``chosen`` marks the degree whose estimate is reported."""

    degree: int
    ridge: float
    plugin: float
    chosen: bool = False
    estimate: float | None = None
    bias_low: float | None = None
    bias_high: float | None = None
    noise_sd: float | None = None
    ci: ConfidenceInterval | None = None
    upper: UpperBound | None = None

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        out = {k: getattr(self, k) for k in ("degree", "ridge", "plugin", "chosen", "estimate", "bias_low",
                                             "bias_high", "noise_sd")}
        out["ci"] = None if self.ci is None else {"low": self.ci.low, "high": self.ci.high, "level": self.ci.level}
        out["upper"] = None if self.upper is None else {"value": self.upper.value, "level": self.upper.level}
        return out

    @property
    def alpha(self):
        """Deprecated: :attr:`ridge` (its former name)."""
        warn_renamed_attribute(type(self).__name__, "alpha", "ridge")
        return self.ridge


@dataclass(frozen=True)
class CalibrationError(Tabular):
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
    degree, ridge : the polynomial degree per axis and the relative ridge actually used (``alpha``: ridge's
        former name, deprecated).
    n : int, number of items.  h : the bandwidth passed (None if not given).
    ci : ConfidenceInterval or None (see the estimator's docstring for what it covers); it contains ``estimate``,
        and it reaches 0 when the calibration test on the same scores does not reject CE = 0 (``null_pvalue``).
    upper : UpperBound or None, a one-sided upper confidence bound (``upper=`` of the estimator).
    debiased : float or None, ``plugin - bias`` clipped at 0, when a bootstrap was run.
    bias : float or None, the parametric-bootstrap estimate of E[plugin] - truth.
    selection : SelectionReport
    kind : 'ce2' or 'ce1'
    candidates : tuple of DegreeEstimate, the degrees Lepski's rule compared (the cross-validated one and the finer
        ones it tried; one without a choice), coarsest first, each with its plug-in, bias bracket, estimate,
        interval and bound.  ``ci`` is the union of their intervals and ``upper`` the largest of their bounds, so
        this is where a wide interval comes from: a candidate's gap ``bias_high - bias_low`` (its two bias
        corrections disagree), its noise (``noise_sd``), or the spread of the candidates' estimates.
    null_pvalue : float or None, with ``ci``: the p-value of :func:`socal.calibration_test` (order 2 for CE2, 1 for
        CE1) on the same scores and labels, the test of CE = 0 (0 where a score lies outside the feasible region
        var <= m (1 - m), which makes CE2 > 0 outright).  At least 1 - ``ci.level``: the interval's lower end is 0.
        None without ``ci``, and where the candidates' interval reaches 0 by itself (the test is then not run).
    """

    estimate: float
    mean_term: float
    moment_term: float
    degree: int
    ridge: float
    n: int
    h: float | None
    ci: ConfidenceInterval | None
    debiased: float | None
    bias: float | None
    selection: SelectionReport = field(repr=False)
    kind: str = "ce2"
    plugin: float | None = None
    upper: UpperBound | None = None
    candidates: tuple = field(default=(), repr=False, compare=False)
    null_pvalue: float | None = None

    def __post_init__(self):
        if self.plugin is None:  # an estimator without bias correction: the headline is its plug-in
            object.__setattr__(self, "plugin", float(self.mean_term + self.moment_term))

    def __float__(self):
        return float(self.estimate)

    def __format__(self, spec):  # f"CE2 = {result:.3f}" formats the estimate; an empty spec keeps the repr
        return format(float(self.estimate), spec) if spec else str(self)

    def summary(self) -> str:
        """The estimate in one line: value, interval, n, degree and h."""
        ci = "" if self.ci is None else (f", {int(round(self.ci.level * 100))}% interval [{self.ci.low:.4f}, "
                                          f"{self.ci.high:.4f}]")
        return f"{self.kind.upper()} = {self.estimate:.4f}{ci} (n = {self.n:,}, degree {self.degree}, h = {self.h})"

    def _rows(self):
        return [{"kind": self.kind, "estimate": self.estimate, "ci_low": None if self.ci is None else self.ci.low,
                 "ci_high": None if self.ci is None else self.ci.high,
                 "ci_level": None if self.ci is None else self.ci.level, "plugin": self.plugin,
                 "mean_term": self.mean_term, "moment_term": self.moment_term, "bias": self.bias,
                 "degree": self.degree, "h": self.h, "n": self.n, "null_pvalue": self.null_pvalue}]

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        out = {k: getattr(self, k) for k in ("kind", "estimate", "plugin", "mean_term", "moment_term", "degree",
                                             "ridge", "n", "h", "debiased", "bias", "null_pvalue")}
        out["ci"] = None if self.ci is None else {"low": self.ci.low, "high": self.ci.high, "level": self.ci.level}
        out["upper"] = None if self.upper is None else {"value": self.upper.value, "level": self.upper.level}
        out["selection"] = self.selection.method
        out["candidates"] = [c.to_dict() for c in self.candidates]
        return out

    @property
    def alpha(self):
        """Deprecated: :attr:`ridge` (its former name)."""
        warn_renamed_attribute(type(self).__name__, "alpha", "ridge")
        return self.ridge
