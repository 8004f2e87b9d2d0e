"""Claims from the inventory (verify/inventory.py): proof steps whose range or constant is asserted without
derivation, numbers in the experiments' descriptions recomputed from the setups described, and what the theorems
guarantee for the experiments as they were run.

Each range is evaluated on the domain where its quantities live: the perturbed score (m~, var~) ranges over the
whole rectangle R = [0, 1] x [0, 1/4] (it leaves the feasible region F), so v~ = m~^2 + var~ ranges over [0, 5/4];
the estimator's functions are clipped to [0, 1]; the net points of the covering arguments are members of P_l,
polynomials with sup norm <= 1, so their values range over [-1, 1].
"""

from __future__ import annotations

import itertools
import math
import pathlib
from dataclasses import replace
from fractions import Fraction

import numpy as np
import sympy as sp

from ._core import REGISTRY, Part, Result, Verdict, claim, combine
from .bounds import CE2_RANGE, LB_CONSTANT, step5
from .certified import Ledger, both, sym

R = sp.Rational
M_RANGE = (R(0), R(1))  # m~
VAR_RANGE = (R(0), R(1, 4))  # var~ (the perturbed variance may reach 1/4 whatever m~ is)
CLIPPED = (R(0), R(1))  # values of the estimator's clipped functions
PL_VALUES = (R(-1), R(1))  # values of a member of P_l (sup norm <= 1)


def _sup_abs_linear(corners_f, corners_target):
    """sup |f - t| over f in an interval and t in an interval (attained at corners: the map is convex)."""
    return max(abs(f - t) for f in corners_f for t in corners_target)


def _g_range(values):
    """Exact sup over the domain of |f - m~| + |g - v~|, f and g with the given value range, (m~, var~) in R."""
    best, arg = R(0), None
    for m, var in itertools.product(M_RANGE, VAR_RANGE):
        v = m**2 + var
        s = _sup_abs_linear(values, (m,)) + _sup_abs_linear(values, (v,))
        if s > best:
            best, arg = s, (m, var)
    return best, arg


@claim("step5-range", "Proof of Prop. 'main', Step 5 ('Every member of G_l is bounded in [0,2]')",
       "For f, g in P_l the summand |f(s) - m~| + |g(s) - v~| lies in [0, 2] (and |f(s) - m~| in [0, 1]), so "
       "Hoeffding applies with range 2: P(|mean - E| > t) <= 2 exp(-n t^2 / 2).",
       paper={"range_hi": 2}, wrong={"range_hi": 1}, repaired={"range_hi": R(17, 4)})
def check_step5_range(*, quick, range_hi):
    range_hi = sym(range_hi)
    clipped, at_c = _g_range(CLIPPED)  # what the computed estimator returns
    poly, at_p = _g_range(PL_VALUES)  # the class P_l the proof's covering uses
    first_clipped = _sup_abs_linear(CLIPPED, M_RANGE)
    first_poly = _sup_abs_linear(PL_VALUES, M_RANGE)
    v_max = max(m**2 + var for m, var in itertools.product(M_RANGE, VAR_RANGE))
    # Hoeffding with range r: 2 exp(-2 n t^2 / r^2); the proof's t* scales with r / 2
    n, l, h = 10**6, None, 1 / 16
    term = step5(n, h, l)
    ev = {"v~ = m~^2 + var~ ranges over": [0, str(v_max)],
          "sup |f - m~| + |g - v~|, f, g clipped to [0, 1]": str(clipped), "attained at (m~, var~)": [str(a) for a in at_c],
          "sup over P_l (values in [-1, 1])": str(poly), "attained at (m~, var~), P_l": [str(a) for a in at_p],
          "sup |f - m~|: clipped, P_l": [str(first_clipped), str(first_poly)],
          "claimed upper end": str(range_hi),
          "Hoeffding exponent with the true range (P_l)": f"2 n t^2 / ({poly})^2 = {sp.nsimplify(2 / poly**2)} n t^2",
          "Step 5 term at n=1e6, h=1/16 (paper's range 2)": term,
          "Step 5 term with range 17/4 (t* scales by range/2)": term * float(poly) / 2}
    m_w, var_w = at_p
    f_w = max(PL_VALUES, key=lambda a: abs(a - m_w))
    g_w = max(PL_VALUES, key=lambda a: abs(a - (m_w**2 + var_w)))
    ev["sharp"] = {"step5_range": str(poly), "attained at (f, g, m~, var~)": [str(x) for x in (f_w, g_w, m_w, var_w)],
                   "where": "Step 5's class G_l, f and g in P_l (values in [-1, 1]), (m~, var~) in R"}
    led = Ledger()
    led.check("the summand at the witness = its sup (exact)", abs(f_w - m_w) + abs(g_w - m_w**2 - var_w), "==", poly)
    led.check("the stated upper end >= sup of the summand over P_l (exact)", range_hi, ">=", poly)
    ev["decided by"] = led.lines()
    verdict = led.decide(None, [([0], Verdict.INCONCLUSIVE), ([1], Verdict.FAILS)])
    if verdict is not Verdict.HOLDS:
        return Result(verdict, f"the summand reaches {poly} on R for f, g in P_l ({clipped} even for clipped "
                                     f"f, g): v~ = m~^2 + var~ reaches {v_max} because the perturbed score leaves F; "
                                     f"the range {range_hi} and Hoeffding's exponent n t^2/2 do not hold", ev)
    return Result(verdict, f"the summand lies in [0, {poly}] <= [0, {range_hi}] on R", ev)


@claim("aux-lipschitz", "Lemma 'aux-1', proof ('|h_f - h_g| <= 2 ||f - g||')",
       "For f, g in P_l and Z in {0, 1}, |h_f - h_g| <= 2 |f - g| 'since f, g in [0, 1]'.",
       paper={"factor": 2}, wrong={"factor": 1}, repaired={"factor": 4})
def check_aux_lipschitz(*, quick, factor):
    factor = sym(factor)
    # h_f - h_g = (f - g)(f + g - 2Z): the factor is sup |f + g - 2Z|
    f, g, z = sp.symbols("f g z")
    expr = sp.expand((f - z) ** 2 - (f - g) * (f + g - 2 * z) - (g - z) ** 2)
    sup_clipped = max(abs(a + b - 2 * zz) for a in CLIPPED for b in CLIPPED for zz in (0, 1))
    sup_pl = max(abs(a + b - 2 * zz) for a in PL_VALUES for b in PL_VALUES for zz in (0, 1))
    ev = {"identity h_f - h_g = (f - g)(f + g - 2Z)": sp.simplify(expr) == 0,
          "sup |f + g - 2Z|, f, g in [0, 1]": str(sup_clipped), "sup |f + g - 2Z|, f, g in P_l ([-1, 1])": str(sup_pl),
          "sharp": {"lipschitz": str(sup_pl), "approached as g -> f at (f, g, Z)": ["-1", "-1", "1"],
                    "where": "Lemma aux-1's net points (P_l, values in [-1, 1]); |h_f - h_g| / |f - g| = "
                             "|f + g - 2Z| < 4 for f != g, and -> 4 as f, g -> -1 with Z = 1"},
          "claimed factor": str(factor),
          "effect": "with factor 4 the net's P_n h_g <= 2/n becomes <= 4/n and 408 = 2 + 406 becomes 4 + 406"}
    led = Ledger()
    led.check("|f + g - 2Z| at (f, g, Z) = (-1, -1, 1) = its sup (exact)", abs(R(-1) + R(-1) - 2), "==", sup_pl)
    # lines 1311-1318: the net point g_f within delta_n = 1/n of f gives P_n h_g <= P_n h_f + factor delta_n, the
    # discretisation term 2/n with the paper's factor 2 and 4/n with the sharp one
    n = sp.symbols("n", positive=True)
    ev["the net's discretisation factor / n"] = {"paper (factor 2)": str(2 / n), f"claimed ({factor})": str(factor / n),
                                                 f"sharp ({sup_pl})": str(sup_pl / n)}
    led.identity("the net's term factor * delta_n at delta_n = 1/n, factor 2: 2/n", 2 * (1 / n), rhs=2 / n)
    led.check("the factor >= sup |f + g - 2Z| over P_l values (exact)", factor, ">=", sup_pl)
    ev["decided by"] = led.lines()
    verdict = led.decide(None, [([0, 1], Verdict.INCONCLUSIVE), ([2], Verdict.FAILS)])
    if verdict is not Verdict.HOLDS:
        return Result(verdict, f"the net points g are members of P_l, whose values reach -1: |f + g - 2Z| "
                                     f"reaches {sup_pl}, so the factor is {sup_pl}, not {factor} (it is {sup_clipped} "
                                     f"only for [0, 1]-valued functions)", ev)
    return Result(verdict, f"factor {factor} >= sup |f + g - 2Z| = {sup_pl}", ev)


@claim("step2-constants", "Proof of Prop. 'main', Step 2(b), (c), as used in Lemma 'aux-1'",
       "|h_f| <= 4 and E[h_f^2] <= 16 ||f - f*||^2 for f, f* in [0, 1], Z in {0, 1}; Lemma aux-1 applies both to "
       "the net points g of P_l ('By Step 2(b), h_g in [-4, 4]').",
       paper={"h_max": 4, "bernstein": 16}, wrong={"h_max": R(1, 2), "bernstein": 16})
def check_step2_constants(*, quick, h_max, bernstein):
    h_max, bernstein = sym(h_max), sym(bernstein)
    ev = {"claimed": [str(h_max), str(bernstein)]}
    sharp, witnesses = {}, []
    for dom, values in (("[0, 1]", CLIPPED), ("P_l", PL_VALUES)):
        (hs, hw), (bs, bw, attained) = sharp_step2(values)
        sharp[dom] = {"h_max": hs, "bernstein": bs, "attained": attained}
        ev[f"sharp, f in {dom}"] = {
            "sup |h_f|": str(hs), "sup |h_f| attained at (f, f*, Z)": [str(x) for x in hw],
            "sup h_f^2 / (f - f*)^2": str(bs),
            ("the ratio attained at (f, f*, Z)" if attained else "the ratio approached as f -> f* at (f, f*, Z)"):
                [str(x) for x in bw]}
        # the witnesses, evaluated exactly
        witnesses.append((f"|h_f| at the witness {tuple(map(str, hw))} = sup ({dom})",
                          abs((hw[0] - hw[2]) ** 2 - (hw[1] - hw[2]) ** 2), hs))
        if attained:
            witnesses.append((f"h_f^2/(f - f*)^2 at the witness {tuple(map(str, bw))} = sup ({dom})",
                              ((bw[0] - bw[2]) ** 2 - (bw[1] - bw[2]) ** 2) ** 2 / (bw[0] - bw[1]) ** 2, bs))
    ev["sharp"] = {"h_max": str(sharp["P_l"]["h_max"]), "bernstein": str(sharp["P_l"]["bernstein"]),
                   "where": "the net points g of Lemma aux-1 (members of P_l, values in [-1, 1]), where the proof "
                            "uses both constants; sharp for the inequalities as Step 2 states them (pointwise, any "
                            "f* in [0, 1], Z in {0, 1})"}
    h01, b01 = sharp["[0, 1]"]["h_max"], sharp["[0, 1]"]["bernstein"]
    hpl, bpl = sharp["P_l"]["h_max"], sharp["P_l"]["bernstein"]
    led = Ledger()
    attained = both(*(led.check(name, val, "==", sup) for name, val, sup in witnesses))
    fails = both(led.check("h_max >= sup |h| on both domains (exact)", h_max, ">=", max(h01, hpl)),
                 led.check("the Bernstein constant >= sup h^2/(f - f*)^2 (exact)", bernstein, ">=",
                           max(b01, bpl))) is False
    ev["decided by"] = led.lines()
    verdict = led.decide(None, [(range(len(witnesses)), Verdict.INCONCLUSIVE),
                                ([len(witnesses), len(witnesses) + 1], Verdict.FAILS)])
    if attained is not True:
        return Result(verdict, "a witness does not attain the supremum it is recorded for", ev)
    if fails or verdict is not Verdict.HOLDS:
        return Result(verdict, f"|h| reaches {max(h01, hpl)} and h^2/(f-f*)^2 reaches {max(b01, bpl)} where "
                                     f"the constants are used", ev)
    loose = [f"{name} {stated} (sharp {sh})" for name, stated, sh in (("the range of h_g", h_max, hpl),
                                                                     ("the Bernstein constant", bernstein, bpl))
             if stated > sh]
    how = "attained" if sharp["P_l"]["attained"] else "approached as f -> f*"
    return Result(verdict, f"true where they are used (the net points of P_l): sharp constants {hpl} "
                                 f"(attained) and {bpl} ({how})" + (f"; loose: {', '.join(loose)}" if loose else "")
                  + f"; for [0, 1]-valued f they would be {h01} and {b01}", ev)


def sharp_step2(values):
    """The sharp constants of Step 2(b), (c) with witnesses, for f with the given value range, f* in [0, 1], Z in
    {0, 1}; exact (rationals).

    h_f = (f - Z)^2 - (f* - Z)^2 is a difference of two convex functions of separate variables, so its supremum
    is max (f - Z)^2 (at an end of f's range) minus min (f* - Z)^2 (at f* = Z, which lies in [0, 1]), and its
    infimum likewise: sup |h_f| is attained.  h_f^2 / (f - f*)^2 = (f + f* - 2Z)^2 is convex in (f, f*), so its
    supremum over the box is at a vertex; it is attained there if f != f* at that vertex, else approached as
    f -> f*.  Returns ((sup |h|, witness), (sup ratio, witness, attained))."""
    ends, fstar = (values[0], values[1]), (R(0), R(1))
    best_h = (R(-1), None)
    for z in (R(0), R(1)):
        f_far = max(ends, key=lambda a: (a - z) ** 2)
        s_far = max(fstar, key=lambda b: (b - z) ** 2)
        f_near = min(max(z, values[0]), values[1])
        for val, wit in (((f_far - z) ** 2, (f_far, z, z)), ((s_far - z) ** 2 - (f_near - z) ** 2, (f_near, s_far, z))):
            if val > best_h[0]:
                best_h = (val, wit)
    verts = [(a, b, z) for a in ends for b in fstar for z in (R(0), R(1))]
    ratio = max((a + b - 2 * z) ** 2 for a, b, z in verts)
    at = [v for v in verts if (v[0] + v[1] - 2 * v[2]) ** 2 == ratio]
    strict = [v for v in at if v[0] != v[1]]
    return best_h, (ratio, (strict or at)[0], bool(strict))


@claim("exp1-tuning-rules", "App. 'Experiment 1', Baselines",
       "K = (n/h^2)^{1/4} is the 2-D histogram MSE balance for an O(1/h)-Lipschitz target, and b = h^{1/2} n^{-1/4} "
       "the Nadaraya-Watson one (up to the tuned constant c).",
       paper={"K_h_exponent": R(-1, 2), "b_h_exponent": R(1, 2)}, wrong={"K_h_exponent": -1, "b_h_exponent": R(1, 2)})
def check_exp1_tuning(*, quick, K_h_exponent, b_h_exponent):
    n, h, K, b = sp.symbols("n h K b", positive=True)
    L = 1 / h
    mse_hist = L**2 / K**2 + K**2 / n  # bias^2 (cell width 1/K) + variance (n/K^2 points per cell)
    mse_nw = L**2 * b**2 + 1 / (n * b**2)  # 2-D kernel: bias L b, variance 1/(n b^2)
    K_opt = sp.solve(sp.diff(mse_hist, K), K)[0]
    b_opt = sp.solve(sp.diff(mse_nw, b), b)[0]
    k_exp = sp.simplify(sp.diff(sp.log(K_opt), h) * h)
    b_exp = sp.simplify(sp.diff(sp.log(b_opt), h) * h)
    kn_exp = sp.simplify(sp.diff(sp.log(K_opt), n) * n)
    bn_exp = sp.simplify(sp.diff(sp.log(b_opt), n) * n)
    ev = {"K_opt": str(K_opt), "b_opt": str(b_opt), "h exponents (K, b)": [str(k_exp), str(b_exp)],
          "n exponents (K, b)": [str(kn_exp), str(bn_exp)], "claimed h exponents": [str(K_h_exponent), str(b_h_exponent)],
          "optimal MSE rate": str(sp.simplify(mse_hist.subs(K, K_opt)))}
    led = Ledger()
    ok = both(led.check("K*'s h exponent", k_exp, "==", sym(K_h_exponent)),
              led.check("b*'s h exponent", b_exp, "==", sym(b_h_exponent)),
              led.check("K*'s n exponent = 1/4", kn_exp, "==", R(1, 4)),
              led.check("b*'s n exponent = -1/4", bn_exp, "==", R(-1, 4)))
    ev["decided by"] = led.lines()
    verdict = led.decide()
    if not ok:
        return Result(verdict, f"the MSE balance gives K ~ {K_opt}, b ~ {b_opt}", ev)
    return Result(verdict, f"exact (sympy): K* = {K_opt}, b* = {b_opt}; MSE ~ n^(-1/2), i.e. an n^(-1/4) rate "
                                 f"in L1 for the baselines", ev)


@claim("exp-setup-numbers", "App. 'Experiments 2-4' (feature counts, grids, cohorts)",
       "Degree 12 has 169 features; per-axis degree 4 has 25; the total-degree-3 basis in (m, s) has 10; 71 "
       "thresholds on [-0.05, 0.30]; 8 var - 1 maps [0, 1/4] onto [-1, 1]; about half of Experiment 3's population "
       "passes the borderline filter; the XOR scores have the same marginals of m and s in both cohorts.",
       paper={"f12": 169, "f4": 25, "f3": 10, "thresholds": 71, "half": R(1, 2), "mode": "xor"},
       wrong={"f12": 144, "f4": 25, "f3": 10, "thresholds": 71, "half": R(1, 2), "mode": "xor"})
def check_setup_numbers(*, quick, f12, f4, f3, thresholds, half, mode):
    from scipy.stats import norm

    got = {"f12": 13**2, "f4": 5**2, "f3": sum(1 for i in range(4) for j in range(4) if i + j <= 3),
           "thresholds": round((0.30 - (-0.05)) / 0.005) + 1}
    var = sp.Symbol("var")
    got["8 var - 1 at 0, 1/4"] = [int((8 * var - 1).subs(var, 0)), int((8 * var - 1).subs(var, R(1, 4)))]
    # Experiment 3: groups 2 and 3 (weights 0.35, 0.15) have m ~ N(0.5, 0.035^2); groups 0/1 sit at theta ~ 0.08,
    # 0.92 with small var and (stated) negligible mass in [0.35, 0.65]
    inside = norm.cdf(0.65, 0.5, 0.035) - norm.cdf(0.35, 0.5, 0.035)
    got["borderline fraction (groups 2, 3)"] = 0.5 * inside
    # Experiment 4: P(s = hi | cohort) with b ~ Bernoulli(1/2)
    p_s_hi = {}
    for cohort in ("aleatoric", "hidden"):
        is_ale = cohort == "aleatoric"
        p = 0.0
        for bb in (0, 1):
            s_hi = (int(is_ale) == bb) if mode == "xor" else is_ale
            p += 0.5 * s_hi
        p_s_hi[cohort] = p
    got["P(s = hi | cohort)"] = p_s_hi
    got["P(m = hi | cohort)"] = {"aleatoric": 0.5, "hidden": 0.5}
    ev = {"computed": got, "stated": {"f12": f12, "f4": f4, "f3": f3, "thresholds": thresholds, "half": str(half)}}
    led = Ledger()
    bad = [k for k in ("f12", "f4", "f3", "thresholds") if not led.check(
        f"{k}: computed == stated", got[k], "==", {"f12": f12, "f4": f4, "f3": f3, "thresholds": thresholds}[k])]
    # 'about half': within 0.05; the normal CDF difference carries 1e-15
    if not led.check("borderline fraction within 0.05 of the stated 'half'",
                     abs(got["borderline fraction (groups 2, 3)"] - float(half)), "<=", R(1, 20), lhs_err=1e-14):
        bad.append("half")
    if not both(led.check("8 var - 1 at var = 0 is -1", got["8 var - 1 at 0, 1/4"][0], "==", -1),
                led.check("8 var - 1 at var = 1/4 is 1", got["8 var - 1 at 0, 1/4"][1], "==", 1)):
        bad.append("8 var - 1")
    if not led.check("P(s = hi | aleatoric) = P(s = hi | hidden) (sums of halves, exact)",
                     Fraction(p_s_hi["aleatoric"]), "==", Fraction(p_s_hi["hidden"])):
        bad.append("XOR marginals")
    ev["decided by"] = led.lines()
    verdict = led.decide()
    if bad:
        return Result(verdict, f"stated numbers that do not follow from the setups: {bad}", ev)
    return Result(verdict, "169, 25, 10 features; 71 thresholds; [-1, 1]; borderline fraction "
                                 f"{got['borderline fraction (groups 2, 3)']:.4f}; XOR marginals identical (1/2)", ev)


@claim("exp3-cohort-moments", "App. 'Experiment 3', DGP ('eta2 ~ 0.25 versus eta2 ~ 0.5')",
       "Within the borderline cohort eta1 ~ 0.5 for both groups while eta2 ~ 0.25 (aleatoric) versus ~ 0.5 (hidden "
       "subtype).",
       paper={"eta1": R(1, 2), "eta2_aleatoric": R(1, 4), "eta2_hidden": R(1, 2), "rel_tol": R(1, 10)},
       wrong={"eta1": R(1, 2), "eta2_aleatoric": R(1, 2), "eta2_hidden": R(1, 2), "rel_tol": R(1, 10)})
def check_exp3_moments(*, quick, eta1, eta2_aleatoric, eta2_hidden, rel_tol):
    from scipy.stats import truncnorm

    def moments(mu, sd):  # theta ~ N(mu, sd^2) clipped to [0, 1]: the clipping moves less than 1e-9 here
        a, b = (0 - mu) / sd, (1 - mu) / sd
        d = truncnorm(a, b, loc=mu, scale=sd)
        return d.mean(), d.var() + d.mean() ** 2

    ale = moments(0.5, 0.04)
    lo, hi = moments(0.12, 0.03), moments(0.88, 0.03)
    hid = (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]))
    ev = {"aleatoric (E theta, E theta^2)": list(ale), "hidden (E theta, E theta^2)": list(hid),
          "hidden Var theta (the calibrated sigma^2)": hid[1] - hid[0] ** 2,
          "hidden reported sigma^2 (mean)": 0.06, "stated": [str(eta1), str(eta2_aleatoric), str(eta2_hidden)]}
    led = Ledger()
    # the gain's conditional mean (Section 7, Exp. 3): E[2 theta^2 - 2 theta + 1/2 - c | S] = 2 eta2 - 2 eta1 + 1/2 - c
    # (linearity), on a two-atom law of theta
    th1, th2, w_, c_ = sp.symbols("theta1 theta2 w c", real=True)
    gain = lambda t: 2 * t**2 - 2 * t + sp.Rational(1, 2) - c_  # noqa: E731
    e1_, e2_ = w_ * th1 + (1 - w_) * th2, w_ * th1**2 + (1 - w_) * th2**2
    led.identity("the gain's mean is 2 eta2 - 2 eta1 + 1/2 - c", w_ * gain(th1) + (1 - w_) * gain(th2)
                 - (2 * e2_ - 2 * e1_ + sp.Rational(1, 2) - c_))
    # scipy's truncated-normal moments carry 1e-12 (generously); 'about' is the stated relative tolerance
    off = [name for name, got, want in (("eta1 aleatoric", ale[0], eta1), ("eta1 hidden", hid[0], eta1),
                                        ("eta2 aleatoric", ale[1], eta2_aleatoric), ("eta2 hidden", hid[1], eta2_hidden))
           if not led.check(f"{name}: |computed - stated| <= rel_tol x stated", abs(got - float(want)), "<=",
                            sym(rel_tol) * sym(want), lhs_err=1e-12)]
    ev["decided by"] = led.lines()
    verdict = led.decide(None, [([0], Verdict.INCONCLUSIVE), ([1, 2, 3, 4], Verdict.FAILS)])
    if off or verdict is not Verdict.HOLDS:
        return Result(verdict, f"E theta^2 of the hidden-subtype group is {hid[1]:.3f}, not ~{float(eta2_hidden)} "
                                     f"(the groups still differ: {ale[1]:.3f} vs {hid[1]:.3f}, so the experiment's "
                                     f"point stands); off: {off}", ev)
    return Result(verdict, f"eta1 {ale[0]:.3f}, {hid[0]:.3f}; eta2 {ale[1]:.3f}, {hid[1]:.3f}", ev)


EXPERIMENTS = {  # (h, degree used, n) as the appendix describes them
    "Exp 1, h=1/16 (cap 44)": (1 / 16, 44, 50_000),
    "Exp 1, h=1/64 (cap 88)": (1 / 64, 88, 50_000),
    "Exp 2 (degree 12, h=1/64)": (1 / 64, 12, 20_000),
}


@claim("experiments-as-run", "Sections 'Experiments', App. 'Details of Experiments' vs Prop. 'main', Cor. 'approx_recal'",
       "Experiment 1 verifies the rate of Proposition 'main'; Experiment 2 confirms the calibrated (sigma^2)' promised "
       "by Corollary 'approx_recal'; Experiment 3 shows what Proposition 'thm:recal' promises.",
       paper={"c406": 406, "c_lower": LB_CONSTANT}, wrong={"c406": 406, "c_lower": 10_000})
def check_experiments_as_run(*, quick, c406, c_lower):
    """The bound of Prop. 'main' at each experiment's (h, degree, n), checked for consistency against Prop. 'lb'
    (an upper bound below the minimax lower bound would expose a wrong constant), and its size."""
    from .bounds import PAPER, constant_sets, infimum_ball, infimum_over_n, threshold_n, upper_bound, upper_bound_ball

    c_lower_f = float(c_lower)
    out, below_lb, lb_rows, informative_rows = {}, [], [], []
    led = Ledger()
    vacuous = []
    paper = replace(PAPER, exponent=Fraction(c406), name="paper") if c406 != 406 else PAPER
    # every constant set of main-bound: the paper's, the certified sharp ones, [0, 1]-valued, and each with the
    # repaired approximation step
    sharp, unit, _ = certified_constants(quick)
    variants = dict(constant_sets(sharp, unit), paper=paper)
    repaired = variants["sharp + repaired approximation"]

    def reach(h, l, c, key):
        """The bound's infimum over n at this degree (certified), and the n from which it is below 9/4."""
        never = led.check(f"{key}: the bound's infimum over n at this degree, 2 sqrt 5 B theta^-l, >= 9/4",
                          infimum_ball(h, l, constants=c), ">=", R(9, 4))
        if never is not False:
            return infimum_over_n(h, l, constants=c), None
        n_star = int(threshold_n(h, CE2_RANGE, constants=c, l=l, n_max=1e300))
        led.check(f"{key}: below 9/4 at n = {n_star:.3g} (the same degree)", upper_bound_ball(n_star, h, l, constants=c),
                  "<", R(9, 4))
        return infimum_over_n(h, l, constants=c), n_star

    for name, (h, l, n) in EXPERIMENTS.items():
        theta = paper.theta(h)
        l_paper = paper.degree(n, h)
        total = upper_bound(n, h, l, constants=paper)
        approx = paper.B(theta) * theta ** (-l)
        # at the experiment's own degree the bound decreases in n to 2 sqrt 5 eps_l: it becomes non-vacuous from
        # some n if that limit is below 9/4, and never otherwise
        inf_p, n_p = reach(h, l, paper, name)
        inf_r, n_r = reach(h, l, repaired, name + " (sharp constants, repaired approximation)")
        per_set = {}
        for set_name, c in variants.items():
            inf_c, n_c = (inf_p, n_p) if c is paper else (inf_r, n_r) if c is repaired else \
                reach(h, l, c, f"{name} ({set_name})")
            per_set[set_name] = {"bound at the experiment's n": upper_bound(n, h, l, constants=c),
                                 "non-vacuous (< 9/4) from n": float(f"{n_c:.3g}") if n_c else None,
                                 "floor (inf over n at this degree)": inf_c}
        out[name] = {"degree used": l, "paper's degree": l_paper, "approximation error eps_l (M = 1)": approx,
                     "per constant set": per_set,
                     "bound on E|CE2-hat - CE2|": total, "minimax lower bound c/sqrt(n)": c_lower_f / math.sqrt(n),
                     "inf over n of the bound at this degree (2 sqrt 5 eps_l, as n grows)": inf_p,
                     "non-vacuous (< 9/4) from n": float(f"{n_p:.3g}") if n_p else "never (at this degree)",
                     "with the audit's constants and the repaired approximation": {
                         "bound at the experiment's n": upper_bound(n, h, l, constants=repaired),
                         "inf over n at this degree": inf_r,
                         "non-vacuous (< 9/4) from n": float(f"{n_r:.3g}") if n_r else "never (at this degree)"}}
        tb = upper_bound_ball(n, h, l, constants=paper)
        lb_rows.append(len(led.rows))
        if led.check(f"{name}: the bound >= the minimax lower bound c/sqrt(n) (else a contradiction)", tb, ">=",
                     sym(c_lower) / sp.sqrt(n)) is False:
            below_lb.append(name)
        informative_rows.append(len(led.rows))
        if led.check(f"{name}: the bound < 9/4 at the experiment's n (informative)", tb, "<", R(9, 4)) is False:
            vacuous.append(name)
    out["Exp 3, Exp 4"] = ("scores not perturbed (Exp 3: Gaussian scores; Exp 4: XOR scores): the analyticity, "
                           "Prop. 'main' and Cor. 'approx_recal' do not apply; Exp 3's ridge fits (degree 4/6, ridge "
                           "1e-4) use estimated, not true, calibration functions, so Prop. 'thm:recal' does not "
                           "apply either")
    out["departures"] = ["degree capped below the rule (44, 88 vs the rule's value)", "ridge and CV selection "
                         "(the theorem analyses unregularised ERM over clipped polynomials)", "Exp 2: no CV, ridge "
                         "floor only, degree 12", "eta1 from Y1 alone in the theorem; the experiments' all-pairs "
                         "targets have lower variance (still unbiased)"]
    out["decided by"] = led.lines()
    rule = [(lb_rows, Verdict.FAILS), (led.since(0), Verdict.INCONCLUSIVE, "undecided"),
            (informative_rows, Verdict.VACUOUS, "all")]
    if below_lb or not led.decided:  # the bound itself is in question: the claim's verdict, no parts
        verdict = led.decide(None, rule)
    if below_lb:
        return Result(verdict, f"the upper bound falls below the minimax lower bound at {below_lb}: a "
                                     f"contradiction, so a constant is wrong", out)
    if not led.decided:
        return Result(verdict, "a comparison of the bound could not be certified", out)
    worst = min(v["bound on E|CE2-hat - CE2|"] for v in out.values() if isinstance(v, dict))
    reach = "; ".join(f"{k}: " + (v["non-vacuous (< 9/4) from n"] if isinstance(v["non-vacuous (< 9/4) from n"], str)
                                  else f"from n = {v['non-vacuous (< 9/4) from n']:.3g}")
                      for k, v in out.items() if isinstance(v, dict) and "degree used" in v)
    def where(entry):
        n_c, floor = entry["non-vacuous (< 9/4) from n"], entry["floor (inf over n at this degree)"]
        return f"from n = {n_c:.3g}" if n_c else f"never (floor {floor:.3g})"

    table = [f"{set_name}: " + "; ".join(f"{k.split(' (')[0]} {where(v['per constant set'][set_name])}"
                                          for k, v in out.items() if isinstance(v, dict) and "degree used" in v)
             for set_name in variants]
    out["non-vacuous per constant set"] = table
    rep = "; ".join(f"{set_name}: " + ", ".join(f"{k.split(' (')[0]} {where(v['per constant set'][set_name])}"
                                                 for k, v in out.items() if isinstance(v, dict) and "degree used" in v)
                    for set_name in variants if set_name != "paper")
    # the claim names three experiments; each part covers exactly the ones it names
    names = ("Experiments 1-2 under Prop. 'main' and Cor. 'approx_recal' (the bound at their settings)",
             "Experiment 3 shows what Prop. 'thm:recal' promises (and Exp 4 beside it)")
    first = led.decide(names[0], rule)
    words = (f"as run, the theorems guarantee nothing: the bound at the experiments' settings is >= {worst:.1f} (CE2 "
             f"lies in [0, 9/4]); at the same degrees, with the paper's constants, it drops below 9/4 ({reach}); per "
             f"constant set: {rep}" if len(vacuous) == len(EXPERIMENTS) else
             f"the bound is informative at {sorted(set(EXPERIMENTS) - set(vacuous))}")
    # Experiments 3-4, from rows: the theorems are about the sech-perturbed predictor, so an experiment whose code
    # never calls socal's perturbation (no import of socal.perturb in its module) is outside their assumptions:
    # GAP (not refuted, not established).  An experiment that does perturb is not shown to be inside them by that
    # alone (its fits must also be the theorems' estimator): INCONCLUSIVE
    i_exp = len(led.rows)
    for exp, module in (("Exp 3", "decision"), ("Exp 4", "real_labels")):
        led.check(f"{exp} (socal.experiments.{module}) perturbs its scores: its imports of socal.perturb, at least 1",
                  perturbation_imports(module), ">=", 1)
    later = led.decide(names[1], [(led.since(i_exp), Verdict.GAP)], holds=Verdict.INCONCLUSIVE)
    parts = [Part(names[0], first, words, role="conclusion"),
             Part(names[1], later, "not refuted, and not established by the theorems: Exp 3's scores are "
                                   "Gaussian and unperturbed and its ridge fits estimate the calibration "
                                   "functions (Prop. 'thm:recal' assumes the true ones); Exp 4's XOR scores are "
                                   "unperturbed too (neither module imports socal.perturb)" if later is Verdict.GAP else
                  f"{later.value}: both modules import socal.perturb; whether their fits are the theorems' "
                  "estimator is not checked here", role="conclusion")]
    return Result(combine(parts), f"Experiments 1-2: {first.value} ({words}); Experiments 3-4: {later.value} " + (
        "(outside the theorems' assumptions: unperturbed scores, estimated calibration functions)"
        if later is Verdict.GAP else "(both perturb their scores; their fits are not checked against the theorems' "
                                     "estimator)"), out, parts=parts)


def perturbation_imports(module):
    """How many imports of socal's perturbation (the module ``socal.perturb`` or a name from it) the experiment
    module ``socal.experiments.<module>`` makes, read from its source (its syntax tree, not its text)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(f"socal.experiments.{module}")
    if spec is None or spec.origin is None:
        raise ValueError(f"perturbation_imports: no module socal.experiments.{module}")
    tree = ast.parse(pathlib.Path(spec.origin).read_text())
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if mod in ("perturb", "socal.perturb") and (node.level == 2 or mod == "socal.perturb"):
                count += 1
            elif (mod == "socal" or (node.level == 2 and not mod)) and any(a.name == "perturb" for a in node.names):
                count += 1
        elif isinstance(node, ast.Import):
            count += sum(a.name == "socal.perturb" for a in node.names)
    return count


def certified_constants(quick):
    """(sharp, unit): the constants H, V, L, R where the proof uses them (P_l, values in [-1, 1]) and for [0, 1]-valued
    functions, each certified with witnesses by step2-constants, aux-lipschitz and step5-range."""
    s2, lip, rng = (REGISTRY[cid].run(quick=quick).evidence for cid in ("step2-constants", "aux-lipschitz", "step5-range"))
    sharp = {"h_max": Fraction(s2["sharp"]["h_max"]), "bernstein": Fraction(s2["sharp"]["bernstein"]),
             "lipschitz": Fraction(lip["sharp"]["lipschitz"]), "step5_range": Fraction(rng["sharp"]["step5_range"])}
    unit = {"h_max": Fraction(s2["sharp, f in [0, 1]"]["sup |h_f|"]),
            "bernstein": Fraction(s2["sharp, f in [0, 1]"]["sup h_f^2 / (f - f*)^2"]),
            "lipschitz": Fraction(str(lip["sup |f + g - 2Z|, f, g in [0, 1]"])),
            "step5_range": Fraction(str(rng["sup |f - m~| + |g - v~|, f, g clipped to [0, 1]"]))}
    return sharp, unit, (s2, lip, rng)


# --------------------------------------------------------------------------------------------------------------------
EXP1_ESTIMATORS = {"poly-val": "polynomial, held-out tuned", "poly-cv": "polynomial, CV", "bucketing": "bucketing",
                   "nadaraya-watson": "Nadaraya-Watson"}
_FAR = 100.0  # a slope beyond any the experiment can show: an open end of a range, kept finite for the file's JSON


def _exp1_rows(quick):
    """Experiment 1 as socal reproduces it (:func:`socal.experiments.rate.run_rate`): the full run (20 seeds, 7 sizes,
    2^18 Sobol points for the truth) or the quick one (3 seeds, n = 500, 2000, 10000, 2^15 points), in a temporary
    folder (nothing is resumed from an earlier run).  Cached per process: the paper's and the negative control's
    runs read the same rows."""
    if quick not in _EXP1_CACHE:
        _EXP1_CACHE[quick] = _run_exp1(quick)
    return _EXP1_CACHE[quick]


_EXP1_CACHE: dict = {}


def _run_exp1(quick):
    import tempfile

    from socal.experiments.rate import run_rate

    with tempfile.TemporaryDirectory() as tmp:
        if quick:
            return run_rate(seeds=3, sizes=(500, 2000, 10_000), out=tmp, n_jobs=1, log2_sobol=15)
        return run_rate(seeds=20, out=tmp, n_jobs=2)


def _to_rounding(quoted):
    """A range quoted as two decimal strings (lower end first), widened to every value that rounds into it: each end
    moved out by half a unit of its last digit ("-0.55", "-0.33" -> -0.555, -0.325)."""
    from decimal import Decimal

    lo, hi = (Decimal(str(q)) for q in quoted)
    return (float(lo - Decimal(1).scaleb(lo.as_tuple().exponent) / 2),
            float(hi + Decimal(1).scaleb(hi.as_tuple().exponent) / 2))


@claim("exp1-slopes", "Section 7, Experiment 1 (the slopes it quotes, against the rates of Section 4), as socal "
       "reproduces it",
       "The polynomial estimator's empirical log-log slope is about -0.70 at both h in {1/16, 1/64}: at least as "
       "steep as the predicted -1/2 and steeper than the -0.33 to -0.55 slopes of bucketing and Nadaraya-Watson, "
       "which are consistent with their n^{-1/4} rate.",
       paper={"poly_slope": -0.70, "about": 0.1, "baseline_range": ("-0.55", "-0.33"), "predicted": -0.5,
              "baseline_rate": -0.25},
       wrong={"poly_slope": -3.0, "about": 0.1, "baseline_range": ("-0.55", "-0.33"), "predicted": -0.5,
              "baseline_rate": -0.25}, slow=True)
def check_exp1_slopes(*, quick, poly_slope, about, baseline_range, predicted, baseline_rate):
    """Each quoted slope against the experiment as socal runs it (docs/experiments.md, Experiment 1): a slope is the
    least-squares fit of log10 mean error on log10 n, its interval slope +/- t(0.975, S - 1) SE with SE the seeds'
    jackknife (:func:`socal.experiments.rate.slope_errors`; each seed replicates the whole experiment).  "About
    -0.70" is read as within ``about`` of it, and the quoted range (``baseline_range``, as the paper writes its ends)
    as every slope that rounds into it: each end widened by half a unit of its last digit (-0.555 to -0.325).  A part
    FAILS where an interval lies wholly outside what is quoted, HOLDS where every interval lies inside it, and is
    INCONCLUSIVE between (the seeds cannot pin the slope that closely).  These are socal's runs (its seeds, its draw of
    the DGP and the ensemble): a FAILS says the quoted number is not what the experiment, rerun as the appendix
    describes, shows; the paper's own runs are not available to recheck.  A slope steeper than an upper bound's rate is
    consistent with it, not a confirmation of it: what the theorems guarantee at these settings is experiments-as-run's
    (VACUOUS)."""
    from scipy import stats

    from socal.experiments.rate import HS, slope_errors, slopes

    rows = _exp1_rows(quick)
    sl, se = slopes(rows), slope_errors(rows)
    seeds = len({r["seed"] for r in rows})
    t = float(stats.t.ppf(0.975, seeds - 1))
    ci = {key: (sl[key] - t * se[key], sl[key] + t * se[key]) for key in sl}
    led = Ledger()
    seed_note = {"seeds": seeds, "sizes": sorted({r["n"] for r in rows})}
    poly, base = ("poly-val", "poly-cv"), ("bucketing", "nadaraya-watson")

    def label(h, est):
        return f"{EXP1_ESTIMATORS[est]} at h = 1/{round(1 / h)}"

    def within(name, ests, lo, hi, what):
        """A part: every interval of ``ests`` (both h) against [lo, hi]: FAILS if one misses it, INCONCLUSIVE if one
        is not inside it, else HOLDS."""
        meets, inside = [], []
        for h in HS:
            for est in ests:
                iv = [float(x) for x in ci[(h, est)]]
                meets.append(len(led.rows))
                led.statistical(f"{label(h, est)}: the slope's 95% interval meets {what}", lo <= iv[1] and iv[0] <= hi,
                                f"[{iv[0]:.2f}, {iv[1]:.2f}] against [{lo:g}, {hi:g}]",
                                {"kind": "interval_meets", "interval": iv, "range": [lo, hi], **seed_note})
                inside.append(len(led.rows))
                led.statistical(f"{label(h, est)}: the slope's 95% interval lies within {what}",
                                lo <= iv[0] and iv[1] <= hi, f"[{iv[0]:.2f}, {iv[1]:.2f}] against [{lo:g}, {hi:g}]",
                                {"kind": "interval_in", "interval": iv, "range": [lo, hi], **seed_note})
        return led.decide(name, [(meets, Verdict.FAILS), (inside, Verdict.INCONCLUSIVE)])

    p_val = float(poly_slope)
    baseline_range = _to_rounding(baseline_range)
    names = (f"the polynomial's slope is about {p_val:.2f} at both h (within {float(about):g})",
             f"at least as steep as the predicted {float(predicted):g}",
             "steeper than bucketing and Nadaraya-Watson",
             f"bucketing's and Nadaraya-Watson's slopes lie in {float(baseline_range[0]):g} to "
             f"{float(baseline_range[1]):g}",
             f"bucketing and Nadaraya-Watson consistent with their n^{float(baseline_rate):g} rate")
    verdicts = [within(names[0], poly, p_val - float(about), p_val + float(about), f"{p_val:g} +/- {float(about):g}"),
                within(names[1], poly, -_FAR, float(predicted), f"(-oo, {float(predicted):g}]")]
    i_order, outs = len(led.rows), []
    for h in HS:
        for est in poly:
            first, others = [float(x) for x in ci[(h, est)]], [[float(x) for x in ci[(h, b)]] for b in base]
            led.statistical(f"{label(h, est)}: no baseline's slope interval lies below its own",
                            not any(o[1] < first[0] for o in others),
                            f"[{first[0]:.2f}, {first[1]:.2f}] against " + ", ".join(f"[{a:.2f}, {b:.2f}]"
                                                                                   for a, b in others),
                            {"kind": "none_below", "first": first, "others": others, **seed_note})
            outs.append(len(led.rows))
            led.statistical(f"{label(h, est)}: its slope interval lies below every baseline's",
                            all(first[1] < o[0] for o in others), "",
                            {"kind": "intervals_below", "first": first, "others": others, **seed_note})
    order = [i for i in range(i_order, len(led.rows)) if i not in outs]
    verdicts.append(led.decide(names[2], [(order, Verdict.FAILS), (outs, Verdict.INCONCLUSIVE)]))
    verdicts.append(within(names[3], base, float(baseline_range[0]), float(baseline_range[1]),
                           f"[{float(baseline_range[0]):g}, {float(baseline_range[1]):g}]"))
    verdicts.append(within(names[4], base, -_FAR, float(baseline_rate), f"(-oo, {float(baseline_rate):g}]"))
    # the errors themselves, n by n: paired over the seeds (each seed runs every estimator on the same data), each
    # difference's interval at 1 - 0.05 / (comparisons) (Bonferroni: the part speaks of every n at once)
    err = {}
    for r in rows:
        err.setdefault((r["h"], r["estimator"], r["n"]), {})[r["seed"]] = r["abs_error"]
    ns = sorted({r["n"] for r in rows})

    def paired(h, n, a, b, level):
        common = sorted(set(err[(h, a, n)]) & set(err[(h, b, n)]))
        d = np.array([err[(h, a, n)][k] - err[(h, b, n)][k] for k in common])
        half = float(stats.t.ppf(1 - level / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
        return [float(d.mean()) - half, float(d.mean()) + half]

    level = 0.05 / (len(HS) * len(ns) * len(poly) * len(base))
    fails, unsure = [], []
    for h in HS:
        for n in ns:
            for a in poly:
                for b in base:
                    iv = paired(h, n, a, b, level)
                    fails.append(len(led.rows))
                    led.statistical(f"{label(h, a)}, n = {n}: its error less {EXP1_ESTIMATORS[b]}'s is not wholly "
                                    f"above 0", iv[0] <= 0, f"[{iv[0]:.4f}, {iv[1]:.4f}]",
                                    {"kind": "interval_meets", "interval": iv, "range": [-_FAR, 0.0], **seed_note})
                    unsure.append(len(led.rows))
                    led.statistical(f"{label(h, a)}, n = {n}: its error less {EXP1_ESTIMATORS[b]}'s lies below 0",
                                    iv[1] <= 0, "", {"kind": "interval_in", "interval": iv, "range": [-_FAR, 0.0],
                                                     **seed_note})
    names += ("the polynomial estimator dominates at every n (both variants, every baseline)",)
    verdicts.append(led.decide(names[-1], [(fails, Verdict.FAILS), (unsure, Verdict.INCONCLUSIVE)]))
    level = 0.05 / (len(HS) * len(ns))
    apart = []
    for h in HS:
        for n in ns:
            iv = paired(h, n, "poly-val", "poly-cv", level)
            apart.append(len(led.rows))
            led.statistical(f"h = 1/{round(1 / h)}, n = {n}: the held-out tuned less the CV variant's error: its "
                            f"interval meets 0", iv[0] <= 0 <= iv[1], f"[{iv[0]:.4f}, {iv[1]:.4f}]",
                            {"kind": "interval_meets", "interval": iv, "range": [0.0, 0.0], **seed_note})
    names += ("the two polynomial variants are indistinguishable",)
    verdicts.append(led.decide(names[-1], [(apart, Verdict.FAILS)]))
    table = ", ".join(f"{label(h, est)} {sl[(h, est)]:.2f} [{ci[(h, est)][0]:.2f}, {ci[(h, est)][1]:.2f}]"
                      for h in HS for est in EXP1_ESTIMATORS)
    words = {Verdict.HOLDS: "every interval decides it", Verdict.FAILS: "an interval lies wholly on the wrong side",
             Verdict.INCONCLUSIVE: "an interval overlaps the quoted value's edge: these seeds cannot decide"}
    parts = [Part(name, v, words[v], role="conclusion") for name, v in zip(names, verdicts)]
    split = [r_.what.split(": ")[0] for r_ in (led.rows[i] for i in apart) if r_.outcome is False]
    parts[-1] = Part(names[-1], verdicts[-1], f"their errors differ beyond the seeds' spread at {', '.join(split)} "
                     f"(paired over the seeds, Bonferroni over the {len(apart)} (h, n))" if split else
                     f"their paired difference's interval meets 0 at every (h, n) ({len(apart)}, Bonferroni)",
                     role="conclusion")
    behind = sorted({led.rows[i].what.split(": ")[0] for i in unsure if led.rows[i].outcome is False})
    dom_words = {Verdict.HOLDS: "every paired difference's interval lies below 0",
                 Verdict.FAILS: "a baseline's error is below a polynomial variant's beyond the seeds' spread",
                 Verdict.INCONCLUSIVE: "a paired difference's interval meets 0: these seeds cannot decide"}
    parts[-2] = Part(names[-2], verdicts[-2], dom_words[verdicts[-2]] + (
        f" (not decided below every baseline at: {', '.join(behind)})" if behind else ""), role="conclusion")
    # the slopes are compared with the baseline as numbers; the SEs and the interval ends, which can sit near 0, as
    # text (a relative tolerance cannot hold a number near 0 on another floating-point platform)
    ev = {"slopes (95% interval)": {f"{label(h, est)}": {"slope": sl[(h, est)],
                                                        "jackknife SE": f"{se[(h, est)]:.3f}",
                                                        "95% interval": f"[{ci[(h, est)][0]:.3f}, "
                                                                        f"{ci[(h, est)][1]:.3f}]"}
                                    for h in HS for est in EXP1_ESTIMATORS},
          "seeds": seeds, "sizes": seed_note["sizes"], "t(0.975, seeds - 1)": t,
          "reading": "steeper than an upper bound's rate is consistent with it, not a confirmation; the theorems' "
                     "guarantee at these settings: experiments-as-run", "decided by": led.lines()}
    verdict = combine(parts)
    return Result(verdict, "; ".join(f"{n}: {v.value}" for n, v in zip(names, verdicts))
                  + (" (INCONCLUSIVE: an interval overlaps a quoted value's edge, or a paired difference's meets 0)"
                     if Verdict.INCONCLUSIVE in verdicts else "")
                  + f"; slopes [95% intervals]: {table}; {seeds} seeds{', quick' if quick else ''}", ev, parts=parts)
