"""The explicit finite-sample bounds of Proposition "main" (Steps 4 and 5) and Proposition "lb", as functions.

``upper_bound(n, h)`` is the paper's final explicit bound on E|CE2-hat - CE2^pert|:

    2 (5 B^2 n^-4 + (406 (l+1)^2 log(3n) + 408)/n)^{1/2}            (Step 4)
  + 2/n + t* + 1/(n t*),  t* = ((4 (l+1)^2 log(6n) + 2 log 2)/n)^{1/2}   (Step 5)

with B = 2/(theta - 1) and l = ceil(2 log n / log theta).  ``tight=True`` removes slack that is safe to remove:
Step 2(b) |h_f| <= |f - f*| |f + f* - 2Z| <= 2 (the paper uses 4) and Step 2(c) h_f^2 <= 4 (f - f*)^2 (the paper
uses 16); redoing the Bernstein step of Lemma aux-1 with these gives 2 (8 + 4 + 4/3) mu = (80/3) mu and the constant
320/3 < 107 in place of 1216/3 < 406 (so 107 and 109 replace 406 and 408).
"""

from __future__ import annotations

import math

from socal.degrees import paper_degree, theta
from socal.deviations import CE_RANGE

__all__ = ["upper_bound", "upper_bound_ball", "paper_degree_ball", "step4", "step5", "lower_bound", "threshold_n",
           "LB_CONSTANT", "CE2_RANGE"]

LB_CONSTANT = 1.0 / (48.0 * math.sqrt(2.0))
# CE2^pert's whole range: |eta1 - m~| <= 1 and |eta2 - v~| <= 5/4, since v~ = m~^2 + var~ reaches 1 + 1/4 on R
# (claim step5-range computes it exactly and checks socal's constant); a bound at or above it says nothing
CE2_RANGE = CE_RANGE[2]


def step4(n, h, l=None, *, c406=406.0, c408=408.0):
    th = theta(h)
    l = paper_degree(n, h) if l is None else l
    B = 2.0 / (th - 1.0)
    return 2.0 * math.sqrt(5.0 * B**2 * n**-4.0 + (c406 * (l + 1) ** 2 * math.log(3 * n) + c408) / n)


def step5(n, h, l=None):
    l = paper_degree(n, h) if l is None else l
    t = math.sqrt((4.0 * (l + 1) ** 2 * math.log(6 * n) + 2.0 * math.log(2.0)) / n)
    return 2.0 / n + t + 1.0 / (n * t)


def upper_bound(n, h, l=None, *, tight=False):
    c406, c408 = (107.0, 109.0) if tight else (406.0, 408.0)
    return step4(n, h, l, c406=c406, c408=c408) + step5(n, h, l)


def lower_bound(n, c=LB_CONSTANT):
    return c / math.sqrt(n)


def threshold_n(h, level, *, tight=False, n_max=1e40):
    """Smallest n (to 3 significant digits, by bisection in log n) with upper_bound(n, h) < level.

    The bound is decreasing in n beyond its first few values (checked on the bracket), so bisection applies.
    Returns inf when even n_max does not suffice.
    """
    lo, hi = 1.0, 1.0
    while upper_bound(10.0**hi, h, tight=tight) >= level:
        hi += 1.0
        if 10.0**hi > n_max:
            return math.inf
    lo = hi - 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if upper_bound(10.0**mid, h, tight=tight) < level:
            hi = mid
        else:
            lo = mid
    return float(f"{10.0**hi:.3g}")


def paper_degree_ball(n, h):
    """l = ceil(2 log n / log theta(h)) in ball arithmetic (h = 1/k exactly); None when the ball straddles an integer
    (the ceiling is then undecided)."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 212
    try:
        hb = arb(1) / arb(round(1 / h))
        th = hb * arb.pi() + (hb**2 * arb.pi() ** 2 + 1).sqrt()
        x = 2 * arb(n).log() / th.log()
        lo, hi = x.lower(), x.upper()
        c_lo, c_hi = int(math.ceil(float(lo))), int(math.ceil(float(hi)))
        # certified: c_lo - 1 < x <= c_lo for every value in the ball
        if c_lo != c_hi or not (bool(arb(c_lo) - x >= 0) and bool(arb(c_lo - 1) - x < 0)):
            return None
        return c_lo
    finally:
        ctx.prec = old


def upper_bound_ball(n, h, l=None, *, c406=406, c408=408):
    """:func:`upper_bound` in ball arithmetic (python-flint ``arb``; n an integer, h = 1/k exactly): the true value
    of the paper's explicit bound lies in the returned ball.  None when the degree rule's ceiling is undecided."""
    from flint import arb, ctx

    l = paper_degree_ball(n, h) if l is None else l
    if l is None:
        return None
    old = ctx.prec
    ctx.prec = 212
    try:
        hb = arb(1) / arb(round(1 / h))
        th = hb * arb.pi() + (hb**2 * arb.pi() ** 2 + 1).sqrt()
        nb, d = arb(int(n)), arb((l + 1) ** 2)
        B = 2 / (th - 1)
        s4 = 2 * (5 * B**2 / nb**4 + (arb(c406) * d * (3 * nb).log() + arb(c408)) / nb).sqrt()
        t = ((4 * d * (6 * nb).log() + 2 * arb(2).log()) / nb).sqrt()
        return s4 + 2 / nb + t + 1 / (nb * t)
    finally:
        ctx.prec = old
