"""From an ensemble's (or a posterior sample's) member probabilities to the scores socal takes: (mean, var)."""

from __future__ import annotations

import warnings

import numpy as np

from ._typing import ArrayLike
from ._validation import check_array, check_int, percent_hint

__all__ = ["from_members"]


def from_members(probabilities: ArrayLike, *, ddof: int = 1, member_axis: int = 1,
                 diagonal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The mean and the epistemic variance of M members' probabilities P(Y = 1 | x), item by item.

    ``var`` is what socal means by the predictor's epistemic variance: the spread of the members' probabilities,
    Var_members[p(x)] (not of the labels).  ``ddof=1`` (the default) divides by M - 1, the unbiased estimate of the
    variance of the distribution the members are drawn from (the paper's Experiment 1 uses it); ``ddof=0`` divides
    by M, the members' own variance.  With M = 5 members the two differ by a factor 5/4.  A variance can never
    exceed m (1 - m) (the members' values lie in [0, 1]); with ``ddof=1`` the unbiased estimate can (members split
    between 0 and 1), and is then capped at m (1 - m).

    A C-class ensemble, ``probabilities`` of shape (n, M, C) with C >= 3 (each member's probability vector),
    gives the mean vector and the members' covariance matrix: mean (n, C) and cov (n, C, C) =
    sum_j (p_j - m)(p_j - m)^T / (M - ddof), positive semidefinite with rows summing to 0 (each p_j sums to 1);
    where a class variance exceeds m_c (1 - m_c), or a pair of classes gets m_c m_d + cov_cd < 0 (both only with
    ``ddof=1``), the whole matrix is scaled down to meet the bound, which keeps both properties.  The rule: the
    pair law P(c, d) = m_c m_d + cov_cd of two votes of one item must be a probability law, as it is for the members'
    own covariance (``ddof=0``: m m^T + cov = the members' average p p^T >= 0), and the unbiased estimate scales
    that by M / (M - 1), which can make an off-diagonal pair negative; the scale kept is the largest in
    [(M - 1) / M, 1] that keeps every pair >= 0, so the result never has less spread than ``ddof=0`` gives.  That is the input of the multiclass functions (:mod:`socal.multiclass`).

    Parameters
    ----------
    probabilities : array_like, shape (n, M) or (n, M, C)
        Member probabilities in [0, 1], one row per item, M >= 2 members (and, for C classes, rows of each member
        summing to 1 within 1e-6).  More members than items is read as given, with a warning (it is most often a
        transposed array).
    ddof : {1, 0}
    member_axis : {1, 0}
        The axis of the members: 1 (the default) for (n, M) and (n, M, C); 0 for members first, (M, n) and (M, n, C),
        as cleanlab and the Neural Testbed (``enn``) stack them.
    diagonal : bool, default False
        For (n, M, C) input: return the class variances (n, C) alone, in O(n M C) time and memory: what the
        multiclass verdict reads, at any C (C = 1,000 at n = 5e4 would be 400 GB as (n, C, C), and the pair rule
        below reads C^2 pairs per item: 15 minutes there).  The rule: the diagonal scaled, item by item, by the
        largest scale in [(M - 1) / M, 1] that keeps every class variance at most m_c (1 - m_c).  Without the
        off-diagonals there is no pair law to keep, so the full covariance's pair rule does not apply; the two
        agree at ``ddof=0`` (no bound binds) and wherever no pair m_c m_d + cov_cd falls below 0.

    Returns
    -------
    mean, var : ndarray, shape (n,)
        For (n, M) input.
    mean, cov : ndarray, shapes (n, C) and (n, C, C)
        For (n, M, C) input.

    Examples
    --------
    >>> import numpy as np, socal
    >>> m, v = socal.from_members(np.array([[0.2, 0.4, 0.3], [0.9, 0.9, 0.9], [0.1, 0.0, 0.2]]))
    >>> m.round(3).tolist(), v.round(3).tolist()
    ([0.3, 0.9, 0.1], [0.01, 0.0, 0.01])
    """
    func = "from_members"
    ddof = check_int(ddof, "ddof", func, 0, 1)
    member_axis = check_int(member_axis, "member_axis", func, 0, 1)
    if member_axis == 0:
        from ._validation import from_frame

        arr = np.asarray(from_frame(probabilities))
        if arr.ndim not in (2, 3):
            raise ValueError(f"The 'probabilities' parameter of {func} must be (M, n) or (M, n, C) with "
                             f"member_axis=0. Got an array of shape {arr.shape} instead.")
        probabilities = np.swapaxes(arr, 0, 1)
    shape = np.shape(probabilities)
    if len(shape) == 3 and shape[-1] > 2:  # a multi-class ensemble: the mean vector and the covariance
        return _multiclass_members(probabilities, ddof, func, bool(diagonal))
    if len(shape) == 3 and shape[-1] == 2:  # two-class probabilities: P(Y = 1) is the last axis' second entry
        raise ValueError(f"The 'probabilities' parameter of {func} must be a 2-dimensional array of P(Y = 1), one row "
                         f"per item and one column per member. Got an array of shape {shape} instead: for both "
                         f"classes' probabilities pass probabilities[..., 1] (transposed to (items, members) if the "
                         f"members come first).")
    try:
        p = check_array(probabilities, "probabilities", func, ndim=2, lo=0.0, hi=1.0,
                        rule="in [0, 1] (members' probabilities P(Y = 1))", clip_edges=True)
    except ValueError as exc:
        raise ValueError(str(exc) + percent_hint(probabilities, ndim=2)) from None
    if p.shape[1] < 2:
        raise ValueError(f"The 'probabilities' parameter of {func} must have M >= 2 member columns (one row per "
                         f"item). Got an array of shape {p.shape} instead.")
    if p.shape[1] > p.shape[0]:  # an ensemble has fewer members than items in all but toy cases: likely transposed
        warnings.warn(f"{func}: {p.shape[1]} member columns for {p.shape[0]} item rows; the rows are items. If the "
                      f"rows are the members, pass probabilities.T.", UserWarning, stacklevel=2)
    m = p.mean(axis=1)
    v = np.minimum(p.var(axis=1, ddof=ddof), m * (1.0 - m))
    return m, v


def _multiclass_members(probabilities, ddof, func, diagonal=False):
    p = check_array(probabilities, "probabilities", func, ndim=3, lo=0.0, hi=1.0,
                    rule="in [0, 1] (members' class probabilities)", clip_edges=True)
    n, M, C = p.shape
    if M < 2:
        raise ValueError(f"The 'probabilities' parameter of {func} must have M >= 2 members (shape (n, M, C)). Got "
                         f"shape {p.shape} instead.")
    off = np.abs(p.sum(axis=2) - 1.0)
    if off.max() > 1e-6:
        i, j = map(int, np.argwhere(off > 1e-6)[0])
        raise ValueError(f"The 'probabilities' parameter of {func} must hold probability vectors (each member's "
                         f"class probabilities summing to 1). Got item {i}, member {j} summing to "
                         f"{p[i, j].sum():.6g} instead (logits? apply a softmax first).")
    if M > n:
        warnings.warn(f"{func}: {M} members for {n} items; the first axis is items. If the members come first, "
                      f"pass probabilities.transpose(1, 0, 2).", UserWarning, stacklevel=3)
    m = p.mean(axis=1)
    if diagonal:
        return m, _class_variances(p, m, ddof)
    out = np.empty((n, C, C))
    block = max(1, 2**24 // (C * C))  # rows per block: the (block, C, C) temporaries stay near 128 MiB
    for lo in range(0, n, block):
        mb = m[lo:lo + block]
        d = p[lo:lo + block] - mb[:, None, :]
        cov = np.einsum("ijc,ijd->icd", d, d) / (M - ddof)
        cap = mb * (1.0 - mb)
        diag = np.diagonal(cov, axis1=1, axis2=2)
        pair = mb[:, :, None] * mb[:, None, :]  # the pair law m_c m_d + cov_cd must stay >= 0 (negative cov_cd only)
        # A pair below 0 by rounding only (ddof=1 of members whose own pair law is 0 there, or m_c m_d underflowing
        # at 1e-300) is no violation: read as one, it scaled a whole item's variances to 0.
        bad = cov < -pair - 1e-12 * (pair - cov) - 1e-300
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio_pair = np.where(bad, pair / np.where(cov < 0, -cov, 1.0), 1.0).min(axis=(1, 2))
        out[lo:lo + block] = cov * _scale(diag, cap, M, ddof, ratio_pair)[:, None, None]
    return m, out


def _class_variances(p, m, ddof):
    """The diagonal rule of :func:`from_members` (``diagonal=True``): sum_j (p_jc - m_c)^2 / (M - ddof), scaled per
    item by the largest s in [(M - 1) / M, 1] keeping every class at most m_c (1 - m_c); in blocks of items."""
    n, M, C = p.shape
    out = np.empty((n, C))
    block = max(1, 2**24 // (M * C))
    for lo in range(0, n, block):
        mb = m[lo:lo + block]
        d = p[lo:lo + block] - mb[:, None, :]
        var = np.einsum("ijc,ijc->ic", d, d) / (M - ddof)
        out[lo:lo + block] = var * _scale(var, mb * (1.0 - mb), M, ddof)[:, None]
    return out


def _scale(var, cap, M, ddof, bound=1.0):
    """Each item's scale: the largest in [(M - ddof) / M, 1] keeping every class variance at most its cap m_c (1 -
    m_c) and at most ``bound`` (the pair rule's, for the full covariance).  Never below (M - ddof) / M: there the
    result is the members' own (ddof=0) covariance, whose variances are at most m_c (1 - m_c) and whose pair law is
    their average p p^T >= 0, so at ddof=0 the scale is 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(var > cap, cap / np.where(var > 0, var, 1.0), 1.0).min(axis=1)
    return np.clip(np.minimum(ratio, bound), (M - ddof) / M, 1.0)
