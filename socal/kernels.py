"""The truncated sech perturbation kernel (Definition "Sech perturbation", Eq. (kernel) of the paper).

.. math::

    k_h(t \\mid s) = \\frac{\\operatorname{sech}((t - s)/h)}{Z(s, h)} \\mathbf 1_{[a, b]}(t), \\qquad
    Z(s, h) = \\int_a^b \\operatorname{sech}\\Big(\\frac{u - s}{h}\\Big)\\,du
            = h\\,[\\operatorname{gd}((b - s)/h) - \\operatorname{gd}((a - s)/h)],

where gd is the Gudermannian function, the antiderivative of sech: gd(x) = 2 arctan(e^x) - pi/2.

Numerics.  Every probability is a ratio of Gudermannian differences gd(y) - gd(x).  Computed naively they cancel
when x and y lie far out on the same side (h small, t in a tail); here they are computed as

.. math::

    \\operatorname{gd}(y) - \\operatorname{gd}(x) = 2\\arctan\\frac{e^y - e^x}{1 + e^{x + y}}

in logarithmic form, after reflecting so that x + y <= 0, which neither overflows nor cancels for any h down to
1/1024 and any s in [a, b] (the interval ends included).  The inverse CDF is the closed form of Appendix
"Experiment 1", G^{-1}(u; s, h) = s + 2h artanh(tan(u / (2h))), written in the same cancellation-free variables
and evaluated from whichever end of the interval is nearer in probability.
"""

from __future__ import annotations

import numpy as np

from ._typing import ArrayLike, Seed
from ._validation import check_bandwidth, check_float, check_rng, check_shape

__all__ = ["SechKernel", "gd_diff"]


def gd_diff(x, y):
    """gd(y) - gd(x) for x <= y (elementwise), accurate to a few ulps in relative terms, without overflow."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    flip = (x + y) > 0
    lo = np.where(flip, -y, x)  # reflection gd(y) - gd(x) = gd(-x) - gd(-y) keeps lo + hi <= 0
    hi = np.where(flip, -x, y)
    with np.errstate(divide="ignore", over="ignore"):
        # log of (e^hi - e^lo) / (1 + e^{lo + hi})
        log_ratio = hi + np.log1p(-np.exp(lo - hi)) - np.log1p(np.exp(lo + hi))
    small = log_ratio <= 0
    with np.errstate(over="ignore"):
        out = np.where(small, 2.0 * np.arctan(np.exp(np.minimum(log_ratio, 0.0))),
                       np.pi - 2.0 * np.arctan(np.exp(-np.maximum(log_ratio, 0.0))))
    return out


def _g(x):
    """2 arctan(e^x) = gd(x) + pi/2, in (0, pi), without overflow."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(x <= 0, 2.0 * np.arctan(np.exp(np.minimum(x, 0.0))),
                        np.pi - 2.0 * np.arctan(np.exp(-np.maximum(x, 0.0))))


def _sech(x):
    ax = np.abs(x)
    e = np.exp(-ax)
    return 2.0 * e / (1.0 + e * e)  # sech(x) = 2 e^{-|x|} / (1 + e^{-2|x|})


class SechKernel:
    """Truncated sech kernel k_h(t | s) on [lo, hi] (Eq. (kernel)).

    Parameters
    ----------
    h : float
        Bandwidth, > 0.  The paper uses h in {1/16, 1/64}; the numerics are accurate for h from 1 to 1/1024.
    lo, hi : float
        The interval the perturbed score lives in: [0, 1] for the mean, [0, 1/4] for the variance.

    Notes
    -----
    All methods broadcast their array arguments against each other (like scipy.stats distributions).  ``s`` is the
    centre (the unperturbed score); it may lie anywhere in [lo, hi], the ends included.

    Examples
    --------
    >>> k = SechKernel(1/16)
    >>> float(k.cdf(0.5, 0.5))
    0.5
    >>> round(float(k.ppf(k.cdf(0.3, 0.9), 0.9)), 12)
    0.3
    """

    def __init__(self, h: float, lo: float = 0.0, hi: float = 1.0) -> None:
        self.h = check_bandwidth(h, "SechKernel")
        self.lo = check_float(lo, "lo", "SechKernel", -np.inf, np.inf, lo_open=True, hi_open=True)
        self.hi = check_float(hi, "hi", "SechKernel", -np.inf, np.inf, lo_open=True, hi_open=True)
        if not self.hi > self.lo:
            raise ValueError(f"The 'hi' parameter of SechKernel must be greater than 'lo' ({lo}). Got {hi} instead.")

    def __repr__(self):
        return f"SechKernel(h={self.h!r}, lo={self.lo!r}, hi={self.hi!r})"

    # -- helpers -----------------------------------------------------------------------------------------------
    def _check(self, t, s, func, tname="t"):
        """Broadcast float arrays; the centre s must lie in [lo, hi] and both must be finite."""
        try:
            t, s = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(s, dtype=float))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"The '{tname}' and 's' parameters of SechKernel.{func} must be arrays of real numbers "
                             f"that broadcast together ({exc}).") from None
        for name, x in ((tname, t), ("s", s)):
            if not np.all(np.isfinite(x)):
                raise ValueError(f"The '{name}' parameter of SechKernel.{func} must be finite (no NaN or inf). "
                                 f"Got {int(np.count_nonzero(~np.isfinite(x)))} non-finite value(s) instead.")
        if np.any((s < self.lo) | (s > self.hi)):
            bad = s[(s < self.lo) | (s > self.hi)].flat[0]
            raise ValueError(f"The 's' parameter of SechKernel.{func} (the unperturbed score) must be in "
                             f"[{self.lo}, {self.hi}]. Got {float(bad)!r} instead.")
        return t, s

    def _ends(self, s):
        s = np.asarray(s, dtype=float)
        return (self.lo - s) / self.h, (self.hi - s) / self.h

    def _mass(self, s):
        a, b = self._ends(s)
        return gd_diff(a, b)  # Z(s, h) / h

    # -- public API --------------------------------------------------------------------------------------------
    def normalizer(self, s: ArrayLike) -> np.ndarray:
        """Z(s, h) = h [gd((hi - s)/h) - gd((lo - s)/h)] in closed form."""
        _, s = self._check(0.0, s, "normalizer")
        return self.h * self._mass(s)

    def pdf(self, t: ArrayLike, s: ArrayLike) -> np.ndarray:
        """Density k_h(t | s); zero outside [lo, hi]."""
        centre = np.asarray(s, dtype=float)
        t, s = self._check(t, s, "pdf")
        x = (t - s) / self.h
        # the normaliser per centre, before broadcasting: on an (atoms, points) grid it was evaluated per cell
        dens = _sech(x) / (self.h * self._mass(centre))
        return np.where((t >= self.lo) & (t <= self.hi), dens, 0.0)

    def logpdf(self, t: ArrayLike, s: ArrayLike) -> np.ndarray:
        """The log density of the truncated kernel at ``t`` given the raw score ``s`` (-inf outside its interval)."""
        centre = np.asarray(s, dtype=float)
        t, s = self._check(t, s, "logpdf")
        ax = np.abs((t - s) / self.h)
        logsech = np.log(2.0) - ax - np.log1p(np.exp(-2.0 * ax))
        out = logsech - np.log(self.h * self._mass(centre))  # (the normaliser per centre, as in pdf)
        return np.where((t >= self.lo) & (t <= self.hi), out, -np.inf)

    def cdf(self, t: ArrayLike, s: ArrayLike) -> np.ndarray:
        """P(T <= t) for T ~ k_h(. | s)."""
        t, s = self._check(t, s, "cdf")
        a, b = self._ends(s)
        x = (np.clip(t, self.lo, self.hi) - s) / self.h
        return np.clip(gd_diff(a, x) / gd_diff(a, b), 0.0, 1.0)

    def sf(self, t: ArrayLike, s: ArrayLike) -> np.ndarray:
        """P(T > t), computed from the upper end (no cancellation for t near hi)."""
        t, s = self._check(t, s, "sf")
        a, b = self._ends(s)
        x = (np.clip(t, self.lo, self.hi) - s) / self.h
        return np.clip(gd_diff(x, b) / gd_diff(a, b), 0.0, 1.0)

    def ppf(self, q: ArrayLike, s: ArrayLike) -> np.ndarray:
        """Inverse CDF: the closed form G^{-1}(u; s, h) = s + 2h artanh(tan(u/(2h))) of Appendix "Experiment 1".

        Written as x = log tan(g/2) with g = 2 arctan(e^x) = gd(x) + pi/2, and from the upper end for q > 1/2, so
        that both tails keep their relative accuracy.
        """
        q, s = self._check(q, s, "ppf", "q")
        if np.any((q < 0) | (q > 1)):
            raise ValueError("The 'q' parameter of SechKernel.ppf must be in [0, 1]. Got values outside it instead.")
        a, b = self._ends(s)
        mass = gd_diff(a, b)
        lower = q <= 0.5
        with np.errstate(divide="ignore"):
            y_lo = _g(a) + q * mass  # 2 arctan(e^x) measured from the lower end
            y_hi = _g(-b) + (1.0 - q) * mass  # 2 arctan(e^{-x}) measured from the upper end
            x = np.where(lower, np.log(np.tan(np.minimum(y_lo, np.pi) / 2.0)),
                         -np.log(np.tan(np.minimum(y_hi, np.pi) / 2.0)))
        return np.clip(s + self.h * x, self.lo, self.hi)

    def rvs(self, s: ArrayLike, rng: Seed = None, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        """Draw T ~ k_h(. | s) by inverse-CDF sampling; ``size`` (an int or a tuple of ints >= 0, as numpy's
        ``size``) defaults to the shape of ``s``."""
        rng = check_rng(rng, "SechKernel.rvs")
        s = np.asarray(s, dtype=float)
        shape = s.shape if size is None else check_shape(size, "size", "SechKernel.rvs")
        return self.ppf(rng.random(shape), s)
