"""The explicit finite-sample bounds of Proposition "main" (Steps 4 and 5) and Proposition "lb", as functions.

``upper_bound(n, h)`` is the paper's final explicit bound on E|CE2-hat - CE2^pert|:

    2 (5 B^2 n^-4 + (406 (l+1)^2 log(3n) + 408)/n)^{1/2}            (Step 4)
  + 2/n + t* + 1/(n t*),  t* = ((4 (l+1)^2 log(6n) + 2 log 2)/n)^{1/2}   (Step 5)

with B = 2/(theta - 1) and l = ceil(2 log n / log theta).  Every number in it comes from a constant of the proof,
and :class:`Constants` names each by the step that uses it, so the same bound can be evaluated with the constants
the audit certifies in place of the paper's (``Constants.corrected``):

- Step 2(b): |h_g| <= H for the net points g of Lemma aux-1 (paper 4), so Bernstein's range is 2H;
- Step 2(c): E h_g^2 <= V ||g - f*||^2 (paper 16), so Var h_g <= V (2 mu_g + 4 eps_l^2);
- Lemma aux-1: |h_f - h_g| <= L |f - g| (paper 2), the net's discretisation L/n;
- Step 5: the summands of G_l lie in [0, R] (paper 2), Hoeffding's 2 exp(-2 n t^2 / R^2).

Lemma aux-1's arithmetic with these: with 4 eps_l^2 <= mu_g and t = mu_g - L/n >= mu_g/2, Bernstein's denominator
is at most 2 (2V + V + 2H/3) mu_g, so the exponent is n mu_g / C with C = 24 V + 16 H/3 (1216/3 with the paper's
H, V, which the paper rounds up to 406); the tail integral gives E[h_fhat] <= 4 eps_l^2 + (C d log(3n) + C + L)/n
(408 = 406 + 2).  Step 5's t* solves 2 (6n)^(2d) exp(-2 n t*^2 / R^2) = 1, t*^2 = (R^2 d log(6n) + R^2 log(2)/2)/n,
and its tail integral is R^2 / (4 n t*) (1/(n t*) at R = 2).

The approximation step is the other input: eps_l <= B theta^-l on the strip |Im z| < h pi/2 with M = 1 and the tensor
constant B = 2/(theta - 1) (the paper).  ``approx`` selects the repair the audit certifies instead
(``approx-corollary``, ``analytic-2d``): the sub-strip of half the width (theta = theta(h/2), so the degree rule nearly
doubles), M = sqrt 2 there, and the square truncation constant 4 M (theta + 1)/(theta - 1)^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

from socal.degrees import paper_degree, theta
from socal.deviations import CE_RANGE

__all__ = ["Constants", "PAPER", "upper_bound", "upper_bound_ball", "paper_degree_ball", "step4", "step5",
           "lower_bound", "threshold_n", "infimum_over_n", "infimum_ball", "theta_ball", "LB_CONSTANT", "CE2_RANGE"]

LB_CONSTANT = 1.0 / (48.0 * math.sqrt(2.0))
# CE2^pert's whole range: |eta1 - m~| <= 1 and |eta2 - v~| <= 5/4, since v~ = m~^2 + var~ reaches 1 + 1/4 on R
# (claim step5-range computes it exactly and checks socal's constant); a bound at or above it says nothing
CE2_RANGE = CE_RANGE[2]


@dataclass(frozen=True)
class Constants:
    """The constants of Proposition "main"'s proof, each named by the step that uses it (see the module docstring).

    ``exponent`` is Lemma aux-1's constant C; None derives it, C = 24 V + 16 H/3, as the lemma's arithmetic gives
    (the paper states the rounded-up 406).  ``strip``, ``m_sq`` and ``tensor`` describe the approximation step:
    theta = theta(strip h), M^2, and B = 2/(theta - 1) ("paper") or 4 M (theta + 1)/(theta - 1)^2 ("square").
    """

    name: str
    h_max: Fraction
    bernstein: Fraction
    lipschitz: Fraction
    step5_range: Fraction
    exponent: Fraction | None = None
    strip: Fraction = Fraction(1)
    m_sq: Fraction = Fraction(1)
    tensor: str = "paper"

    @property
    def c406(self) -> Fraction:
        """Lemma aux-1's exponent constant C (406 in the paper)."""
        if self.exponent is not None:
            return Fraction(self.exponent)
        return 24 * Fraction(self.bernstein) + Fraction(16, 3) * Fraction(self.h_max)

    @property
    def c408(self) -> Fraction:
        """C + L: the tail integral's C plus the net's discretisation L (408 = 406 + 2 in the paper)."""
        return self.c406 + Fraction(self.lipschitz)

    @classmethod
    def corrected(cls, name, *, h_max, bernstein, lipschitz, step5_range, approx=False):
        """The proof's constants replaced by certified values (exponent derived, not rounded); ``approx=True`` adds
        the repaired approximation step (half strip, M = sqrt 2, the square tensor constant)."""
        c = cls(name, Fraction(h_max), Fraction(bernstein), Fraction(lipschitz), Fraction(step5_range))
        return replace(c, strip=Fraction(1, 2), m_sq=Fraction(2), tensor="square") if approx else c

    def theta(self, h):
        return theta(float(self.strip) * h)

    def B(self, th):
        if self.tensor == "paper":
            return 2.0 / (th - 1.0)
        return 4.0 * math.sqrt(self.m_sq) * (th + 1.0) / (th - 1.0) ** 2

    def degree(self, n, h):
        """The degree rule l = ceil(2 log n / log theta) with this step's theta."""
        return paper_degree(n, float(self.strip) * h)


PAPER = Constants("paper", Fraction(4), Fraction(16), Fraction(2), Fraction(2), exponent=Fraction(406))


def _approx_sq(n, th, l, rule, c):
    """eps_l^2 <= B^2 theta^-2l; at the rule's degree the paper bounds theta^-2l by n^-4 and states that form."""
    return c.B(th) ** 2 * (n**-4.0 if rule else th ** (-2.0 * l))


def step4(n, h, l=None, *, constants=PAPER):
    """Step 4: 2 (5 eps_l^2 + (C d log(3n) + C + L)/n)^{1/2}, d = (l+1)^2.  With l omitted, l follows the degree
    rule and eps_l^2 <= B^2 n^-4 (the paper's form); with l given, eps_l^2 <= B^2 theta^-2l (Corollary approx)."""
    c = constants
    th = c.theta(h)
    rule = l is None
    l = c.degree(n, h) if rule else l
    return 2.0 * math.sqrt(5.0 * _approx_sq(n, th, l, rule, c)
                           + (float(c.c406) * (l + 1) ** 2 * math.log(3 * n) + float(c.c408)) / n)


def step5(n, h, l=None, *, constants=PAPER):
    """Step 5: 2/n + t* + R^2/(4 n t*), t*^2 = (R^2 d log(6n) + R^2 log(2)/2)/n (R = 2: the paper's form)."""
    c = constants
    l = c.degree(n, h) if l is None else l
    r2 = float(c.step5_range) ** 2
    t = math.sqrt((r2 * (l + 1) ** 2 * math.log(6 * n) + r2 * math.log(2.0) / 2) / n)
    return 2.0 / n + t + r2 / (4.0 * n * t)


def upper_bound(n, h, l=None, *, constants=PAPER):
    return step4(n, h, l, constants=constants) + step5(n, h, l, constants=constants)


def infimum_over_n(h, l, *, constants=PAPER):
    """The bound's infimum over n at a fixed degree l: 2 sqrt 5 B theta^-l, its limit as n grows.

    Every other term of Step 4 and Step 5 is decreasing in n (log(3n)/n and log(6n)/n decrease for n >= 1, and so
    do 2/n and R^2/(4 n t*)) and tends to 0, so the bound decreases to this limit and never reaches it."""
    th = constants.theta(h)
    return 2.0 * math.sqrt(5.0) * constants.B(th) * th ** (-float(l))


def lower_bound(n, c=LB_CONSTANT):
    return c / math.sqrt(n)


def threshold_n(h, level, *, constants=PAPER, l=None, n_max=1e40):
    """Smallest n (rounded up to 3 significant digits, by bisection in log n) with upper_bound(n, h) < level.

    The bound is decreasing in n beyond its first few values (checked on the bracket), so bisection applies.
    Returns inf when even n_max does not suffice.
    """
    def ub(e):
        return upper_bound(10.0**e, h, l, constants=constants)

    lo, hi = 1.0, 1.0
    while ub(hi) >= level:
        hi += 1.0
        if 10.0**hi > n_max:
            return math.inf
    lo = hi - 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if ub(mid) < level:
            hi = mid
        else:
            lo = mid
    x = 10.0**hi  # rounded up to 3 significant digits, so the bound is below the level at the reported n
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / step) * step:.3g}")


def _arb(q):
    from flint import arb

    q = Fraction(q)
    return arb(q.numerator) / arb(q.denominator)


def theta_ball(h, strip=1):
    """theta(strip h) = s pi + sqrt(s^2 pi^2 + 1), s = strip h, as a ball (h = 1/k exactly)."""
    from flint import arb

    hb = _arb(Fraction(strip) / round(1 / h))
    return hb * arb.pi() + (hb**2 * arb.pi() ** 2 + 1).sqrt()


def paper_degree_ball(n, h, strip=1):
    """l = ceil(2 log n / log theta(strip h)) in ball arithmetic (h = 1/k exactly); None when the ball straddles an
    integer (the ceiling is then undecided)."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 212
    try:
        x = 2 * arb(n).log() / theta_ball(h, strip).log()
        lo, hi = x.lower(), x.upper()
        c_lo, c_hi = int(math.ceil(float(lo))), int(math.ceil(float(hi)))
        # certified: c_lo - 1 < x <= c_lo for every value in the ball
        if c_lo != c_hi or not (bool(arb(c_lo) - x >= 0) and bool(arb(c_lo - 1) - x < 0)):
            return None
        return c_lo
    finally:
        ctx.prec = old


def _B_ball(th, c):
    if c.tensor == "paper":
        return 2 / (th - 1)
    return 4 * _arb(c.m_sq).sqrt() * (th + 1) / (th - 1) ** 2


def upper_bound_ball(n, h, l=None, *, constants=PAPER):
    """:func:`upper_bound` in ball arithmetic (python-flint ``arb``; n an integer, h = 1/k exactly, the constants
    exact rationals): the true value of the explicit bound lies in the returned ball.  None when the degree rule's
    ceiling is undecided."""
    from flint import arb, ctx

    c = constants
    rule = l is None
    l = paper_degree_ball(n, h, c.strip) if rule else l
    if l is None:
        return None
    old = ctx.prec
    ctx.prec = 212
    try:
        th = theta_ball(h, c.strip)
        nb, d = arb(int(n)), arb((l + 1) ** 2)
        B = _B_ball(th, c)
        approx_sq = B**2 / nb**4 if rule else B**2 * th ** (-2 * l)
        s4 = 2 * (5 * approx_sq + (_arb(c.c406) * d * (3 * nb).log() + _arb(c.c408)) / nb).sqrt()
        r2 = _arb(c.step5_range) ** 2
        t = ((r2 * d * (6 * nb).log() + r2 * arb(2).log() / 2) / nb).sqrt()
        return s4 + 2 / nb + t + r2 / (4 * nb * t)
    finally:
        ctx.prec = old


def infimum_ball(h, l, *, constants=PAPER):
    """:func:`infimum_over_n` in ball arithmetic (h = 1/k exactly)."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 212
    try:
        th = theta_ball(h, constants.strip)
        return 2 * arb(5).sqrt() * _B_ball(th, constants) * th ** (-l)
    finally:
        ctx.prec = old
