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
constant B = 2/(theta - 1) (the paper).  The audit certifies instead (``approx-corollary``, ``analytic-2d``):

- the sharpest distribution-free bound of |eta| at |Im z| = s h pi/2 (every term of N and D lies in the cone
  |arg| <= s pi/2, and N, D - N are sums of such terms): :func:`sharp_m`, M(s) = 1 for s <= 1/2 and 1/sin(s pi)
  above, unbounded at the strip's edge;
- eta separately (not jointly) analytic in each score for the other real, so the 2-D step goes through the tensor
  Chebyshev truncation, ordered so that the operator norm multiplies the smaller error: f - S_m S_v f =
  (f - S_m f) + S_m (f - S_v f) <= 2 M theta^-l/(theta - 1) + (2l + 1) 2 M theta_var^-l/(theta_var - 1), each
  axis's truncation error from its own strip (Trefethen, ATAP, Thm 8.2) and theta_var the variance axis's: its
  range [0, 1/4] maps onto [-1, 1] with a factor 8, so the same strip is a larger ellipse (``tensor="separate"``,
  :func:`separate_constant`; before, (1 + Lambda_l) 4 M/(theta - 1) of the tensor interpolant with both axes at the
  mean axis's theta, 7-9x larger at l = 44-88);
- the strip chosen per degree to minimise that constant (``strip="best"``: M(s) theta(s h)^-l/(theta(s h) - 1)
  minimised over s in (0, 1); the degree rule then uses theta(h/2), where M = 1).

``approx=True`` of :meth:`Constants.corrected` takes all three; the former repair (M = sqrt 2 on the half strip, the
square constant of a joint expansion) is ``approx="joint"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

from socal.degrees import paper_degree, theta
from socal.deviations import CE_RANGE

__all__ = ["Constants", "PAPER", "READINGS", "sharp_m", "lebesgue_bound", "best_strip", "separate_constant",
           "variance_theta", "constant_sets", "upper_bound", "upper_bound_ball", "paper_degree_ball", "step4",
           "step5", "lower_bound", "threshold_n", "best_degree", "threshold_best", "infimum_over_n", "infimum_ball",
           "theta_ball", "LB_CONSTANT", "CE2_RANGE"]

LB_CONSTANT = 1.0 / (48.0 * math.sqrt(2.0))
# the one reading of each of the paper's objects that two claims could read two ways; every claim uses these
READINGS = {
    "P_l": "the polynomials of degree <= l per variable with sup norm <= 1 on the square (Lemma 'covering'): values in "
           "[-1, 1]; the net points of Lemma aux-1 and Step 5's class G_l are members of it",
    "F_l": "the clipped polynomials clip_[0,1](beta' phi) (Section 4): the class Eq. (erm1)-(erm2) minimise over; "
           "values in [0, 1]",
    "vacuity level": "9/4, CE2's whole range on R (|eta1 - m~| <= 1 and |eta2 - v~| <= 5/4, since v~ = m~^2 + var~ "
                     "reaches 5/4 for a perturbed score; step5-range computes it exactly): a bound at or above it says "
                     "nothing.  The paper has two levels in view: none stated for CE2 itself, and Step 5's range 2 "
                     "('every member of G_l is bounded in [0, 2]'), which step5-range refutes; the audit uses 9/4 "
                     "everywhere (CE2_RANGE)",
}
# CE2^pert's whole range: |eta1 - m~| <= 1 and |eta2 - v~| <= 5/4, since v~ = m~^2 + var~ reaches 1 + 1/4 on R
# (claim step5-range computes it exactly and checks socal's constant); a bound at or above it says nothing
CE2_RANGE = CE_RANGE[2]


def sharp_m(s):
    """The sharpest distribution-free bound of |eta| at |Im z| = s h pi/2 (0 <= s < 1): 1 for s <= 1/2, 1/sin(s pi)
    above (``approx-corollary`` certifies it and its sharpness); inf at s >= 1."""
    s = float(s)
    if s >= 1.0:
        return math.inf
    return 1.0 if s <= 0.5 else 1.0 / math.sin(s * math.pi)


def lebesgue_bound(l):
    """Lambda_l <= 1 + (2/pi) log(l + 1), the Lebesgue constant of the l + 1 Chebyshev points (ATAP, Thm 15.2)."""
    return 1.0 + 2.0 / math.pi * math.log(l + 1.0)


_STRIPS = tuple(Fraction(k, 256) for k in range(8, 256))  # the strips tried per degree, as exact fractions


def variance_theta(th):
    """The variance axis's theta for the strip whose mean-axis theta is ``th``: the axis [0, 1/4] maps onto [-1, 1]
    with a factor 8, the mean axis [0, 1] with 2, so a strip of half-width rho is 8 rho wide there against 2 rho:
    with a = 2 rho = (th - 1/th)/2, theta_var = 4 a + sqrt(16 a^2 + 1)."""
    a = (th - 1.0 / th) / 2.0
    return 4.0 * a + math.sqrt(16.0 * a * a + 1.0)


def separate_constant(th, m, l):
    """B with eps_l = B theta^-l for the 2-D tensor truncation from separate analyticity, ordered so that the
    operator norm falls on the variance axis: f - S_m S_v f = (f - S_m f) + S_m (f - S_v f), so
    eps_l <= 2 M theta^-l/(theta - 1) + (2l + 1) 2 M theta_var^-l/(theta_var - 1) (each axis's Chebyshev truncation
    error from its own strip, Trefethen ATAP Thm 8.2, for every real value of the other score; ||S_l|| <= 2l + 1
    since |a_0| <= ||g||, |a_j| <= 2 ||g||; theta_var from :func:`variance_theta`).  B = 2 M/(theta - 1) +
    (2l + 1) 2 M/(theta_var - 1) (theta/theta_var)^l."""
    tv = variance_theta(th)
    return 2.0 * m / (th - 1.0) + (2.0 * l + 1.0) * 2.0 * m / (tv - 1.0) * (th / tv) ** l


@lru_cache(maxsize=4096)
def best_strip(h, l):
    """The strip fraction s (an exact fraction k/256) that minimises the separate-analyticity bound
    B(s) theta(s h)^-l (:func:`separate_constant`, M(s) sharp) at degree l: any s gives a valid bound, so the
    minimiser found on the grid is as certified as any other (its bound is evaluated in ball arithmetic at that s)."""
    def err(s):
        th = theta(float(s) * h)
        return math.log(separate_constant(th, sharp_m(s), l)) - l * math.log(th)

    return min(_STRIPS, key=err)


@dataclass(frozen=True)
class Constants:
    """The constants of Proposition "main"'s proof, each named by the step that uses it (see the module docstring).

    ``exponent`` is Lemma aux-1's constant C; None derives it, C = 24 V + 16 H/3, as the lemma's arithmetic gives
    (the paper states the rounded-up 406).  ``strip``, ``m_sq`` and ``tensor`` describe the approximation step:
    theta = theta(strip h) (``strip="best"``: chosen per degree, :func:`best_strip`), M^2 (None: the sharp
    M(strip)^2, :func:`sharp_m`), and B = 2/(theta - 1) ("paper"), 4 M (theta + 1)/(theta - 1)^2 ("square", a
    joint expansion) or 2 M/(theta - 1) + (2l + 1) 2 M/(theta_var - 1) (theta/theta_var)^l ("separate", the tensor
    truncation from separate analyticity, :func:`separate_constant`).
    """

    name: str
    h_max: Fraction
    bernstein: Fraction
    lipschitz: Fraction
    step5_range: Fraction
    exponent: Fraction | None = None
    strip: Fraction | str = Fraction(1)
    m_sq: Fraction | None = Fraction(1)
    tensor: str = "paper"
    rule: str = "paper"  # the degree rule's theta: "paper", theta(h) for every set; "strip", the strip's own theta

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
        the repaired approximation step (the sharp M, the strip per degree, the separate-analyticity constant);
        ``approx="joint"`` the former repair (half strip, M = sqrt 2, the square constant)."""
        c = cls(name, Fraction(h_max), Fraction(bernstein), Fraction(lipschitz), Fraction(step5_range))
        if approx == "joint":
            return replace(c, strip=Fraction(1, 2), m_sq=Fraction(2), tensor="square")
        return replace(c, strip="best", m_sq=None, tensor="separate") if approx else c

    def strip_at(self, h, l):
        """The strip fraction at degree l (the fixed one, or the best for l)."""
        return best_strip(h, l) if self.strip == "best" else Fraction(self.strip)

    def m_at(self, s):
        """M at strip fraction s: the fixed sqrt(m_sq), or the sharp M(s)."""
        return sharp_m(s) if self.m_sq is None else math.sqrt(self.m_sq)

    def theta(self, h, l=None):
        """theta of the strip used (at degree l where the strip is chosen per degree; the rule's theta(h/2) without
        l)."""
        if self.strip == "best":
            return theta((float(best_strip(h, l)) if l is not None else 0.5) * h)
        return theta(float(self.strip) * h)

    def B(self, th, l=None, s=None):
        if self.tensor == "paper":
            return 2.0 / (th - 1.0)
        m = self.m_at(self.strip if s is None else s)
        if self.tensor == "separate":
            return separate_constant(th, m, l)
        return 4.0 * m * (th + 1.0) / (th - 1.0) ** 2

    def eps(self, h, l):
        """The approximation bound eps_l <= B theta^-l at degree l, with this set's strip."""
        s = self.strip_at(h, l)
        th = theta(float(s) * h)
        return self.B(th, l, s) * th ** (-float(l))

    def rule_strip(self):
        """The strip fraction whose theta the degree rule uses: 1 (theta(h), the paper's) unless ``rule="strip"``."""
        if self.rule == "paper":
            return Fraction(1)
        return Fraction(1, 2) if self.strip == "best" else Fraction(self.strip)

    def paper_form(self):
        """Whether the degree rule's theta is the approximation bound's own, so that theta^-2l <= n^-4 at the rule's
        degree and eps_l^2 <= B^2 n^-4 (the paper's form) holds; otherwise eps_l is bounded at the degree as it is."""
        return self.strip != "best" and Fraction(self.strip) == self.rule_strip()

    def degree(self, n, h):
        """The degree rule l = ceil(2 log n / log theta): the paper's, theta = theta(h), for every constant set
        (``rule="paper"``, the default: the repaired approximation step then bounds eps_l at that degree with its own
        strip, as any degree allows); with ``rule="strip"`` the strip's own theta (theta(h/2) where the strip is
        chosen per degree, there M = 1), which about doubles the degree and is reported apart, labelled."""
        return paper_degree(n, float(self.rule_strip()) * h)


PAPER = Constants("paper", Fraction(4), Fraction(16), Fraction(2), Fraction(2), exponent=Fraction(406))


def _approx_sq(n, h, l, rule, c):
    """eps_l^2 <= B^2 theta^-2l; at the rule's degree the paper bounds theta^-2l by n^-4 and states that form, which
    holds where the rule's theta is the bound's (the paper's strip and rule).  Otherwise (a repaired strip, or the
    degree given) the bound at that degree and strip is used as it is."""
    if not rule or not c.paper_form():
        return c.eps(h, l) ** 2
    return c.B(c.theta(h), l) ** 2 * n**-4.0


def step4(n, h, l=None, *, constants=PAPER):
    """Step 4: 2 (5 eps_l^2 + (C d log(3n) + C + L)/n)^{1/2}, d = (l+1)^2.  With l omitted, l follows the degree
    rule and eps_l^2 <= B^2 n^-4 (the paper's form); with l given, eps_l^2 <= B^2 theta^-2l (Corollary approx)."""
    c = constants
    rule = l is None
    l = c.degree(n, h) if rule else l
    return 2.0 * math.sqrt(5.0 * _approx_sq(n, h, l, rule, c)
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
    return 2.0 * math.sqrt(5.0) * constants.eps(h, l)


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


def best_degree(n, h, *, constants=PAPER, l_max=2000):
    """(l, bound): the degree that minimises the explicit bound at this n (the bound holds at every degree; the
    degree rule is one choice).  The approximation term falls and the statistical terms rise with l, so the bound
    is unimodal in l: a ternary search over 0..l_max, then the neighbours checked."""
    def ub(l):
        return upper_bound(n, h, l, constants=constants)

    lo, hi = 0, l_max
    while hi - lo > 6:
        a, b = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if ub(a) <= ub(b):
            hi = b
        else:
            lo = a
    best = min(range(max(lo - 3, 0), min(hi + 3, l_max) + 1), key=ub)
    return best, ub(best)


def threshold_best(h, level, *, constants=PAPER, n_max=1e40):
    """Smallest n (3 significant digits, bisection in log n) at which the bound at its best degree is below
    ``level``, and that degree; (inf, None) when n_max does not suffice.  The minimum over degrees of functions
    decreasing in n decreases in n, so bisection applies."""
    def ok(e):
        return best_degree(10.0**e, h, constants=constants)[1] < level

    hi = 1.0
    while not ok(hi):
        hi += 1.0
        if 10.0**hi > n_max:
            return math.inf, None
    lo = hi - 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    x = 10.0**hi
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    n_t = float(f"{math.ceil(x / step) * step:.3g}")
    return n_t, best_degree(n_t, h, constants=constants)[0]


def constant_sets(sharp, unit):
    """The constant sets the audit carries through C, the bound and its thresholds, in order: the paper's; the
    sharp constants where the proof uses them (``sharp``: H, V, L, R on P_l, certified with witnesses); those for
    [0, 1]-valued functions (``unit``: what they would be if the net points were clipped); each of the last two
    with the repaired approximation step (the sharp M, the strip per degree, the separate-analyticity tensor
    constant).  The former repair (M = sqrt 2 on the half strip, the square constant) is not among them: it rests
    on the joint analyticity that ``analytic-2d`` refutes."""
    return {"paper": PAPER,
            "sharp (P_l)": Constants.corrected("sharp (P_l)", **sharp),
            "[0, 1]-valued": Constants.corrected("[0, 1]-valued", **unit),
            "sharp + repaired approximation": Constants.corrected("sharp + repaired approximation", approx=True,
                                                                  **sharp),
            "[0, 1]-valued + repaired approximation": Constants.corrected("[0, 1]-valued + repaired approximation",
                                                                          approx=True, **unit)}


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


def sharp_m_ball(s):
    """:func:`sharp_m` as a ball: 1 for s <= 1/2, 1/sin(s pi) above (s an exact fraction below 1)."""
    from flint import arb

    s = Fraction(s)
    if s >= 1:
        raise ValueError(f"sharp_m_ball: s must be below 1 (|eta| is unbounded at the strip's edge); got {s}")
    return arb(1) if s <= Fraction(1, 2) else 1 / (_arb(s) * arb.pi()).sin()


def _m_ball(c, s):
    """M at strip fraction s as a ball: sqrt(m_sq), or the sharp 1 / sin(s pi) above s = 1/2 (1 below)."""
    if c.m_sq is not None:
        return _arb(c.m_sq).sqrt()
    return sharp_m_ball(s)


def _separate_ball(th, m, l):
    """:func:`separate_constant` in balls."""
    a = (th - 1 / th) / 2
    tv = 4 * a + (16 * a * a + 1).sqrt()
    return 2 * m / (th - 1) + (2 * l + 1) * 2 * m / (tv - 1) * (th / tv) ** l


def separate_eps_ball(h, l):
    """The separate-analyticity bound eps_l = B theta^-l of the 2-D tensor truncation at degree l, as a ball, at
    the strip chosen for that degree (:func:`best_strip`, the sharp M there): a valid bound of the approximation
    error (each axis's truncation from its own strip, analytic-2d certifies the separate analyticity it needs)."""
    s = best_strip(h, l)
    th = theta_ball(h, s)
    return _separate_ball(th, sharp_m_ball(s), l) * th ** (-l), s


def _B_ball(th, c, l=None, s=None):
    if c.tensor == "paper":
        return 2 / (th - 1)
    m = _m_ball(c, c.strip if s is None else s)
    if c.tensor == "separate":
        return _separate_ball(th, m, l)
    return 4 * m * (th + 1) / (th - 1) ** 2


def _eps_ball(h, l, c):
    """eps_l <= B theta^-l at degree l as a ball, at the strip the set uses there."""
    s = c.strip_at(h, l)
    th = theta_ball(h, s)
    return _B_ball(th, c, l, s) * th ** (-l)


def upper_bound_ball(n, h, l=None, *, constants=PAPER):
    """:func:`upper_bound` in ball arithmetic (python-flint ``arb``; n an integer, h = 1/k exactly, the constants
    exact rationals): the true value of the explicit bound lies in the returned ball.  None when the degree rule's
    ceiling is undecided."""
    from flint import arb, ctx

    c = constants
    rule = l is None
    l = paper_degree_ball(n, h, c.rule_strip()) if rule else l
    if l is None:
        return None
    old = ctx.prec
    ctx.prec = 212
    try:
        nb, d = arb(int(n)), arb((l + 1) ** 2)
        if rule and c.paper_form():
            approx_sq = _B_ball(theta_ball(h, c.strip), c, l) ** 2 / nb**4
        else:  # the bound at this degree and strip (see _approx_sq)
            approx_sq = _eps_ball(h, l, c) ** 2
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
        return 2 * arb(5).sqrt() * _eps_ball(h, l, constants)
    finally:
        ctx.prec = old
