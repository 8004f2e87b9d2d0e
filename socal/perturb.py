"""The product sech perturbation on R = [0, 1] x [0, 1/4] (Section 3.1, Steps 1-2)."""

from __future__ import annotations

import numpy as np

from ._typing import ArrayLike, Seed
from ._validation import bandwidth_axes, check_bandwidth, check_mean, check_rng, check_scores
from .kernels import SechKernel

__all__ = ["perturb", "perturb_mean", "MEAN_DOMAIN", "VAR_DOMAIN"]

MEAN_DOMAIN = (0.0, 1.0)
VAR_DOMAIN = (0.0, 0.25)


def perturb(mean: ArrayLike, var: ArrayLike, *, h: float, rng: Seed = None) -> tuple[np.ndarray, np.ndarray]:
    """Perturb raw scores (m, sigma^2) coordinate-wise with the truncated sech kernel.

    Step 1: m~ ~ k_h(. | m) on [0, 1].  Step 2: sigma~^2 ~ k_h(. | sigma^2) on [0, 1/4], independently.

    Parameters
    ----------
    mean, var : array_like, shape (n,)
        The predictor's raw scores: ``mean`` in [0, 1], ``var`` in [0, mean (1 - mean)] (the feasible region F).
    h : float or (float, float)
        Perturbation bandwidth, or one per axis (h_mean, h_var).  Lemma 1 (2D) makes the perturbed calibration
        functions analytic in a strip of half-width h_mean pi/2 in the mean and h_var pi/2 in the variance; mapped
        to [-1, 1] (a factor 2 for [0, 1], 8 for [0, 1/4]) the strips are h_mean pi and 4 h_var pi wide, so the
        Bernstein ellipses of the two axes are the same, and the equal-degree tensor basis is matched, when
        h_var = h_mean / 4 (:func:`socal.paper_degree`).  A single h blurs the variance axis, a quarter as wide,
        four times as much relative to its width.
    rng : numpy.random.Generator or int or None

    Returns
    -------
    mean_t, var_t : ndarray, shape (n,)
        The perturbed score, in R (it may leave F; it never leaves R).  These are the scores the deployed predictor
        outputs, and the inputs of :func:`socal.ce2` and :class:`socal.SecondOrderPlatt`.

    Examples
    --------
    >>> m, v = perturb([0.5, 0.9], [0.1, 0.05], h=1/64, rng=0)
    >>> bool(((0 <= m) & (m <= 1) & (0 <= v) & (v <= 0.25)).all())
    True
    """
    m, v = check_scores(mean, var, "perturb", raw=True)
    h_mean, h_var = bandwidth_axes(check_bandwidth(h, "perturb", per_axis=True))
    rng = check_rng(rng)
    mean_t = SechKernel(h_mean, *MEAN_DOMAIN).rvs(m, rng=rng)
    var_t = SechKernel(h_var, *VAR_DOMAIN).rvs(v, rng=rng)
    return mean_t, var_t


def perturb_mean(mean: ArrayLike, *, h: float, rng: Seed = None) -> np.ndarray:
    """One-dimensional perturbation m~ ~ k_h(. | m) on [0, 1] (the first-order setting; of a pair (h_mean, h_var),
    h_mean)."""
    m = check_mean(mean, "perturb_mean")
    h = bandwidth_axes(check_bandwidth(h, "perturb_mean", per_axis=True))[0]
    return SechKernel(h, *MEAN_DOMAIN).rvs(m, rng=check_rng(rng))
