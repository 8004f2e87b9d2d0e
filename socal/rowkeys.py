"""Random numbers keyed by row content: the same row gets the same number in any chunk, any order, any process.

A row's key is a seeded hash (splitmix64's finaliser, a bijection of uint64 with full avalanche) of the float bits
of its scores and its regression targets.  Fold assignment (:class:`socal.SufficientStats`) reads a uniform from it,
so the statistics, the fit and everything downstream do not depend on how the rows are ordered or chunked.
Identical rows share their number (a duplicated row never leaks from training to validation).
"""

from __future__ import annotations

import numpy as np

__all__ = ["mix64", "row_uniform"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x):
    """splitmix64's finaliser: a bijection of uint64 with full avalanche (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def row_uniform(mean, var, zs, salt):
    """A uniform U in [0, 1) per row from a seeded hash of its content (mean, var and target bits).

    The same row gets the same U in any chunk, any order, any process.
    """
    with np.errstate(over="ignore"):
        h = mix64(np.ascontiguousarray(mean, dtype=np.float64).view(np.uint64) ^ np.uint64(salt))
        if var is not None:
            h = mix64(h ^ np.ascontiguousarray(var, dtype=np.float64).view(np.uint64))
        for r in range(zs.shape[1]):
            h = mix64(h ^ np.ascontiguousarray(zs[:, r], dtype=np.float64).view(np.uint64))
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
