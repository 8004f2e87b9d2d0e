"""The bandwidth rule of :func:`socal.evaluate`: h per axis from the raw scores and n, by a stated rule.

The perturbation (Definition "Sech perturbation") is what gives the CE2 estimate the paper's rate; it also blurs the
scores.  A sech kernel of scale h moves a score by h ln(1 + sqrt 2) = 0.881 h in the median (untruncated: its CDF is
(2/pi) arctan(exp(t/h))), so on an axis whose raw values spread over s, a bandwidth above s / 0.881 leaves the
perturbed values mostly noise: a sharp ensemble (variances of 1e-6) perturbed at h_var = 1/64 has perturbed
variances that say nothing of the reported ones, and the perturbed CE2 then reads against a reference it cannot be
told apart from.

The rule, per axis:

1. **Spread.**  s = the interquartile range of the raw values; where that is 0 (most scores equal), their standard
   deviation; where that is 0 too (a constant), the distance of the constant from the nearer end of its axis.
2. **Keep the scores.**  h_wanted = min(h_default, :data:`BANDWIDTH_FRACTION` s / 0.881): the median move is at most
   that fraction of the spread, and never more than the paper's default (1/16 on the mean, 1/64 on the variance).
3. **What n supports.**  A fit resolves structure of width h only at degree l >= 1 / (pi h) on the mean axis and
   1 / (4 pi h) on the variance axis (:func:`socal.degrees.resolution_degree`); the degree :func:`socal.ce2` can
   reach at n is l_n = min(44, the largest l with (l + 1)^2 <= training rows) (its cap and the primal ridge's row
   limit, :func:`socal.degrees.resolve_degrees`).  So h_floor = 1 / (pi l_n) on the mean and 1 / (4 pi l_n) on the
   variance, and h = max(h_wanted, h_floor).
4. **When the floor wins.**  The axis's information is not kept: for the variance axis, :func:`socal.evaluate`
   reports the test and CE1 but no CE2, and names what would be needed: h_wanted, the degree it takes, and the n
   from which that degree is reached (none when it is above the cap 44 at any n).

The fraction (1/2) is the one the measurement chose (``python benchmarks/bandwidth.py --auto --fractions
0.5,1,2,fixed``, on the validation zoo and on :func:`socal.synthetic.sharp_population`; the table and its reading
are in the docs' guide, "Choosing h"): where the rule declines, a CE2 at a larger h read against its reference hides
the error the test sees; where it estimates, the interval covers as at the paper's h.  What it does on real
ensembles is in docs/real_models.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_float
from .degrees import DEFAULT_FOLDS, DEFAULT_MAX_DEGREE, training_rows

__all__ = ["choose_bandwidth", "BandwidthChoice", "BANDWIDTH_FRACTION", "DEFAULT_BANDWIDTH", "SECH_MEDIAN_SHIFT"]

DEFAULT_BANDWIDTH = (1 / 16, 1 / 64)  # the paper's 1/16 on the mean, the matched quarter on the variance
BANDWIDTH_FRACTION = 0.5  # the median move of a perturbed score, as a fraction of the raw axis's spread
SECH_MEDIAN_SHIFT = math.log1p(math.sqrt(2.0))  # median |t - s| / h of an untruncated sech kernel: 0.881



@dataclass(frozen=True)
class BandwidthChoice:
    """What :func:`choose_bandwidth` chose, and why.

    Attributes
    ----------
    h : (float, float)
        The bandwidth per axis (h_mean, h_var): max(wanted, floor).
    wanted, floor : (float, float)
        The largest h that keeps each axis's scores (step 2 of the rule) and the smallest that n supports (step 3).
    spread : (float, float)
        The raw axes' spreads (step 1).
    degree : int
        l_n: the degree the CE estimators can reach at this n.
    keeps_mean, keeps_var : bool
        Whether wanted >= floor on that axis: the perturbation keeps the axis's information at a supported h.
    needed_degree : int
        The degree the wanted variance bandwidth needs (ceil(1 / (4 pi h_var wanted)); a huge number for h 0).
    needed_n : int or None
        The smallest n at which that degree is supported; None when it is above the cap 44 (no n suffices: only a
        larger spread of the reported variances would).
    n : int
    fraction : float
        The fraction of step 2.
    """

    h: tuple[float, float]
    wanted: tuple[float, float]
    floor: tuple[float, float]
    spread: tuple[float, float]
    degree: int
    keeps_mean: bool
    keeps_var: bool
    needed_degree: int
    needed_n: int | None
    n: int
    fraction: float = BANDWIDTH_FRACTION

    def describe(self) -> str:
        """The choice in words, one paragraph."""
        hm, hv = self.h
        text = (f"Bandwidth chosen from the data: h = ({hm:.3g} on the mean, {hv:.3g} on the variance), so that the "
                f"perturbation moves each score by at most {self.fraction:g} of its axis's spread in the median "
                f"(spreads {self.spread[0]:.3g} and {self.spread[1]:.3g}), within what n = {self.n} supports (h >= "
                f"{self.floor[0]:.3g} and {self.floor[1]:.3g}: degree {self.degree}).")
        if not self.keeps_var:
            need = (f"at n >= {self.needed_n:,}" if self.needed_n is not None else
                    f"at no n under the degree cap {DEFAULT_MAX_DEGREE}")
            deg = f"{self.needed_degree:,}" if self.needed_degree <= 10**6 else "over a million"
            text += (f"  The reported variances spread over {self.spread[1]:.3g} only: keeping them needs h_var <= "
                     f"{self.wanted[1]:.3g}, a degree of {deg} per axis, supported {need}.")
        if not self.keeps_mean:
            text += (f"  The means spread over {self.spread[0]:.3g} only: h_mean = {hm:.3g} blurs them (keeping them "
                     f"needs h_mean <= {self.wanted[0]:.3g}).")
        return text


def _spread(x, end):
    q1, q3 = np.percentile(x, [25, 75])
    s = float(q3 - q1)
    if s > 0:
        return s
    s = float(np.std(x))
    if s > 0:
        return s
    c = float(np.median(x))
    return min(c, end - c)


def supported_degree(n: int) -> int:
    """l_n = min(44, the largest l with (l + 1)^2 <= the training rows of 5-fold cross-validation at n)."""
    rows = training_rows(int(n), DEFAULT_FOLDS, None)
    return max(0, min(DEFAULT_MAX_DEGREE, math.isqrt(max(rows, 0)) - 1))


def choose_bandwidth(raw_mean: np.ndarray, raw_var: np.ndarray, *,
                     fraction: float = BANDWIDTH_FRACTION) -> BandwidthChoice:
    """The bandwidth per axis for :func:`socal.evaluate`, by the rule of this module (its docstring).

    Parameters
    ----------
    raw_mean, raw_var : ndarray, shape (n,)
        Validated raw scores (the caller checks them).
    fraction : float, default :data:`BANDWIDTH_FRACTION`
        The largest median move of a perturbed score, as a fraction of its axis's spread (step 2), in (0, 100].
        :func:`socal.evaluate` uses the default; ``benchmarks/bandwidth.py --auto`` measures others.

    Returns
    -------
    BandwidthChoice

    Examples
    --------
    >>> import numpy as np
    >>> from socal.bandwidth import choose_bandwidth
    >>> rng = np.random.default_rng(0)
    >>> m = rng.uniform(0.1, 0.9, 5000)
    >>> wide = choose_bandwidth(m, m * (1 - m) * rng.uniform(0.05, 0.95, 5000))
    >>> wide.h == (1 / 16, 1 / 64), wide.keeps_var
    (True, True)
    >>> sharp = choose_bandwidth(m, 1e-6 * rng.uniform(0.5, 1.5, 5000))
    >>> sharp.keeps_var, sharp.needed_n is None
    (False, True)
    """
    fraction = check_float(fraction, "fraction", "choose_bandwidth", 0.0, 100.0, lo_open=True)
    n = int(raw_mean.shape[0])
    spread = (_spread(raw_mean, 1.0), _spread(raw_var, 0.25))
    wanted = tuple(min(d, fraction * s / SECH_MEDIAN_SHIFT) for d, s in zip(DEFAULT_BANDWIDTH, spread))
    l_n = supported_degree(n)
    floor = (1.0 / (math.pi * max(l_n, 1)), 1.0 / (4.0 * math.pi * max(l_n, 1)))
    h = tuple(float(max(w, f)) for w, f in zip(wanted, floor))
    need = math.ceil(1.0 / (4.0 * math.pi * wanted[1])) if wanted[1] > 0 else 10**18
    needed_n = None
    if need <= DEFAULT_MAX_DEGREE:
        needed_n = n
        while supported_degree(needed_n) < need:  # training rows grow by 4/5 of n: a short search from the estimate
            needed_n = max(needed_n + 1, math.ceil((need + 1) ** 2 * DEFAULT_FOLDS / (DEFAULT_FOLDS - 1)))
    return BandwidthChoice(h=h, wanted=tuple(float(w) for w in wanted), floor=floor, spread=spread, degree=l_n,
                           keeps_mean=wanted[0] >= floor[0], keeps_var=wanted[1] >= floor[1], needed_degree=int(need),
                           needed_n=needed_n, n=n, fraction=fraction)
