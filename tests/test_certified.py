"""Certified comparisons (verify/certified.py): exact where exact, balls where balls, undecided within round-off."""

from fractions import Fraction

import pytest
import sympy as sp
from flint import arb
from hypothesis import given, settings, strategies as st

from socal.verify.certified import Ledger, ball, both, compare


def test_exact_rationals_decide_ties_exactly():
    assert compare(Fraction(1216, 3), "<=", 406) == (True, "exact")
    assert compare(sp.Rational(9, 16), ">=", sp.Rational(9, 16)) == (True, "exact")
    assert compare(sp.Rational(9, 16), ">", sp.Rational(9, 16)) == (False, "exact")
    assert compare(1 / (48 * sp.sqrt(2)), "<=", sp.sqrt(2) / 96) == (True, "exact")


def test_a_float_cannot_decide_without_its_error_bound():
    with pytest.raises(TypeError, match="error bound"):
        compare(0.5, "<", 1)
    with pytest.raises(ValueError, match="finite"):
        compare(0.5, "<", 1, lhs_err=float("nan"))


@settings(max_examples=200, deadline=None)
@given(st.floats(0.01, 1e6), st.sampled_from([-1, 1]), st.sampled_from(["<", "<=", ">", ">="]))
def test_within_round_off_is_undecided_never_a_verdict(x, sign, op):
    """The edge control: a constant 1e-12 relative from a computed float that carries 1e-10 relative error."""
    assert compare(x * (1 + sign * 1e-12), op, sp.nsimplify(x), lhs_err=1e-10 * x)[0] is None


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=-10, max_value=10, max_denominator=10**6),
       st.fractions(min_value=-10, max_value=10, max_denominator=10**6))
def test_exact_comparisons_agree_with_fraction_arithmetic(a, b):
    assert compare(a, "<", b)[0] == (a < b)
    assert compare(a, "<=", b)[0] == (a <= b)
    assert compare(a, "==", b)[0] == (a == b)


def test_balls_decide_only_when_disjoint():
    assert compare(arb(1, 0.1), ">", 0)[0] is True
    assert compare(arb(1, 2), ">", 0)[0] is None
    assert compare(arb(1, 0.1), "==", 1)[0] is None  # equality is never certified by a ball of positive radius
    assert ball(sp.pi).overlaps(arb.pi())


def test_ledger_identity_refutes_only_at_a_certified_point():
    a = sp.symbols("a", real=True)
    led = Ledger()
    assert led.identity("sin^2 + cos^2 = 1", sp.sin(a) ** 2 + sp.cos(a) ** 2 - 1) is True
    assert led.identity("a wrong identity", sp.sin(a) - a) is False
    assert [r.outcome for r in led.rows] == [True, False]
    assert both(True, None) is None and both(True, False, None) is False and both(True, True) is True


def test_sym_keeps_a_perturbation_that_nsimplify_erases():
    """A claim reads its constants through sym: an exact number stays exact, so a 1e-12 negative control reaches
    the check (sympy.nsimplify returns 3/2 for 3/2 (1 - 1e-12))."""
    import sympy as sp
    from fractions import Fraction

    from socal.verify.certified import sym

    moved = sp.Rational(3, 2) * (1 - sp.Rational(1, 10**12))
    assert sym(moved) == moved != sp.Rational(3, 2)
    assert sym(Fraction(1216, 3)) == sp.Rational(1216, 3) and sym(406) == 406
    assert sym(0.5) == sp.Rational(1, 2) and sym(1.5 * (1 + 1e-12)) != sp.Rational(3, 2)
    assert sym("17/4") == sp.Rational(17, 4)
    assert sym(1 / (48 * sp.sqrt(2))) == sp.sqrt(2) / 96
    with pytest.raises(TypeError):
        sym(True)
    with pytest.raises(TypeError):
        sym([1])
