"""verify: re-derives the constants and inequalities of "The Minimax Rate of Second-Order Calibration".

Each claim of the paper is a registered check returning a verdict (HOLDS, FAILS, GAP, VACUOUS, UNDECIDED) with the
numbers behind it; :func:`verify.run` runs them and ``socal audit`` prints the report.  verify imports socal, never
the reverse.  Exact algebra uses sympy, complex-strip numerics mpmath, and claims "for every z in a region" are
certified with python-flint ball arithmetic.
"""

from ._core import REGISTRY, Claim, Result, Verdict, get, run

__all__ = ["Verdict", "Result", "Claim", "REGISTRY", "get", "run"]
