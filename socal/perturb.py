"""The product sech perturbation on R = [0, 1] x [0, 1/4] (Section 3.1, Steps 1-2)."""

from __future__ import annotations

import numpy as np

from ._typing import ArrayLike, Seed
from ._validation import bandwidth_axes, check_array, check_bandwidth, check_mean, check_rng, check_scores
from .kernels import SechKernel
from .weights import salt
from .rowkeys import distinct_keys, exact_hash, keyed_uniforms, row_hash, text_columns

__all__ = ["perturb", "perturb_mean", "MEAN_DOMAIN", "VAR_DOMAIN"]

MEAN_DOMAIN = (0.0, 1.0)
VAR_DOMAIN = (0.0, 0.25)
# the mean's and the var's draws
_AXIS_SALTS = np.array([salt("perturbation", 0), salt("perturbation", 1)], dtype=np.uint64)


def _key_columns(key, n, func):
    """``key`` (None, (n,) or (n, c) real values or strings) as an (n, c') float64 array of the columns that enter
    the rows' keys beside the scores; strings enter by a hash of their text (:func:`socal.rowkeys.text_columns`)."""
    if key is None:
        return np.empty((n, 0))
    arr = key if isinstance(key, np.ndarray) else None
    if arr is None and isinstance(key, (list, tuple)) and key and all(isinstance(e, str) for e in np.ravel(key)):
        arr = np.asarray(key)
    if arr is not None and (arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.size
                                                       and all(isinstance(e, str) for e in arr.ravel()))):
        if arr.ndim not in (1, 2):
            raise ValueError(f"The 'key' parameter of {func} must be an (n,) or (n, c) array. Got shape {arr.shape} "
                             f"instead.")
        if arr.shape[0] != n:
            raise ValueError(f"The 'key' parameter of {func} must have one row per score ({n}). Got {arr.shape[0]} "
                             f"rows instead.")
        return text_columns(arr)
    x = check_array(key, "key", func, ndim=2 if np.ndim(key) == 2 else 1, min_len=0)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] != n:
        raise ValueError(f"The 'key' parameter of {func} must have one row per score ({n}). Got {x.shape[0]} rows "
                         f"instead.")
    return x


def _keyed_uniforms(m, v, columns, rng, func):
    """Uniforms in [0, 1), one per row and axis (mean, var), from the rows' content and a seed drawn from ``rng``:
    the same rows give the same numbers in any order (:func:`socal.rowkeys.distinct_keys`)."""
    seed = int(check_rng(rng, func).integers(0, 2**63 - 1))
    keys = distinct_keys(row_hash(m, v, columns, seed), exact_hash(m, v, columns))
    return keyed_uniforms(keys, _AXIS_SALTS if v is not None else _AXIS_SALTS[:1])


def perturb_from_stream(mean, var, *, h, rng):
    """The perturbation with each row's draws taken from ``rng`` in row order (the i-th row, the i-th uniforms).

    For samples that a simulation draws itself (:mod:`socal.synthetic`, the experiments, the audit's Monte Carlo),
    where the seed defines the sample in the order it was drawn, and the recorded tables stay what they were.  User
    data go through :func:`perturb`, keyed by row content."""
    m, v = check_scores(mean, var, "perturb", raw=True)
    h_mean, h_var = bandwidth_axes(check_bandwidth(h, "perturb", per_axis=True))
    rng = check_rng(rng, "perturb")
    return SechKernel(h_mean, *MEAN_DOMAIN).rvs(m, rng=rng), SechKernel(h_var, *VAR_DOMAIN).rvs(v, rng=rng)


def perturb(mean: ArrayLike, var: ArrayLike, *, h: float, rng: Seed = None,
            key: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Perturb raw scores (m, sigma^2) coordinate-wise with the truncated sech kernel.

    Step 1: m~ ~ k_h(. | m) on [0, 1].  Step 2: sigma~^2 ~ k_h(. | sigma^2) on [0, 1/4], independently.

    Same scores and seed, same perturbed scores, in any row order: each row's two draws are the kernel's inverse CDF
    at uniforms keyed by the row's content (its score bits and ``key``'s, hashed with a seed drawn from ``rng``),
    as every random number of socal is (:mod:`socal.rowkeys`).  Rows of one content are separate items with
    independent draws (:func:`socal.rowkeys.distinct_keys`); which of them gets which draw follows their order,
    which changes nothing while they are alike in everything that follows.  So pass the labels as ``key`` when the
    perturbed scores will be paired with them (as :func:`socal.evaluate` does): items with equal scores and
    different labels then keep their draws in any order.

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
        The seed of the keyed draws (a Generator gives one number to it; None: a fixed seed, as everywhere in
        socal; ``np.random.default_rng()`` for fresh entropy).
    key : array_like, shape (n,) or (n, c), optional
        Further per-row values hashed into each row's key with the scores, e.g. the (n, k) labels, or strings such
        as item ids (hashed by their text, so the draws follow the items in any order; the string '1' is text, not
        the number 1).

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
    u = _keyed_uniforms(m, v, _key_columns(key, m.shape[0], "perturb"), rng, "perturb")
    return SechKernel(h_mean, *MEAN_DOMAIN).ppf(u[:, 0], m), SechKernel(h_var, *VAR_DOMAIN).ppf(u[:, 1], v)


def perturb_mean(mean: ArrayLike, *, h: float, rng: Seed = None, key: ArrayLike | None = None) -> np.ndarray:
    """One-dimensional perturbation m~ ~ k_h(. | m) on [0, 1] (the first-order setting; of a pair (h_mean, h_var),
    h_mean), keyed by row content as :func:`perturb` is (``key``: further per-row values, e.g. the labels)."""
    m = check_mean(mean, "perturb_mean")
    h = bandwidth_axes(check_bandwidth(h, "perturb_mean", per_axis=True))[0]
    u = _keyed_uniforms(m, None, _key_columns(key, m.shape[0], "perturb_mean"), rng, "perturb_mean")
    return SechKernel(h, *MEAN_DOMAIN).ppf(u[:, 0], m)
