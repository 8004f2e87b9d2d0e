"""Claims of the finite-sample analysis: Lemma covering, Lemma aux-1, Proposition main, Lemma dom, Proposition lb."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import sympy as sp

from socal import SechKernel

from ._core import REGISTRY, Part, Result, Verdict, claim, combine
from .bounds import (CE2_RANGE, READINGS, constant_sets, threshold_best, threshold_n, upper_bound,
                     upper_bound_ball)
from .certified import Ledger, both, sym
from .claims_steps import certified_constants  # also registers the step claims read below
from .transport import ce_two_point, two_point_minimax

R = sp.Rational


# --------------------------------------------------------------------------------------------------------------------
@claim("covering", "Lemma 'covering' (App. C.4)",
       "N(eps, P_l, ||.||_inf) <= (3/eps)^((l+1)^2) for 0 < eps <= 1, P_l the polynomials of degree <= l per "
       "variable with sup norm <= 1 on [0,1]^2.",
       paper={"base": 3}, wrong={"base": 2})
def check_covering(*, quick, base):
    eps = sp.symbols("epsilon", positive=True)
    # volumetric bound (1 + 2/eps)^d <= (base/eps)^d for all eps in (0, 1]  <=>  eps + 2 <= base on (0, 1]
    led = Ledger()
    # Step 5 (lines 1722-1735): a (1/(2n))-cover of P_l for f and for g gives ||h - h'|| <= |f - f'| + |g - g'| <=
    # 1/n on G_l, the cover's count (3/eps)^d squared at eps = 1/(2n) is (6n)^(2d), and the triangle inequality on
    # the empirical and the population mean adds 2 ||h - h'|| <= 2/n: the discretisation term 2/n
    n_, d_ = sp.symbols("n d", positive=True)
    disc_ok = both(led.identity("(3/eps)^d squared at eps = 1/(2n) is (6n)^(2d)",
                                ((sp.Integer(3) / (1 / (2 * n_))) ** d_) ** 2, rhs=(6 * n_) ** (2 * d_)),
                   led.identity("2 ||h - h'|| at ||h - h'|| = 2 eps = 1/n is 2/n", 2 * (2 / (2 * n_)), rhs=2 / n_))
    ok_set = sp.solve_univariate_inequality(1 + 2 / eps <= sp.Integer(base) / eps, eps, relational=False)
    i_step = len(led.rows)
    step_ok = led.subset("1 + 2/eps <= base/eps on (0, 1] (sympy solves the inequality; (0, 1] within its solution "
                         "set)", sp.Interval.Lopen(0, 1), ok_set)
    # the monomials x^i y^j, i, j <= l, are linearly independent: d = (l+1)^2 (exact rank over the rationals)
    from flint import fmpq, fmpq_mat

    rng = np.random.default_rng(0)
    ranks = {}
    for l in range(0, 5):
        pts = [(fmpq(int(a), 997), fmpq(int(b), 991)) for a, b in zip(rng.integers(1, 997, 60), rng.integers(1, 991, 60))]
        V = fmpq_mat([[x**i * y**j for i in range(l + 1) for j in range(l + 1)] for x, y in pts])
        ranks[l] = int(V.rank())
    i_dim = len(led.rows)
    dim_ok = both(*(led.check(f"rank of the monomial design at l = {l} = (l + 1)^2 (exact rational arithmetic)",
                              ranks[l], "==", (l + 1) ** 2) for l in ranks))
    ev = {"decided by": led.lines(), "1 + 2/eps <= base/eps on (0,1]": bool(step_ok), "solution set": str(ok_set),
          "Step 5's discretisation 2/n and count (6n)^(2d)": disc_ok,
          "rank of monomial design": ranks,
          "scope": "the lemma covers polynomials with sup norm <= 1; the main proof applies it to the clipped "
                   "class clip(beta' phi), whose sup-norm covering number is infinite (see main-bound)"}
    verdict = led.decide(None, [([i_step], Verdict.FAILS), (led.since(i_dim), Verdict.FAILS)])
    if verdict is not Verdict.HOLDS:
        return Result(verdict, "the volumetric step or the dimension is undecided or fails", ev) if step_ok and \
            dim_ok is not False else _covering_fail(verdict, step_ok, eps, base, ev)
    return Result(verdict, "1 + 2/eps <= 3/eps on (0, 1] (sympy); d = (l+1)^2 (rank); volumetric bound "
                           "standard", ev)


def _covering_fail(verdict, step_ok, eps, base, ev):
    if not step_ok:
        ev["counterexample"] = {"eps": 1, "1 + 2/eps": str((1 + 2 / eps).subs(eps, 1)),
                                f"{base}/eps": str((sp.Integer(base) / eps).subs(eps, 1))}
        return Result(verdict, f"(1 + 2/eps) <= {base}/eps fails at eps = 1", ev)
    return Result(verdict, "dimension of the monomial space is not (l+1)^2", ev)


# --------------------------------------------------------------------------------------------------------------------
def _aux1_arithmetic(c304, c406, c408, led=None):
    """The Bernstein-inequality arithmetic of Lemma aux-1, exactly; returns (ok, evidence), ok three-valued."""
    led = Ledger() if led is None else led
    mu = sp.symbols("mu", positive=True)
    denom = 2 * (32 * mu + 16 * mu + R(8, 3) * mu)  # 64 eps^2 <= 16 mu
    denom_ok = led.identity("2(32 + 16 + 8/3) mu = c304 mu", denom, rhs=sym(c304) * mu)
    expo = sp.simplify((mu / 2) ** 2 / denom)  # n (mu/2)^2 / denom = 3 n mu / 1216
    c1216 = 1 / sp.simplify(expo / mu)
    exp_ok = led.check("the exponent's constant 1216/3 <= c406", c1216, "<=", sym(c406))
    sum_ok = led.check("c408 = 2 + c406 (2/n from the net, c406/n from the tail)", sym(c408), "==",
                       2 + sym(c406))
    n = sp.symbols("n", positive=True)
    half_ok = led.identity("(mu - 2/n) - mu/2 = (mu - 4/n)/2", (mu - 2 / n) - mu / 2, rhs=(mu - 4 / n) / 2)
    ev = {"denominator 2(32+16+8/3) mu": str(denom), "equals c304 mu": denom_ok,
          "exponent constant (1216/3)": str(c1216), "1216/3 <= c406": exp_ok,
          "c408 == 2 + c406": sum_ok, "t >= mu/2 iff mu >= 4/n": half_ok}
    return both(denom_ok, exp_ok, sum_ok, half_ok), ev


@claim("aux-1", "Lemma 'aux-1' (App. C.5)",
       "E[h_fhat] <= 4 eps_l^2 + (406 d log(3n) + 408)/n, via Bernstein's inequality with denominator "
       "(304/3) mu and 1216/3 <= 406.",
       paper={"c304": R(304, 3), "c406": 406, "c408": 408}, wrong={"c304": R(304, 3), "c406": 300, "c408": 302})
def check_aux1(*, quick, c304, c406, c408):
    led = Ledger()
    ok, ev = _aux1_arithmetic(c304, c406, c408, led)
    # the lemma's own sub-steps
    f, g, Z = sp.symbols("f g Z", real=True)
    fs = sp.symbols("fstar", real=True)
    hf = (f - Z) ** 2 - (fs - Z) ** 2
    hg = (g - Z) ** 2 - (fs - Z) ** 2
    lip_ok = led.identity("h_f - h_g = (f - g)(f + g - 2Z)", hf - hg - (f - g) * (f + g - 2 * Z))
    ev["h_f - h_g = (f-g)(f+g-2Z)"] = lip_ok
    # lines 1437-1457: max{4/n, 4 eps^2, c406 (d log(3n) + u)/n} <= 4 eps^2 + c406 d log(3n)/n + c406 u/n: each entry
    # is at most the sum of the nonnegative terms, and 4/n <= c406 d log(3n)/n needs c406 log 3 >= 4 (d, n >= 1)
    max_ok = led.check("max{4/n, ...} <= the sum: 4 <= c406 log 3 (so 4/n <= c406 d log(3n)/n for d, n >= 1)",
                       sym(c406) * sp.log(3), ">=", 4)
    ev["max{4/n, 4 eps^2, c406 (d log 3n + u)/n} <= 4 eps^2 + c406 d log(3n)/n + c406 u/n"] = max_ok
    ok = both(ok, max_ok)
    ev["scope"] = "the union bound runs over a (1/n)-cover of P_l; for the clipped class it does not exist " \
                  "(see main-bound)"
    ev["decided by"] = led.lines()
    verdict = led.decide()
    if both(ok, lip_ok) is not True:
        return Result(verdict, "the Bernstein-inequality arithmetic does not give the stated constants", ev)
    return Result(verdict, "2(32+16+8/3) = 304/3, exponent 3n mu/1216, 1216/3 = 405.33 <= 406, "
                                 "408 = 2 + 406 (exact)", ev)


# --------------------------------------------------------------------------------------------------------------------
def _clipped_class_separated(K):
    """K clipped lines clip(4K (x - c_k) + 1/2), c_k = (k + 1/2)/K, on the grid x = i/(20K): pairwise sup distance,
    exactly (ten times each value is the integer clip(2i - 40k - 15, 0, 10)): no finite cover at eps < 1/2."""
    i = np.arange(20 * K + 1)
    F = np.clip(2 * i[None, :] - 40 * np.arange(K)[:, None] - 15, 0, 10)
    D = np.abs(F[:, None, :] - F[None, :, :]).max(axis=2)
    return Fraction(int(D[~np.eye(K, dtype=bool)].min()), 10)


def _ridge_clip_is_not_erm():
    """Data with eta = 1[x > 1/2] on the grid x = i/200: clip(least squares line) vs steeper clipped lines (the ERM
    over clipped lines has no minimiser: its infimum 0 is approached by ever steeper lines).  Exact rationals."""
    x = [Fraction(i, 200) for i in range(201)]
    z = [Fraction(int(xi > Fraction(1, 2))) for xi in x]
    n = len(x)
    sx, sz = sum(x), sum(z)
    sxx, sxz = sum(xi * xi for xi in x), sum(xi * zi for xi, zi in zip(x, z))
    slope = (n * sxz - sx * sz) / (n * sxx - sx * sx)
    icpt = (sz - slope * sx) / n

    def clip(v):
        return min(max(v, Fraction(0)), Fraction(1))

    risk_ls = sum((clip(icpt + slope * xi) - zi) ** 2 for xi, zi in zip(x, z)) / n
    risks = {K: sum((clip(K * (xi - Fraction(1, 2)) + Fraction(1, 2)) - zi) ** 2 for xi, zi in zip(x, z)) / n
             for K in (10, 100, 1000)}
    return risk_ls, risks


def threshold_table(variants, hs, led):
    """Per constant set and h: from which n the explicit bound is below 9/4 (non-vacuous) and below 0.1, with the
    degree rule and at the best degree for each n; each reported n certified (ball arithmetic: below the level
    there; with the rule, also not below it 1% lower)."""
    table = {}
    for h in hs:
        key = f"h=1/{round(1 / h)}"
        table[key] = {}
        for name, c in variants.items():
            row = {}
            for what, level in (("n_nonvacuous", CE2_RANGE), ("n_below_0.1", R(1, 10))):
                n_t = threshold_n(h, float(level), constants=c)
                row[what] = n_t
                led.check(f"{name}, {key}: the bound < {level} at n = {int(n_t):.3g} (degree rule)",
                          upper_bound_ball(int(n_t), h, constants=c), "<", sym(level))
                led.check(f"{name}, {key}: the bound >= {level} at n = {int(n_t / 1.01):.3g} (degree rule)",
                          upper_bound_ball(int(n_t / 1.01), h, constants=c), ">=", sym(level))
                n_b, l_b = threshold_best(h, float(level), constants=c)
                row[what + " (best degree)"] = n_b
                row[what + " (best degree): l"] = l_b
                led.check(f"{name}, {key}: the bound < {level} at n = {int(n_b):.3g}, degree {l_b}",
                          upper_bound_ball(int(n_b), h, l_b, constants=c), "<", sym(level))
                if c.strip != 1:  # the repaired strip's own degree rule (theta of the strip): apart, labelled
                    cs = replace(c, rule="strip")
                    n_s = threshold_n(h, float(level), constants=cs)
                    row[what + " (the strip's own degree rule)"] = n_s
                    led.check(f"{name}, {key}: the bound < {level} at n = {int(n_s):.3g} (the strip's own degree rule)",
                              upper_bound_ball(int(n_s), h, constants=cs), "<", sym(level))
            table[key][name] = row
    return table


STRIP_RULE = "n_nonvacuous (the strip's own degree rule)"


def format_thresholds(table):
    """The threshold table as text, one line per h and constant set: non-vacuous from n with the degree rule, and
    at the best degree (with that degree)."""
    lines = []
    for key, rows in table.items():
        for name, row in rows.items():
            strip = row.get("n_nonvacuous (the strip's own degree rule)")
            lines.append(f"{key}, {name}: below 9/4 from n = {row['n_nonvacuous']:.3g} (the paper's degree rule), "
                         f"{row['n_nonvacuous (best degree)']:.3g} (degree {row['n_nonvacuous (best degree): l']})"
                         + (f", {strip:.3g} (the strip's own degree rule)" if strip else "") +
                         f"; below 0.1 from {row['n_below_0.1']:.3g}, {row['n_below_0.1 (best degree)']:.3g}")
    return lines


@claim("main-bound", "Proposition 'main' (Eq. (rate)), proof App. C.6 Steps 1-5",
       "E|CE2-hat - CE2^pert| <= 2(5 B^2 n^-4 + (406 (l+1)^2 log 3n + 408)/n)^(1/2) + 2/n + t* + 1/(n t*) = "
       "O(log^{3/2} n / sqrt n), for the estimator Eq. (cehat).",
       paper={"c406": 406, "c408": 408, "hoeffding": R(1, 2)}, wrong={"c406": 406, "c408": 408, "hoeffding": 1})
def check_main_bound(*, quick, c406, c408, hoeffding):
    checks, numbers = {}, {}
    led = Ledger()
    f, fs, eta = sp.symbols("f fstar eta", real=True)
    # Step 2(a): E[h_f | S] = (f - f*)(f + f* - 2 eta) = (f - eta)^2 - (f* - eta)^2
    checks["2a identity"] = led.identity("Step 2(a): (f - f*)(f + f* - 2 eta) = (f - eta)^2 - (f* - eta)^2",
                                         (f - fs) * (f + fs - 2 * eta) - ((f - eta) ** 2 - (fs - eta) ** 2))
    # Step 2(b): |h_f| <= 4 (in fact <= 2): a ball enclosure over the box f, f* in [0,1], for Z = 0 and Z = 1
    from flint import arb

    box = arb(0.5, 0.5)
    f_box = fs_box = box  # independent variables: ball arithmetic encloses each operation separately
    encl = [abs((f_box - z) * (f_box - z) - (fs_box - z) * (fs_box - z)) for z in (0, 1)]
    numbers["2b max |h_f|"] = max(float(e.upper()) for e in encl)
    checks["2b |h_f| <= 4"] = both(*(led.check(f"Step 2(b): |h_f| <= 4 on the box, Z = {z} (ball enclosure)",
                                               e, "<=", 4) for z, e in zip((0, 1), encl)))
    # Step 2(c): ||f - f*||^2 <= 2||f - eta||^2 + 2||f* - eta||^2 with ||f - eta||^2 = Eh + L2, L2 <= eps^2, then
    # h^2 <= 16 (f - f*)^2: E h^2 <= 16 (2 Eh + 4 eps^2) = 32 Eh + 64 eps^2
    H, e2, L = sp.symbols("Eh eps2 L2", nonnegative=True)
    norm_bound = (2 * (H + L) + 2 * L).subs(L, e2)
    checks["2c ||f-f*||^2 <= 2 Eh + 4 eps^2"] = led.identity("Step 2(c): 2(Eh + eps^2) + 2 eps^2 = 2 Eh + 4 eps^2",
                                                             norm_bound, rhs=2 * H + 4 * e2)
    checks["2c E h^2 <= 32 Eh + 64 eps^2"] = led.identity("Step 2(c): 16 (2 Eh + 4 eps^2) = 32 Eh + 64 eps^2",
                                                          16 * norm_bound, rhs=32 * H + 64 * e2)
    # Steps 3-4 and the final form rest on aux-1's arithmetic
    checks["aux-1 arithmetic"], ev_aux = _aux1_arithmetic(R(304, 3), c406, c408, led)
    # Step 5: Hoeffding for [0, 2]-valued summands: P(|mean - E| > t) <= 2 exp(-2 n t^2 / 2^2) = 2 exp(-n t^2 / 2)
    n, t, d = sp.symbols("n t d", positive=True)
    checks["Hoeffding exponent n t^2/2"] = led.identity("Step 5: Hoeffding's exponent 2 n t^2 / 2^2 = the stated one",
                                                        2 * n * t**2 / 4, rhs=sym(hoeffding) * n * t**2)
    tstar2 = sp.solve(sp.Eq(sp.log(2) + 2 * d * sp.log(6 * n) - n * t**2 / 2, 0), t)
    checks["t* solves 2(6n)^(2d) e^(-n t^2/2) = 1"] = led.identity(
        "Step 5: t* solves 2 (6n)^(2d) exp(-n t^2/2) = 1: sympy's positive root, squared, is (4 d log(6n) + 2 log 2)/n",
        tstar2[0] ** 2 if len(tstar2) == 1 else sp.Integer(len(tstar2)), rhs=(4 * d * sp.log(6 * n) + 2 * sp.log(2)) / n)
    ts = sp.symbols("tstar", positive=True)
    tail = sp.integrate(t * sp.exp(-n * t**2 / 2), (t, ts, sp.oo)) / ts
    checks["tail integral"] = led.identity("Step 5: the tail integral", tail, rhs=sp.exp(-n * ts**2 / 2) / (n * ts))
    steps = {**checks, **numbers}
    step_rows = led.since(0)
    if both(*checks.values()) is not True:
        bad = [k for k, v in checks.items() if v is not True]
        return Result(led.decide(None, [(step_rows, Verdict.FAILS)]),
                      f"step(s) fail or undecided: {', '.join(bad)}",
                      {"steps": steps, "aux-1": ev_aux, "decided by": led.lines()})
    # does the proof cover the estimator that is computed?
    sep = _clipped_class_separated(50)
    risk_ls, risks = _ridge_clip_is_not_erm()
    i_cover = len(led.rows)
    led.check("50 clipped lines are pairwise >= 1 apart (so no finite eps < 1/2 cover)", sep, ">=", 1)
    led.check("clip(LS) is not the ERM: its risk exceeds a steeper clipped line's", risk_ls, ">", risks[1000])
    coverage = {
        "clipped class covering": f"50 clipped lines clip(200 (x - c_k) + 1/2) are pairwise {sep} apart in sup "
                                  "norm (any number K works the same): N(eps, F_l) is infinite for eps < 1/2, so the "
                                  "union bounds of aux-1 and Step 5 (which use Lemma covering, valid for P_l, the "
                                  "sup-norm ball of polynomials) do not apply to F_l = {clip(beta' phi)}",
        "estimator": "Eq. (erm1)-(erm2) minimise over F_l (clipped polynomials); what is computed (App. Exp. 1, "
                     "socal) is ridge least squares on the polynomial, then clipping",
        "clip(LS) empirical risk": float(risk_ls), "steeper clipped lines' risks": {k: float(v) for k, v in risks.items()},
        "reading": "on eta = 1[x > 1/2] the clipped least-squares line has risk "
                   f"{float(risk_ls):.3f} while clipped lines reach {float(risks[1000]):.4f}: clip(LS) is not the ERM, and the ERM "
                   "over F_l need not exist (its infimum is not attained), so 'P_n h_fhat <= 0' is not available "
                   "for the computed estimator"}
    # the steps that fail as stated are claims of their own; their verdicts are this claim's parts, and their
    # certified sharp values (with witnesses) are the constants the corrected bound uses
    name = ("Steps 1-5: each inequality with the constants as used (2(a)-(c), aux-1's arithmetic, Hoeffding, t*, the "
            "tail integral)")
    parts = [Part(name, led.decide(name, [(step_rows, Verdict.FAILS)]), "each checks (sympy, exact)")]
    sharp, unit, _ = certified_constants(quick)
    for cid, name in (("step5-range", "Step 5: the summands lie in [0, 2]"),
                      ("aux-lipschitz", "aux-1: |h_f - h_g| <= 2 |f - g|")):
        sub = REGISTRY[cid].run(quick=quick)
        parts.append(Part(f"{name} ({cid})", led.same_as(f"{name} ({cid})", cid, sub.verdict), sub.summary))
    variants = constant_sets(sharp, unit)
    corrected = variants["sharp (P_l)"]
    # how the explicit bound reads at practical n
    hs = (1 / 16, 1 / 64)
    table = {f"h=1/{round(1 / h)}": {f"n=1e{k}": round(upper_bound(10.0**k, h), 3) for k in (3, 4, 5, 6, 9)}
             for h in hs}
    thresholds = threshold_table(variants, hs, led)
    ev = {"steps": steps, "aux-1": ev_aux, "coverage_of_computed_estimator": coverage, "bound_at_n": table,
          "thresholds": thresholds,
          "threshold table": format_thresholds(thresholds),
          "constants": {name: {"Step 2(b) H": str(c.h_max), "Step 2(c) V": str(c.bernstein),
                               "aux-1 Lipschitz L": str(c.lipschitz), "Step 5 range R": str(c.step5_range),
                               "aux-1 exponent C = 24 V + 16 H/3": str(c.c406), "C + L": str(c.c408),
                               "theta": ("theta(s h), s chosen per degree (the degree rule: the paper's theta(h))"
                                         if c.strip == "best"
                                         else "theta(h)" if c.strip == 1 else f"theta({c.strip} h)"),
                               "B": {"paper": "2/(theta - 1)",
                                     "separate": "2 M(s)/(theta - 1) + (2l + 1) 2 M(s)/(theta_var - 1) "
                                                 "(theta/theta_var)^l, M(s) sharp",
                                     "square": f"4 sqrt({c.m_sq}) (theta + 1)/(theta - 1)^2"}[c.tensor]}
                        for name, c in variants.items()},
          "sharp constants": f"certified with witnesses by step2-constants (H = {sharp['h_max']}, V = "
                             f"{sharp['bernstein']}), aux-lipschitz (L = {sharp['lipschitz']}) and step5-range (R = "
                             f"{sharp['step5_range']}); the corrected bound still assumes the covering argument "
                             "repaired (the part below)",
          "vacuous_note": "CE2^pert lies in [0, 9/4] (v~ = m~^2 + var~ reaches 5/4 on R, since a perturbed var~ may "
                          "exceed m~(1 - m~)): the bound says nothing below n_nonvacuous",
          "readings": READINGS}
    name = "the union bounds cover the estimator (Lemma covering, for P_l, applied to F_l; 'P_n h_fhat <= 0')"
    parts.append(Part(name, led.decide(name, [([i_cover, i_cover + 1], Verdict.FAILS, "true")]),
                      f"N(eps, F_l) is infinite for eps < 1/2 (50 clipped lines pairwise {sep} apart, "
                      f"exact), and clip(LS) is not the ERM over F_l (risk {float(risk_ls):.3f} against "
                      f"{float(risks[1000]):.4f}, exact)"))
    ev["decided by"] = led.lines()
    th16 = thresholds["h=1/16"]
    n16 = th16["paper"]["n_nonvacuous"]
    rep16 = th16["sharp + repaired approximation"]
    # the conclusion's verdict, from rows: the argument establishes it only if its steps hold with the constants it
    # uses.  Step 5's Hoeffding exponent 2 n t^2 / R^2 = hoeffding n t^2 assumes summands of range R^2 = 2 /
    # hoeffding; aux-1 uses the Lipschitz factor 2; each against the value step5-range and aux-lipschitz certify
    # with witnesses on P_l.  And the union bounds must cover the computed estimator (the two rows above, which are
    # witnesses that they do not).  Where the argument breaks, the conclusion is GAP (not refuted: main-bound-mc)
    i_used = len(led.rows)
    led.check("Step 5: the range the Hoeffding exponent assumes, R^2 = 2 / hoeffding, covers the certified range of "
              "the summands on P_l (step5-range), squared", 2 / sym(hoeffding), ">=", sharp["step5_range"] ** 2)
    used = REGISTRY["aux-lipschitz"].paper["factor"]  # the factor the paper's aux-1 states
    led.check(f"aux-1: the Lipschitz factor the lemma uses, {used}, covers the certified sup |f + g - 2Z| on P_l "
              "(aux-lipschitz)", used, ">=", sharp["lipschitz"])
    name = "the rate E|CE2-hat - CE2^pert| = O(log^{3/2} n / sqrt n) for the computed estimator"
    concl_v = led.decide(name, [([i_used, i_used + 1], Verdict.GAP), ([i_cover, i_cover + 1], Verdict.GAP, "true")])
    parts.append(Part(name, concl_v, (
                      f"not refuted (main-bound-mc: observed errors far below it) and not established by "
                      f"the argument (the parts above); the explicit bound exceeds CE2's range 9/4 below "
                      f"n = {n16:.3g} (h = 1/16, the degree rule); with the audit's sharp constants (C = "
                      f"{corrected.c406}, C + L = {corrected.c408}, R = {corrected.step5_range}) below "
                      f"n = {th16['sharp (P_l)']['n_nonvacuous']:.3g}, and with the repaired approximation step too, "
                      f"below n = {rep16['n_nonvacuous']:.3g} (the paper's degree rule; "
                      f"{rep16[STRIP_RULE]:.3g} with the strip's own rule, theta(h/2)), or "
                      f"{rep16['n_nonvacuous (best degree)']:.3g} at the "
                      f"best degree ({rep16['n_nonvacuous (best degree): l']}). Below 9/4 from n, the paper's degree "
                      f"rule / best degree: " + "; ".join(
                          f"{key}: " + ", ".join(f"{name} {row['n_nonvacuous']:.3g} / {row['n_nonvacuous (best degree)']:.3g}"
                                                 for name, row in rows.items())
                          for key, rows in thresholds.items())) if concl_v is Verdict.GAP else
                      f"{concl_v.value}: the steps hold with the constants the argument uses and the union bounds "
                      "cover the estimator", role="conclusion"))
    failing = [f"{p.name.split(' (')[0]} {p.verdict.value}" for p in parts[1:-1] if p.verdict is not Verdict.HOLDS]
    return Result(combine(parts), "the inequalities of Steps 1-5 check with the constants as used, but the argument "
                                  "does not establish the rate for the computed estimator: " + "; ".join(failing)
                  + f". The conclusion is not refuted; its explicit form is vacuous below n = {n16:.3g} (h = 1/16; "
                  f"{th16['sharp (P_l)']['n_nonvacuous']:.3g} with the audit's sharp constants, "
                  f"{rep16['n_nonvacuous']:.3g} with the repaired approximation too, and "
                  f"{rep16['n_nonvacuous (best degree)']:.3g} with it at the best degree, "
                  f"{rep16['n_nonvacuous (best degree): l']})",
                  ev, parts=parts,
                  repair="prove the bound for the ridge-then-clip estimator (a covering of the unclipped polynomial "
                         "class, then clipping, which is 1-Lipschitz), with Step 5's range 9/4 and aux-1's "
                         "Lipschitz factor on P_l's values")


# --------------------------------------------------------------------------------------------------------------------
@claim("dominance", "Lemma 'dom' (App. E.3)",
       "For m0 = 1 and every h > 0, F_m~(p) <= p on [0, 1]: m~ stochastically dominates U[0, 1].",
       paper={"centre": 1.0}, wrong={"centre": 0.0})
def check_dominance(*, quick, centre):
    x = sp.symbols("x", real=True)
    G = 2 * sp.atan(sp.tanh(x / 2))  # G(x) = int_0^x sech
    led = Ledger()
    g1 = led.identity("G' = sech", (sp.diff(G, x) - sp.sech(x)).rewrite(sp.exp))
    g2 = led.identity("G'' = -sech tanh", (sp.diff(G, x, 2) + sp.sech(x) * sp.tanh(x)).rewrite(sp.exp))
    # App. E's closed form F(p) = 1 - G((1 - p)/h)/G(1/h) follows from G' = sech and G odd
    led.identity("G is odd: G(-x) + G(x) = 0 (App. E: F(p) = 1 - G((1-p)/h)/G(1/h))", G.subs(x, -x), rhs=-G)
    # F(p) = (G_h(p) - G_h(0)) / (G_h(1) - G_h(0)), G_h(t) = 2h atan(tanh((t - c)/(2h))): in ball arithmetic on the
    # grid's interior (F(0) = 0 and F(1) = 1 by construction: the ends are ties, decided exactly)
    from flint import arb, ctx

    p = np.linspace(0, 1, 2001)
    worst_excess, where, items = -np.inf, None, []
    old = ctx.prec
    ctx.prec = 128
    try:
        for h in (1.0, 0.25, 1 / 16, 1 / 64, 1 / 256, 1 / 1024):
            excess = SechKernel(h).cdf(p, centre) - p
            i = int(np.argmax(excess))
            if excess[i] > worst_excess:
                worst_excess, where = float(excess[i]), {"h": h, "p": float(p[i])}
            hb, cb = arb(1) / arb(round(1 / h)), arb(centre)

            def Gh(t):
                return 2 * hb * ((t - cb) / (2 * hb)).tanh().atan()

            g0, g1b = Gh(arb(0)), Gh(arb(1))
            for k in range(1, 2000):
                pk = arb(k) / 2000
                items.append(((Gh(pk) - g0) / (g1b - g0), "<=", pk, None, None))
    finally:
        ctx.prec = old
    grid_ok = led.all_true(f"F(p) <= p at the {len(items)} interior grid points (6 bandwidths, balls)", items)
    ev = {"G' = sech (sympy)": g1, "G'' = -sech tanh (sympy)": g2,
          "max over h, p of F(p) - p": worst_excess, "at": where, "decided by": led.lines()}
    verdict = led.decide(None, [([0, 1, 3], Verdict.FAILS)])
    if grid_ok is False:
        ev["counterexample"] = where
        return Result(verdict, f"F(p) > p by {worst_excess:.3g} at h={where['h']:g}, p={where['p']:.3f} "
                                     f"(certified)", ev)
    if both(g1, g2, grid_ok) is not True:
        return Result(verdict, "the concavity computation fails or a grid point is undecided", ev)
    return Result(verdict, "G concave on [0, inf) (sympy: G'' = -sech tanh); F(p) <= p certified at 1999 "
                                 "interior grid points for each h from 1 to 1/1024", ev)


# --------------------------------------------------------------------------------------------------------------------
def family_constant(h=1 / 16, p0=1 / 16):
    """The sharpest c the two-point family {p0, p0 + eps} certifies: lim_n max_eps (minimax risk) sqrt(n).

    As n grows with eps = t / sqrt(n), the label sum T ~ Binomial(2n, p_b) is normal with separation
    delta = sqrt 2 t / s, s = sqrt(p0 (1 - p0)); the Bayes risk at the prior 1/2 is Delta Phi(-delta/2) with
    Delta = g eps, g = |dCE2^pert/dp| at p0.  So risk sqrt(n) -> g t Phi(-t / (sqrt 2 s)), maximised at
    t = sqrt 2 s u*, u* the root of Phi(-u) = u phi(u): c_inf = g sqrt 2 s u* Phi(-u*).  Returns (c_inf, its error
    bound, g, u*, the witness eps sqrt(n))."""
    from mpmath import mp, findroot, ncdf, npdf

    mp.dps = 30
    u = findroot(lambda x: ncdf(-x) - x * npdf(x), 0.75)
    mu = float(u * ncdf(-u))
    e = 1e-4  # central difference: O(e^2) truncation, and the quadrature's 1e-9 / e
    g = abs(ce_two_point(p0 + e, h) - ce_two_point(p0 - e, h)) / (2 * e)
    s = math.sqrt(p0 * (1 - p0))
    c_inf = g * math.sqrt(2) * s * mu
    return c_inf, 2e-5 * math.sqrt(2) * s * mu, g, float(u), math.sqrt(2) * s * float(u)


@claim("lower-bound", "Proposition 'lb', proof App. E",
       "max_b E|CE2-hat - CE2^pert(P_b)| >= c/sqrt(n), c = 1/(48 sqrt 2), via the 9/16 gap, KL <= 18 eps^2, "
       "Pinsker and Le Cam's two-point lemma with eps = 1/(6 sqrt(2n)).",
       paper={"c": 1 / (48 * sp.sqrt(2)), "kl": 18, "gap": R(9, 16)},
       wrong={"c": 2 / (48 * sp.sqrt(2)), "kl": 18, "gap": R(9, 16)})
def check_lower_bound(*, quick, c, kl, gap):
    eps, n = sp.symbols("epsilon n", positive=True)
    p0 = R(1, 16)
    ev, ok = {}, []
    led = Ledger()
    # the gap: phi drops by >= eps (1 - p0 - p1) >= 13 eps/16, psi moves by <= 2 p1 eps <= eps/4
    derived_gap = (1 - p0 - R(1, 8)) - 2 * R(1, 8)
    ev["gap 13/16 - 1/4"] = str(derived_gap)
    ok.append(both(led.check("the derived gap 13/16 - 1/4 >= the stated gap", derived_gap, ">=", sym(gap)),
                   led.check("the stated gap >= 1/2 (as the proof uses)", sym(gap), ">=", R(1, 2))))
    # numeric: the actual gap at a few (h, eps)
    num = []
    for h in ((1 / 16,) if quick else (1 / 4, 1 / 16, 1 / 64)):
        for e in (1 / 16, 1 / 100):
            d = ce_two_point(1 / 16, h) - ce_two_point(1 / 16 + e, h)
            num.append({"h": h, "eps": e, "gap/eps": d / e})
    ev["numeric gap / eps"] = num
    # ce_two_point is quadrature (absolute error <= 1e-9, generously): gap/eps carries 2e-9/eps
    ok.append(led.all_true("the computed gap / eps >= the stated gap (quadrature error 2e-9 / eps)",
                           [(r["gap/eps"], ">=", sym(gap), 2e-9 / r["eps"], None) for r in num]))
    # KL(Bern(p0)||Bern(p1)) <= (p1 - p0)^2 / (p1 (1 - p1)) <= kl eps^2 needs p1 (1 - p1) >= 1/kl on [1/16, 1/8]
    pmin = min(p0 * (1 - p0), R(1, 8) * (1 - R(1, 8)))
    ev["min p1(1-p1) on [1/16, 1/8]"] = str(pmin)
    ok.append(led.check("min p1 (1 - p1) on [1/16, 1/8] >= 1/kl (so KL <= kl eps^2)", pmin, ">=",
                        1 / sym(kl)))
    # Pinsker: TV <= sqrt(2 n kl eps^2 / 2) = eps sqrt(kl n); with eps = 1/(6 sqrt(2n)): TV <= 1/2 iff kl <= 72
    tv = sp.sqrt(2 * n * sym(kl) * eps**2 / 2).subs(eps, 1 / (6 * sp.sqrt(2 * n)))
    ev["TV bound at eps = 1/(6 sqrt(2n))"] = str(sp.simplify(tv))
    ok.append(led.check("Pinsker: TV <= 1/2 at eps = 1/(6 sqrt(2n))", sp.simplify(tv), "<=", R(1, 2)))
    # Le Cam: max risk >= (1/2) * gap eps * (1 - TV); with gap >= 1/2 (as the proof uses) and TV <= 1/2
    derived_c = sp.simplify(R(1, 2) * R(1, 2) * (1 - R(1, 2)) / (6 * sp.sqrt(2)))
    ev["derived c (n >= 4)"] = str(derived_c)
    ev["claimed c"] = str(sym(c))
    ok.append(led.check("the stated c <= the derived c", sym(c), "<=", derived_c))
    # eps <= 1/16 (needed for the gap) iff n >= 4
    n4 = min(k for k in range(1, 100) if bool(1 / (6 * sp.sqrt(2 * k)) <= R(1, 16)))  # exact (sympy)
    ev["smallest n with eps <= 1/16"] = n4
    # Le Cam's form (App. E.4): the two-point risk at the prior 1/2 is (1/2) Delta (1 - TV) exactly, so the minimax
    # risk (a maximum over priors, 1/2 on the grid) is at least that; checked on the family with binomial TV
    from .transport import binom_pmf

    lecam = []
    for k in (4, 16):
        e = 1 / (6 * math.sqrt(2 * k))
        risk, dlt = two_point_minimax(k, e, 1 / 16)
        tv = 0.5 * float(np.abs(binom_pmf(2 * k, 1 / 16) - binom_pmf(2 * k, 1 / 16 + e)).sum())
        lecam.append((risk, ">=", 0.5 * dlt * (1 - tv), 1e-12, 1e-12))
    ev["Le Cam's form at n = 4, 16: (risk, (1/2) Delta (1 - TV))"] = [[r[0], r[2]] for r in lecam]
    ok.append(led.all_true("Le Cam's form: minimax two-point risk >= (1/2) Delta (1 - TV) at n = 4, 16", lecam))
    # n in {1, 2, 3}: eps = 1/16 instead; the same argument with the 9/16 gap gives
    small = {k: float(R(1, 2) * R(9, 16) * R(1, 16) * (1 - 3 * R(1, 16) * sp.sqrt(2 * k)) * sp.sqrt(k))
             for k in (1, 2, 3)}
    ev["c from the argument at n = 1, 2, 3 (eps = 1/16, gap 9/16)"] = small
    ev["valid for all n >= 1"] = min(min(small.values()), float(derived_c))
    argument_rows = led.since(0)
    if both(*ok) is not True:
        ev["decided by"] = led.lines()
        return Result(led.decide(None, [(argument_rows, Verdict.FAILS)]),
                      "a step of the lower-bound argument does not give the stated constant", ev)
    # n = 1, 2, 3 (eps = 1/(6 sqrt(2n)) > 1/16, outside the argument): the exact two-point minimax risk instead
    c_val = float(sym(c))
    eps_grid = np.geomspace(1e-3, 1 / 16, 25)
    exact_small = {k: max(two_point_minimax(k, e, 1 / 16)[0] for e in eps_grid) for k in (1, 2, 3)}
    ev["exact two-point minimax risk at n = 1, 2, 3 (h = 1/16)"] = exact_small
    ev["c/sqrt(n) at n = 1, 2, 3"] = {k: c_val / math.sqrt(k) for k in (1, 2, 3)}
    # the risk is a grid maximum over priors (a lower bound on the maximum) of sums of binomial probabilities times
    # a quadrature difference (error <= 2e-9): it carries 1e-8
    i_small = len(led.rows)
    small_ok = led.all_true("the exact two-point minimax risk >= c/sqrt(n) at n = 1, 2, 3",
                            [(exact_small[k], ">=", sym(c) / sp.sqrt(k), 1e-8, None) for k in (1, 2, 3)])
    # the sharpest c the family certifies: the limit of max_eps risk sqrt(n), approached from above
    c_inf, c_err, g, u_star, t_star = family_constant()
    # a grid maximum is a lower bound on the maximum over eps, so "> c_inf" on the grid is certified for the maximum
    grid = np.geomspace(1 / 32, 1 / 4, 6) if quick else np.geomspace(1 / 128, 0.45, 14)
    n_sh = (4, 16) if quick else (1, 2, 3, 4, 8, 16, 64, 256)
    above = {k: max(two_point_minimax(k, e, 1 / 16)[0] for e in grid) * math.sqrt(k) for k in n_sh}
    sharp_ok = led.all_true(f"max_eps risk sqrt(n) > c_inf at n = {', '.join(map(str, n_sh))} (quadrature 1e-8)",
                            [(v, ">", c_inf, 1e-8, c_err) for v in above.values()])
    led.check("c_inf > the stated c (the stated c is loose)", c_inf, ">", sym(c), lhs_err=c_err)
    ev["sharp"] = {"c": c_inf, "error bound": c_err, "witness": f"the limit n -> oo with eps = {t_star:.4f}/sqrt(n) "
                   f"(u* = {u_star:.6f} solves Phi(-u) = u phi(u); g = |dCE2/dp|(1/16) = {g:.6f}, h = 1/16)",
                   "max_eps risk sqrt(n) at n": above,
                   "reading": "no c above c_inf holds for all n on this family (risk sqrt(n) tends to c_inf); at "
                              "every n computed the family's risk sqrt(n) is above c_inf and decreasing, so c_inf is "
                              "the sharpest constant the family certifies, attained in the limit; a larger c would "
                              "need another family"}
    ev["decided by"] = led.lines()
    names = (f"Le Cam's argument for n >= {n4} (gap 9/16, KL <= {kl} eps^2, TV <= 1/2)",
             "n = 1, 2, 3 (eps > 1/16: outside the argument; the paper calls them trivial)",
             "every estimator's worst-case risk >= c/sqrt(n) for all n >= 1")
    parts = [Part(names[0], led.decide(names[0], [(argument_rows, Verdict.FAILS)]),
                  f"each step checks exactly and gives c = {derived_c} >= the stated {sym(c)}"),
             # true (the exact risk shows it) but not established by the paper's argument, which needs n >= 4:
             # a GAP by the legend
             Part(names[1], led.decide(names[1], [([i_small], Verdict.FAILS), ([i_small], Verdict.GAP, "true")]),
                  "the exact two-point minimax risk at h = 1/16 ("
                  + ", ".join(f"{exact_small[k]:.4f}" for k in (1, 2, 3))
                  + ") is >= c/sqrt(n) (" + ", ".join(f"{c_val / math.sqrt(k):.4f}" for k in (1, 2, 3))
                  + f"), so the statement is true there, but the paper's argument does not reach n < 4 (it gives only "
                  f"c = {ev['valid for all n >= 1']:.4f} there) and calls the cases trivial without a proof"),
             Part(names[2], led.decide(names[2], [([i_small], Verdict.FAILS)]),
                  "for n >= 4 by the argument, for n < 4 by the "
                  f"exact risk; the constant is loose: the family itself gives c = {c_inf:.4f} "
                  f"({c_inf / float(sym(c)):.2f}x, the limit n -> oo; above it at every n computed"
                  + (")" if sharp_ok else ", not certified at every n)"), role="conclusion")]
    return Result(combine(parts), f"Le Cam's argument checks for n >= {n4} (c = 1/(48 sqrt 2) exactly); at "
                                  f"n = 1, 2, 3, where it does not apply, the exact two-point risk is above "
                                  f"c/sqrt(n); c is loose: the family itself gives c = {c_inf:.4f} (h = 1/16, the "
                                  f"limit n -> oo)" if small_ok else "the exact two-point risk is below c/sqrt(n) at "
                                  "some n < 4", ev, parts=parts)


# --------------------------------------------------------------------------------------------------------------------
PRACTICAL_N = 10**7  # the most labelled 2-snapshots we take a user to have


@claim("main-bound-explicit", "Proposition 'main', the explicit bound of Steps 4-5 (App. C.6)",
       "The explicit bound 2 sqrt(5 B^2/n^4 + (406 d log 3n + 408)/n) + 2/n + t* + 1/(n t*) with l from the "
       "degree rule gives a usable guarantee on E|CE2-hat - CE2^pert|.",
       paper={"tstar_sq": "(4*d*log(6*n) + 2*log(2))/n"}, wrong={"tstar_sq": "(2*d*log(6*n) + 2*log(2))/n"})
def check_main_bound_explicit(*, quick, tstar_sq):
    n, d = sp.symbols("n d", positive=True)
    ts2 = sp.sympify(tstar_sq, locals={"n": n, "d": d})
    # t* must solve 2 (6n)^(2d) exp(-n t*^2/2) = 1
    defining = sp.simplify(sp.log(2) + 2 * d * sp.log(6 * n) - n * ts2 / 2)
    led = Ledger()
    solves = led.identity("t* solves 2 (6n)^(2d) exp(-n t*^2/2) = 1 (its log)", n * ts2 / 2,
                          rhs=sp.log(2) + 2 * d * sp.log(6 * n))
    ev = {"t*^2": tstar_sq, "log of defining equation at t*": str(defining)}
    if solves is not True:
        ev["decided by"] = led.lines()
        verdict = led.decide(None, [([0], Verdict.FAILS)])
        ev["counterexample"] = {"n": 1000, "d": 100,
                                "2(6n)^(2d) exp(-n t*^2/2)": str(sp.N(sp.exp(defining.subs({n: 1000, d: 100}))))}
        return Result(verdict, "t* does not solve its defining equation", ev)
    hs = (1 / 16, 1 / 64)
    ev["bound at n"] = {f"h=1/{round(1 / h)}": {f"n=1e{k}": upper_bound(10.0**k, h) for k in (3, 4, 5, 6, 7)}
                        for h in hs}
    ev["n_nonvacuous (bound < 9/4)"] = {f"h=1/{round(1 / h)}": threshold_n(h, CE2_RANGE) for h in hs}
    ev["n_below_0.1"] = {f"h=1/{round(1 / h)}": threshold_n(h, 0.1) for h in hs}
    ev["practical n"] = PRACTICAL_N
    h_at, smallest = min(ev["n_nonvacuous (bound < 9/4)"].items(), key=lambda kv: kv[1])  # the h it is at, and n
    ns = [10**k for k in range(1, 8)] + [PRACTICAL_N]
    vac = led.all_true("the bound > 9/4 at n = 10, ..., 1e7 and h = 1/16, 1/64 (ball arithmetic)",
                       [(upper_bound_ball(n_, h), ">", R(9, 4), None, None) for h in hs for n_ in ns])
    ev["decided by"] = led.lines()
    verdict = led.decide(None, [([0], Verdict.FAILS), ([1], Verdict.VACUOUS, "true")])
    if vac is None:
        return Result(verdict, "the bound's comparison with 9/4 could not be certified", ev)
    if vac:
        return Result(verdict, f"true as an inequality, but above 9/4 (CE2's whole range on R) until n = "
                                       f"{smallest:.3g} ({h_at.replace('=', ' = ')}, the earlier of h = 1/16 and "
                                       f"1/64); at n = 1e6 it "
                                       f"is {upper_bound(1e6, 1 / 16):.1f} (h = 1/16)", ev)
    return Result(verdict, f"informative from n = {smallest:.3g} ({h_at.replace('=', ' = ')}; below 9/4 at some n "
                           "<= 1e7)", ev)
