"""The score rectangle's unit coordinates and their angles: u = 2 m - 1, w = 8 var - 1, and theta = arccos(u).

The Chebyshev fits (:mod:`socal.chebyshev`) and the non-uniform FFTs (:mod:`socal.nufft`) both read the scores in these
coordinates; they live here, below both, so that neither imports the other to get them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["to_unit", "unit_angles", "ScoreAngles"]


def to_unit(mean, var=None):
    """Map scores to [-1, 1]: u = 2 m - 1 and w = 8 var - 1 (w = 1 when ``var`` is None, the 1-D case)."""
    u = 2.0 * np.asarray(mean, dtype=float) - 1.0
    w = np.ones_like(u) if var is None else 8.0 * np.asarray(var, dtype=float) - 1.0
    return u, w


def unit_angles(x):
    """theta = arccos(x) for x in [-1, 1] (clipped against rounding): with it T_p(x) = cos(p theta), the form the
    non-uniform FFTs of :mod:`socal.nufft` take the scores in."""
    return np.arccos(np.clip(x, -1.0, 1.0))


class ScoreAngles:
    """The angles (:func:`unit_angles`) of one block of scores' unit coordinates (:func:`to_unit`), each axis computed
    on first use and then kept: one pass over a block that both evaluates a map and sums moments by non-uniform FFTs
    (the bootstrap's fused deviation-and-world pass) computes them once instead of twice (an arccos per row and
    axis).  It is made for one block and dropped with it; the numbers are the same as without
    it (the same values from the same function)."""

    def __init__(self, mean, var=None):
        self.mean, self.var = mean, var
        self._u = self._w = None

    def u(self):
        """The angles of the mean axis: arccos of the means mapped to [-1, 1]."""
        if self._u is None:
            self._u = unit_angles(to_unit(self.mean)[0])
        return self._u

    def w(self):
        """The angles of the variance axis: arccos of the variances mapped to [-1, 1]."""
        if self._w is None:
            self._w = unit_angles(to_unit(self.mean, self.var)[1])
        return self._w
