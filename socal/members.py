"""From an ensemble's (or a posterior sample's) member probabilities to the scores socal takes: (mean, var)."""

from __future__ import annotations

import warnings

import numpy as np

from ._typing import ArrayLike
from ._validation import check_array, check_int, percent_hint

__all__ = ["from_members"]


def from_members(probabilities: ArrayLike, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The mean and the epistemic variance of M members' probabilities P(Y = 1 | x), item by item.

    ``var`` is what socal means by the predictor's epistemic variance: the spread of the members' probabilities,
    Var_members[p(x)] (not of the labels).  ``ddof=1`` (the default) divides by M - 1, the unbiased estimate of the
    variance of the distribution the members are drawn from (the paper's Experiment 1 uses it); ``ddof=0`` divides
    by M, the members' own variance.  With M = 5 members the two differ by a factor 5/4.  A variance can never
    exceed m (1 - m) (the members' values lie in [0, 1]); with ``ddof=1`` the unbiased estimate can (members split
    between 0 and 1), and is then capped at m (1 - m).

    Parameters
    ----------
    probabilities : array_like, shape (n, M)
        Member probabilities in [0, 1], one row per item, M >= 2 members.  More members than items is read as
        given, with a warning (it is most often a transposed array).
    ddof : {1, 0}

    Returns
    -------
    mean, var : ndarray, shape (n,)

    Examples
    --------
    >>> import numpy as np, socal
    >>> m, v = socal.from_members(np.array([[0.2, 0.4, 0.3], [0.9, 0.9, 0.9], [0.1, 0.0, 0.2]]))
    >>> m.round(3).tolist(), v.round(3).tolist()
    ([0.3, 0.9, 0.1], [0.01, 0.0, 0.01])
    """
    func = "from_members"
    ddof = check_int(ddof, "ddof", func, 0, 1)
    shape = np.shape(probabilities)
    if len(shape) == 3 and shape[-1] > 2:  # a multi-class ensemble: socal's scores are of one event, Y = 1
        raise ValueError(f"The 'probabilities' parameter of {func} must be a 2-dimensional array of P(Y = 1), one row "
                         f"per item and one column per member. Got an array of shape {shape} instead, which reads as "
                         f"{shape[-1]} classes: pass one class's probabilities, probabilities[:, :, c], with the "
                         f"labels 'item's label is c' (one-vs-rest; docs/guide.md, 'More than two classes').")
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
