"""Evidence as JSON-safe values: the one conversion the report and the baseline share."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["jsonable"]


def jsonable(x):
    """Evidence to JSON-safe values (sympy and fractions to strings, numpy to Python, inf to a string)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else str(x)
    if isinstance(x, complex):
        return [x.real, x.imag]
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, Fraction):
        return str(x)
    return str(x)
