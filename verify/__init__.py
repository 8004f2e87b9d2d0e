"""socal.verify: re-derives the constants and inequalities of "The Minimax Rate of Second-Order Calibration".

Each claim of the paper is a registered check returning a verdict (HOLDS, FAILS, GAP, VACUOUS, INCONCLUSIVE) with the
numbers behind it; :func:`socal.verify.run` runs them and ``socal audit`` prints the report.  The folder ``verify/``
of the repository installs as ``socal.verify``; it imports socal, never the reverse (``import socal`` does not load
it).  Exact algebra uses sympy, complex-strip numerics mpmath, and claims "for every z in a region" are certified
with python-flint ball arithmetic.
"""

from ._core import LEGEND, REGISTRY, Claim, Part, Result, Verdict, claim, combine, steps, unregister
from .registry import get, run

__all__ = ["Verdict", "LEGEND", "Part", "combine", "Result", "Claim", "REGISTRY", "claim", "unregister", "get", "run",
           "steps"]
