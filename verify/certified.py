"""Certified comparisons: the only way a number may decide a verdict.

A check records every comparison that decides HOLDS, FAILS, GAP or VACUOUS in a :class:`Ledger`.  Each side of a
comparison is one of

* an exact number (``int``, :class:`fractions.Fraction`, a sympy rational or a sympy expression free of symbols):
  compared exactly (a sympy irrational through a 60-digit evaluation whose error sympy controls);
* a python-flint ``arb`` ball (ball arithmetic: the true value lies in the ball);
* a float or mpmath number **with the error bound it carries** (``err=``): the ball ``[x - err, x + err]``.

A float without an error bound is refused (``TypeError``): a float cannot decide.  The comparison is True or False
only when it holds for every value in the balls; otherwise it is undecided (``None``), and a check whose verdict
rests on an undecided comparison says INCONCLUSIVE.  So a constant 1e-12 away from a computed value flips a verdict
only where an exact computation or a certified ball puts it on the other side, never by round-off.

Statistical decisions (a Monte Carlo test at a stated family level) are recorded as such (:meth:`Ledger.statistical`):
they carry their own error, the test's level.
"""

from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
import numpy as np
import sympy as sp
from flint import arb, ctx, fmpq

__all__ = ["Decision", "Ledger", "ball", "compare", "exact", "both", "rule_verdict", "HOW"]

PREC = 212  # bits of the balls built here (64 decimal digits)
HOW = ("exact", "ball", "error bound", "statistical")
_OPS = ("<", "<=", ">", ">=", "==", "!=")


def exact(x):
    """``x`` as a Fraction when it is an exact rational (int, Fraction, sympy Rational or an integer-valued bool is
    refused); otherwise None."""
    if isinstance(x, bool):
        raise TypeError("a bool is not a number to compare")
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, Fraction):
        return x
    if isinstance(x, sp.Basic) and x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    return None


def sym(x):
    """A claim's parameter as an exact sympy number, without simplification.

    ``sympy.nsimplify`` is a heuristic: it returns 3/2 for 3/2 (1 - 1e-12), erasing the very perturbation a negative
    control feeds in.  Here ints, Fractions and sympy numbers stay as they are; a float becomes the rational its
    shortest repr writes (0.5 -> 1/2, 1.5000000000015 -> 3000000000003/2000000000000); strings are parsed."""
    if isinstance(x, bool):
        raise TypeError("a bool is not a number")
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, (float, np.floating, sp.Float)):
        return sp.Rational(repr(float(x)))
    if isinstance(x, str):
        return sp.sympify(x)
    if isinstance(x, sp.Basic):
        return x
    raise TypeError(f"not a number: {x!r}")


def ball(x, err=None):
    """``x`` as an arb ball at :data:`PREC` bits.

    Exact rationals give a point ball, ``arb`` stays as it is, a sympy expression free of symbols is evaluated to 60
    digits (the ball's radius covers the last 5), and a float, numpy float or mpmath number must come with ``err``,
    the bound on its error (``err=0`` states that the float is exact, e.g. a binary fraction typed in)."""
    old = ctx.prec
    ctx.prec = PREC
    try:
        q = exact(x)
        if q is not None:
            b = arb(fmpq(q.numerator, q.denominator))
        elif isinstance(x, arb):
            b = x
        elif isinstance(x, sp.Basic):
            if x.free_symbols:
                raise TypeError(f"cannot compare the expression {x} with free symbols {x.free_symbols}")
            v = sp.N(x, 60)
            if not v.is_real:
                raise TypeError(f"cannot compare the non-real value {x}")
            b = arb(str(v)) + arb(0, abs(float(v)) * 1e-55 + 1e-300)
        elif isinstance(x, (float, np.floating, mp.mpf, numbers.Real)):
            if err is None:
                raise TypeError(f"the float {x!r} carries no error bound: pass err= (a float cannot decide a verdict)")
            v = float(x) if not isinstance(x, mp.mpf) else x
            if isinstance(v, float) and not np.isfinite(v):
                raise ValueError(f"cannot compare the non-finite value {x!r}")
            b = arb(mp.nstr(v, 40) if isinstance(v, mp.mpf) else v)
            if isinstance(v, mp.mpf):  # nstr rounds to 40 digits: cover it
                b += arb(0, float(abs(v)) * 1e-39)
        else:
            raise TypeError(f"cannot compare a {type(x).__name__}")
        if err is not None:
            e = float(err)
            if not (e >= 0 and np.isfinite(e)):
                raise ValueError(f"an error bound must be finite and >= 0; got {err!r}")
            b = b + arb(0, e)
        return b
    finally:
        ctx.prec = old


def _fmt(x):
    if isinstance(x, Fraction) and x.denominator > 10**6:
        return f"{float(x):.12g} (rational)"
    if isinstance(x, arb):
        return x.str(10, radius=True)
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.12g}"
    if isinstance(x, mp.mpf):
        return mp.nstr(x, 15)
    return str(x)


def compare(lhs, op, rhs, *, lhs_err=None, rhs_err=None):
    """``lhs op rhs`` -> (True | False | None, how).  None: the balls overlap where the answer changes (undecided)."""
    if op not in _OPS:
        raise ValueError(f"op must be one of {_OPS}; got {op!r}")
    # a float declared exact (err=0: a binary fraction typed in, or the very value compared) is its Fraction
    if lhs_err is not None and float(lhs_err) == 0 and isinstance(lhs, (float, np.floating)):
        lhs, lhs_err = Fraction(float(lhs)), None
    if rhs_err is not None and float(rhs_err) == 0 and isinstance(rhs, (float, np.floating)):
        rhs, rhs_err = Fraction(float(rhs)), None
    a, b = exact(lhs), exact(rhs)
    if a is not None and b is not None and lhs_err is None and rhs_err is None:
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op], "exact"
    if lhs_err is None and rhs_err is None and all(isinstance(s, sp.Basic) or exact(s) is not None
                                                   for s in (lhs, rhs)):
        # exact expressions: sympy decides the sign of the difference where it can, else a 60-digit ball does
        d = sp.simplify(sp.sympify(lhs) - sp.sympify(rhs))
        sign = 0 if d == 0 else (1 if d.is_positive else (-1 if d.is_negative else None))
        if sign is not None:
            return {"<": sign < 0, "<=": sign <= 0, ">": sign > 0, ">=": sign >= 0, "==": sign == 0,
                    "!=": sign != 0}[op], "exact"
        lhs, rhs = d, 0
    how = "error bound" if (lhs_err is not None or rhs_err is not None) else "ball"
    old = ctx.prec
    ctx.prec = PREC
    try:
        d = ball(lhs, lhs_err) - ball(rhs, rhs_err)
        lt, gt = bool(d < 0), bool(d > 0)
        le, ge = lt or bool(d <= 0), gt or bool(d >= 0)
    finally:
        ctx.prec = old
    out = {"<": True if lt else (False if ge else None), "<=": True if le else (False if gt else None),
           ">": True if gt else (False if le else None), ">=": True if ge else (False if lt else None),
           "==": None if not (lt or gt) else False, "!=": True if (lt or gt) else None}[op]
    return out, how


@dataclass
class Decision:
    """One comparison that decides a verdict, with its outcome (None: undecided) and how it was certified."""

    what: str
    lhs: str
    op: str
    rhs: str
    outcome: bool | None
    how: str
    data: dict | None = None  # the comparison as exact data (token), for a certificate's replay

    def as_dict(self):
        """The row as JSON-safe data: its words, outcome, trust tag (``how``) and, where it can be redone, the
        comparison's exact inputs."""
        return {"what": self.what, "lhs": self.lhs, "op": self.op, "rhs": self.rhs, "outcome": self.outcome,
                "how": self.how, "data": self.data}

    def __str__(self):
        res = {True: "true", False: "false", None: "UNDECIDED"}[self.outcome]
        body = f"{self.lhs} {self.op} {self.rhs}" if self.op else self.lhs
        return f"{self.what}: {body}: {res} ({self.how})" if body else f"{self.what}: {res} ({self.how})"


class Ledger:
    """The decisive comparisons of one check; ``str(ledger)`` lines go to the evidence under ``decided by``.

    >>> from fractions import Fraction
    >>> led = Ledger()
    >>> led.check("1216/3 <= 406", Fraction(1216, 3), "<=", 406)
    True
    >>> led.check("a float at round-off distance", 1.0 + 1e-13, "<=", 1, lhs_err=1e-12) is None
    True
    >>> led.decided
    False
    """

    def __init__(self):
        self.rows: list[Decision] = []
        self.rules: list[dict] = []  # how rows decide verdicts (:meth:`decide`), with this ledger's row indices
        if _ACTIVE is not None:  # a claim is being run: its certificate collects this ledger's rows
            _ACTIVE.append(self)

    def check(self, what, lhs, op, rhs, *, lhs_err=None, rhs_err=None):
        out, how = compare(lhs, op, rhs, lhs_err=lhs_err, rhs_err=rhs_err)
        ls = _fmt(lhs) + (f" +/- {float(lhs_err):.2g}" if lhs_err else "")
        rs = _fmt(rhs) + (f" +/- {float(rhs_err):.2g}" if rhs_err else "")
        data = {"kind": "compare", "lhs": token(lhs), "rhs": token(rhs), "lhs_err": token(lhs_err),
                "rhs_err": token(rhs_err)}
        self.rows.append(Decision(what, ls, op, rs, out, how, data if None not in (data["lhs"], data["rhs"]) else None))
        return out

    def all_true(self, what, items, how=None, detail=None):
        """Record ``len(items)`` comparisons ``(lhs, op, rhs, lhs_err, rhs_err)`` as one row: true if all are,
        false if one is (certified), else undecided.  For grids of many points.  ``how`` and ``detail``: the row's
        own (default: from the comparisons)."""
        outs, hows, first_bad = [], set(), None
        for lhs, op, rhs, le, re in items:
            o, how = compare(lhs, op, rhs, lhs_err=le, rhs_err=re)
            outs.append(o)
            hows.add(how)
            if o is not True and first_bad is None:
                first_bad = (_fmt(lhs), op, _fmt(rhs))
        out = False if any(o is False for o in outs) else (None if any(o is None for o in outs) else True)
        how = how or ("exact" if hows == {"exact"} else ("error bound" if "error bound" in hows else "ball"))
        detail = detail or (f"{len(items)} comparisons" + (f"; first not certified true: {' '.join(first_bad)}"
                                                           if first_bad else ""))
        toks = [[token(a), op, token(b), token(le), token(re)] for a, op, b, le, re in items]
        data = {"kind": "all", "items": toks} if all(t[0] is not None and t[2] is not None for t in toks) else None
        self.rows.append(Decision(what, detail, "", "", out, how, data))
        return out

    def identity(self, what, expr, *, point=None, rhs=None):
        """``expr == 0`` identically (``rhs`` given: ``expr == rhs``): True when sympy simplifies the difference to 0;
        False when it is certified nonzero at a rational point (``point``: symbol -> value; default 3/7, 5/11, ...
        for each free symbol), else undecided.  With ``rhs`` the certificate keeps both sides as given, so replay
        simplifies their difference itself (a difference written ``a - b`` is often 0 by sympy's automatic
        evaluation before it reaches here, and a replay of ``0 = 0`` re-decides nothing)."""
        sides = None if rhs is None else {"lhs": sp.srepr(sp.sympify(expr)), "rhs": sp.srepr(sp.sympify(rhs))}
        if rhs is not None:
            expr = sp.sympify(expr) - sp.sympify(rhs)
        e = sp.simplify(sp.sympify(expr))
        if e == 0:
            data = {"kind": "identity", "expr": sp.srepr(sp.sympify(expr)), "point": {}}
            if sides:
                data.update(sides)
            self.rows.append(Decision(what, "simplifies to 0", "", "", True, "exact", data))
            return True
        syms = sorted(e.free_symbols, key=str)
        point = point or {s: sp.Rational(2 * i + 3, 4 * i + 7) for i, s in enumerate(syms)}
        val = e.subs(point)
        out, how = compare(val, "!=", 0) if not val.free_symbols else (None, "exact")
        self.rows.append(Decision(what, f"{e} at {dict((str(k), str(v)) for k, v in point.items())} = {sp.N(val, 6)}",
                                  "", "", False if out else None, how,
                                  {"kind": "identity", "expr": sp.srepr(e),
                                   "point": {str(k): str(v) for k, v in point.items()}}))
        return False if out else None

    def finite(self, what, expr):
        """Whether the sympy expression ``expr`` (e.g. a limit sympy computed) is finite, in sympy's three values:
        True, False, or None where sympy cannot tell (an undecided row, never a certified answer).  The row keeps
        the expression, so replay asks sympy again; the limit that produced it is sympy's, not re-derived."""
        e = sp.sympify(expr)
        out = _is_finite(e)
        self.rows.append(Decision(what, str(e), "", "", out, "exact", {"kind": "finite", "expr": sp.srepr(e)}))
        return out

    def subset(self, what, inner, outer):
        """``inner`` is a subset of ``outer`` (sympy sets, e.g. the solution set of an inequality sympy solved), in
        sympy's three values (None: sympy cannot tell).  The row keeps both sets, so replay asks sympy again."""
        inner, outer = sp.sympify(inner), sp.sympify(outer)
        out = inner.is_subset(outer)
        self.rows.append(Decision(what, f"{inner} within {outer}", "", "", out, "exact",
                                  {"kind": "subset", "inner": sp.srepr(inner), "outer": sp.srepr(outer)}))
        return out

    def same_as(self, target, claim_id, verdict):
        """``target``'s verdict is the claim ``claim_id``'s (a part that reports another claim of the audit): the
        certificate says so, and replay compares it with that claim's verdict in the same file."""
        from .verdicts import Verdict

        verdict = Verdict(verdict)
        self.rules.append({"target": target, "clauses": [], "holds": verdict.value, "same_as": claim_id})
        return verdict

    def record(self, what, outcome, how, detail=""):
        """A decision certified elsewhere, with no data to re-decide it: ``how`` in :data:`HOW`.  Replay counts such
        a row as recorded only; the audit's own rows use :meth:`covers` or :meth:`all_true` instead."""
        if how not in HOW:
            raise ValueError(f"how must be one of {HOW}; got {how!r}")
        self.rows.append(Decision(what, detail, "", "", outcome, how))
        return outcome

    def covers(self, what, covers, detail=""):
        """Ball-arithmetic covers of regions (``covers``: :func:`verify.strip.cover_data` dicts) as one row: true if
        every box of every cover is certified, else undecided.  The row keeps each cover's tree, so replay
        evaluates the predicate on every box again (:func:`verify.strip.replay_cover`)."""
        out = True if all(set(c["tree"]) <= {"0", "1"} for c in covers) else None
        self.rows.append(Decision(what, detail, "", "", out, "ball", {"kind": "covers", "covers": list(covers)}))
        return out

    def statistical(self, what, ok, detail, data=None):
        """A decision by a statistical test at a stated level (Monte Carlo): ``ok`` is the test's outcome.
        ``data`` (see :func:`statistical_outcome`): the counts or statistics and the rule that turns them into the
        outcome, so a certificate's replay re-decides the row; without it the row is recorded only.  The outcome is
        checked against the rule here too, so a row cannot record what its own data contradict."""
        if data is not None:
            again = statistical_outcome(data)
            if again != bool(ok):
                raise ValueError(f"{what}: the outcome {bool(ok)} contradicts its own data ({again}): {data}")
        self.rows.append(Decision(what, detail, "", "", bool(ok), "statistical", data))
        return bool(ok)

    def since(self, start):
        """The indices of the rows recorded from ``start`` on (``start = len(led.rows)`` taken before them): a
        clause of :meth:`decide`."""
        return list(range(start, len(self.rows)))

    def decide(self, target=None, clauses=None, *, holds=None):
        """The verdict that rows of this ledger give ``target`` (a part's name; None: the claim's own verdict), by
        a rule the certificate keeps, so that ``socal audit --replay`` re-derives the verdict from the re-decided
        rows instead of reading it (:func:`rule_verdict`).

        ``clauses``: an ordered list of (row indices, verdict) or (row indices, verdict, mode); default: every row
        of the ledger, FAILS.  The first clause that fires gives its verdict (:func:`rule_verdict` states when each
        mode fires); when none does, the verdict is ``holds`` (default HOLDS)."""
        from .verdicts import Verdict

        holds = Verdict.HOLDS if holds is None else Verdict(holds)
        if clauses is None:
            clauses = [(range(len(self.rows)), Verdict.FAILS)]
        clauses = [[[int(i) for i in c[0]], Verdict(c[1]).value] + ([c[2]] if len(c) > 2 and c[2] != "any" else [])
                   for c in clauses]
        for rows, *rest in clauses:
            if rest[1:] and rest[1] not in _MODES:
                raise ValueError(f"decide({target!r}): a clause's mode must be one of {_MODES}; got {rest[1]!r}")
            if not rows or any(not 0 <= i < len(self.rows) for i in rows):
                raise ValueError(f"decide({target!r}): a clause's rows must be indices of this ledger's "
                                 f"{len(self.rows)} rows; got {rows}")
        self.rules.append({"target": target, "clauses": clauses, "holds": holds.value})
        return Verdict(rule_verdict(clauses, [r.outcome for r in self.rows], holds.value))

    @property
    def decided(self):
        return all(r.outcome is not None for r in self.rows)

    @property
    def undecided(self):
        return [r for r in self.rows if r.outcome is None]

    def lines(self):
        return [str(r) for r in self.rows]

    def verdict(self, ok, holds, fails):
        """``holds`` when ``ok`` is True, ``fails`` when False, INCONCLUSIVE when None (undecided)."""
        from .verdicts import Verdict

        return holds if ok is True else (fails if ok is False else Verdict.INCONCLUSIVE)

    def __str__(self):
        return "\n".join(self.lines())


_MODES = ("any", "all", "true", "undecided")


def _is_finite(e):
    """sympy's three-valued answer, kept: True, False, or None where sympy cannot tell (then a rule gives
    INCONCLUSIVE, never a certified FAILS)."""
    return e.is_finite


def rule_verdict(clauses, outcomes, holds):
    """A verdict (its string) from row outcomes by a rule of :meth:`Ledger.decide`: the clauses in order, each
    [row indices, verdict] or [row indices, verdict, mode]; the first that fires gives its verdict, and past every
    clause the verdict is ``holds``.  A clause fires

    * mode 'any' (the default): when one of its rows is False (certified), and else gives INCONCLUSIVE when one is
      undecided (None): a failed check decides, an undecided one cannot be passed;
    * mode 'all': when every one of its rows is False, and else gives INCONCLUSIVE when none is True and one is
      undecided (e.g. VACUOUS when no setting is informative);
    * mode 'true': when every one of its rows is True, and else gives INCONCLUSIVE when none is False and one is
      undecided (e.g. VACUOUS when a bound is above the quantity's range everywhere);
    * mode 'undecided': when one of its rows is undecided (a verdict that needs every row decided)."""
    for clause in clauses:
        rows, verdict = clause[0], clause[1]
        mode = clause[2] if len(clause) > 2 else "any"
        outs = [outcomes[i] for i in rows]
        if mode == "undecided":
            if any(o is None for o in outs):
                return verdict
            continue
        if mode in ("all", "true"):
            fire, other = (False, True) if mode == "all" else (True, False)
            if all(o is fire for o in outs):
                return verdict
            if not any(o is other for o in outs) and any(o is None for o in outs):
                return "INCONCLUSIVE"
            continue
        if any(o is False for o in outs):
            return verdict
        if any(o is None for o in outs):
            return "INCONCLUSIVE"
    return holds


def both(*outs):
    """Three-valued AND: False if any is False, None if any is undecided, else True."""
    if any(o is False for o in outs):
        return False
    if any(o is None for o in outs):
        return None
    return True


# -- certificates: the deciding comparisons as exact data, and their replay -----------------------------------------
_ACTIVE: list | None = None  # the ledgers of the claim being run (Claim.run collects them into its certificate)


@contextlib.contextmanager
def collecting():
    """``with collecting() as ledgers:`` every :class:`Ledger` made inside joins ``ledgers`` (a claim's run)."""
    global _ACTIVE
    outer, _ACTIVE = _ACTIVE, []
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = outer


def _dyadic(m, e):
    m, e = int(m), int(e)
    return f"{m * 2 ** e}" if e >= 0 else f"{m}/{2 ** -e}"


def token(x):
    """A number as exact, JSON-safe data: what :func:`untoken` rebuilds to the same value and type (None where a
    value is not a number compare() takes, e.g. an array)."""
    if x is None:
        return None
    if isinstance(x, bool):
        return {"bool": x}
    if isinstance(x, (int, np.integer)):
        return {"int": str(int(x))}
    if isinstance(x, Fraction):
        return {"q": f"{x.numerator}/{x.denominator}"}
    if isinstance(x, arb):
        return {"arb": [_dyadic(*x.mid().man_exp()), _dyadic(*x.rad().man_exp())]}
    if isinstance(x, mp.mpf):
        man = int(x.man) if x >= 0 else -int(x.man)  # mpf.man is the mantissa's magnitude; the sign is x's
        return {"mpf": _dyadic(man, x.exp)}
    if isinstance(x, sp.Basic):
        return {"sym": sp.srepr(x)}
    if isinstance(x, (float, np.floating)):
        return {"f": float(x).hex()}
    if isinstance(x, numbers.Real):
        return {"f": float(x).hex()}
    return None


def untoken(t):
    """The value :func:`token` recorded."""
    if t is None:
        return None
    (kind, v), = t.items()
    if kind == "bool":
        return bool(v)
    if kind == "int":
        return int(v)
    if kind == "q":
        return Fraction(v)
    if kind == "arb":
        old = ctx.prec
        ctx.prec = PREC
        try:
            mid, rad = (Fraction(s) for s in v)
            return arb(fmpq(mid.numerator, mid.denominator), fmpq(rad.numerator, rad.denominator))
        finally:
            ctx.prec = old
    if kind == "mpf":
        q = Fraction(v)
        return mp.mpf(q.numerator) / q.denominator if q.denominator != 1 else mp.mpf(q.numerator)
    if kind == "sym":
        return sp.sympify(v)
    if kind == "f":
        return float.fromhex(v)
    raise ValueError(f"unknown token kind {kind!r}")


STATISTICAL_KINDS = ("binomial", "min_p", "below", "intervals_below", "none_below", "interval_in", "interval_meets")


def statistical_outcome(data):
    """The outcome of a Monte Carlo row from its recorded data, by its stated rule:

    * ``binomial``: counts [[k, R], ...] of replicates above a bound that holds in each with probability >= 1 - p0
      (Markov: p0 = 1/2); the claim is kept when every one-sided binomial p-value P(Bin(R, p0) >= k) is at least
      ``alpha`` / (number of counts) (Bonferroni over the family);
    * ``min_p``: p-values of tests of one family; kept when the smallest is at least ``alpha``;
    * ``below``: ``value`` < ``bound`` (an interval's end against a rate, each recorded with its seed);
    * ``intervals_below``: the interval ``first`` lies below every interval of ``others`` (its upper end below
      their lower ends);
    * ``none_below``: no interval of ``others`` lies below the interval ``first`` (no upper end below its lower
      end);
    * ``interval_in``: the interval ``interval`` lies within ``range`` (both ends inside);
    * ``interval_meets``: the interval ``interval`` meets ``range`` (it does not lie wholly on one side)."""
    from scipy import stats

    kind = data.get("kind")
    if kind == "binomial":
        counts, alpha, p0 = data["counts"], float(data["alpha"]), float(data["p0"])
        return all((float(stats.binom.sf(int(k) - 1, int(r), p0)) if int(k) > 0 else 1.0) >= alpha / len(counts)
                   for k, r in counts)
    if kind == "min_p":
        return min(float(p) for p in data["pvalues"]) >= float(data["alpha"])
    if kind == "below":
        return float(data["value"]) < float(data["bound"])
    if kind == "intervals_below":
        return all(float(data["first"][1]) < float(o[0]) for o in data["others"])
    if kind == "none_below":
        return not any(float(o[1]) < float(data["first"][0]) for o in data["others"])
    if kind == "interval_in":
        return float(data["range"][0]) <= float(data["interval"][0]) and \
            float(data["interval"][1]) <= float(data["range"][1])
    if kind == "interval_meets":
        return float(data["interval"][1]) >= float(data["range"][0]) and \
            float(data["interval"][0]) <= float(data["range"][1])
    raise ValueError(f"unknown statistical row kind {kind!r}")


def replay_row(row):
    """Re-decide one recorded row from its data alone: (outcome now, or 'recorded' where the row holds no
    comparison to redo: a Monte Carlo test's outcome or a decision certified elsewhere)."""
    data = row.get("data")
    if not data:
        return "recorded"
    if data["kind"] == "compare":
        return compare(untoken(data["lhs"]), row["op"], untoken(data["rhs"]), lhs_err=untoken(data["lhs_err"]),
                       rhs_err=untoken(data["rhs_err"]))[0]
    if data["kind"] == "all":
        outs = [compare(untoken(a), op, untoken(b), lhs_err=untoken(le), rhs_err=untoken(re))[0]
                for a, op, b, le, re in data["items"]]
        return False if any(o is False for o in outs) else (None if any(o is None for o in outs) else True)
    if data["kind"] in STATISTICAL_KINDS:
        return statistical_outcome(data)
    if data["kind"] == "covers":
        from .strip import replay_cover

        outs = [replay_cover(c) for c in data["covers"]]
        return True if outs and all(o is True for o in outs) else None
    if data["kind"] == "subset":
        return sp.sympify(data["inner"]).is_subset(sp.sympify(data["outer"]))
    if data["kind"] == "finite":
        return _is_finite(sp.sympify(data["expr"]))
    if data["kind"] == "identity":
        e = sp.sympify(data["lhs"]) - sp.sympify(data["rhs"]) if "lhs" in data else sp.sympify(data["expr"])
        if e == 0 or sp.simplify(e) == 0:
            return True
        val = e.subs({sp.Symbol(k): sp.sympify(v) for k, v in data["point"].items()})
        out = compare(val, "!=", 0)[0] if not val.free_symbols else None
        return False if out else None
    raise ValueError(f"unknown row kind {data['kind']!r}")
