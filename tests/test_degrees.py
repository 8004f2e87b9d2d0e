"""socal.degrees: the degree rule and its limits (issue 61: a test file per module)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from socal import degrees
import socal


@given(st.floats(1.0, 1e12), st.floats(1e-4, 1.0))
def test_paper_degree_is_the_propositions_rule(n, h):
    """l = ceil(2 log n / log theta(h)) with log theta = asinh(h pi); per axis the smaller ellipse decides, and
    (h, h/4) gives the single h's degree (the matched quarter)."""
    want = math.ceil(2 * math.log(n) / math.asinh(h * math.pi))
    assert degrees.paper_degree(n, h) == want
    assert degrees.paper_degree(n, (h, h / 4)) == want
    assert degrees.paper_degree(n, (h, h / 8)) >= want  # a narrower variance strip needs more


def test_theta_is_exp_asinh_and_keeps_its_log_for_tiny_h():
    assert degrees.theta(1 / 16) == pytest.approx(math.pi / 16 + math.sqrt(math.pi ** 2 / 256 + 1), rel=1e-15)
    assert math.log(degrees.theta(1e-12)) == pytest.approx(math.pi * 1e-12, rel=1e-9)  # not rounded to log 1 = 0


@given(st.integers(0, 200), st.integers(0, 10))
def test_the_schedule_halves_down_to_the_floor(lmax, floor):
    s = degrees.degree_schedule(lmax, floor)
    assert s[0] == lmax and list(s) == sorted(s, reverse=True) and len(set(s)) == len(s)
    assert s[-1] == min(floor, lmax) or s[-1] == 0
    assert all(b == a // 2 for a, b in zip(s, s[1:-1]))


@given(st.integers(0, 10**7), st.sampled_from([1, 2]))
def test_the_admissible_degree_is_the_exact_boundary(n_train, ndim):
    """50 training rows per coefficient: l is admissible, l + 1 is not (integers, no float rounding)."""
    l = degrees.admissible_degree(n_train, ndim)
    assert (l < 0 or 50 * (l + 1) ** ndim <= n_train) and 50 * (l + 2) ** ndim > n_train


def test_training_rows_and_the_smallest_n():
    assert degrees.training_rows(100, 5, None) == 80 and degrees.training_rows(101, 5, None) == 80
    assert degrees.training_rows(100, 5, 0.25) == 75
    degrees.check_n("f", 10, 5)
    with pytest.raises(ValueError, match="at least 10 items \\(2 per fold\\)"):
        degrees.check_n("f", 9, 5)
    with pytest.raises(ValueError, match="'holdout' parameter of f must leave at least 2"):
        degrees.check_n("f", 20, 5, holdout=0.05)


def test_the_ridge_grid():
    assert degrees.resolve_alphas("f", None) == (degrees.DEFAULT_ALPHAS, True)
    assert degrees.resolve_alphas("f", [1e-2, 1e-3, 1e-2]) == ((1e-3, 1e-2), True)
    assert degrees.resolve_alphas("f", np.array(0.5)) == ((0.5,), False)
    for bad in ([], [[1e-3]], -1.0, 2e6):
        with pytest.raises(ValueError, match="'ridge' parameter of f"):
            degrees.resolve_alphas("f", bad)


def test_the_resolution_degree_per_axis():
    assert degrees.resolution_degree(1 / 16) == math.ceil(16 / math.pi)
    assert degrees.resolution_degree((1 / 16, 1 / 64)) == math.ceil(16 / math.pi)  # 4 h_var = h_mean
    assert degrees.resolution_degree((1 / 16, 1 / 256)) == math.ceil(64 / math.pi)


def test_degree_schedule_terminates_everywhere():
    from socal.degrees import degree_schedule

    for lmax in range(0, 60):
        for floor in range(0, lmax + 2):
            s = degree_schedule(lmax, floor)
            assert s[0] == lmax and list(s) == sorted(set(s), reverse=True) and s[-1] >= min(floor, lmax)


def test_too_few_items_for_the_folds(small):
    m, v, y = small
    with pytest.raises(ValueError, match="at least 10 items"):
        socal.ce2(m[:9], v[:9], y[:9], debias=False)


def test_paper_degree_domain():
    assert socal.paper_degree(1000, 1 / 16) == math.ceil(2 * math.log(1000) / math.log(socal.theta(1 / 16)))
    assert socal.paper_degree(10.5, 0.1) == math.ceil(2 * math.log(10.5) / math.log(socal.theta(0.1)))
    for args in ((1000, -1), (0, 0.1), (10, 0.0), (float("nan"), 0.1), ("10", 0.1)):
        with pytest.raises(ValueError, match="parameter of paper_degree"):
            socal.paper_degree(*args)


def test_a_range_of_degrees_is_a_list_of_degrees(small):
    """degree=range(2, 6) was refused as 'an int in the range [0, 200]. Got range(2, 6)'."""
    m, v, y = small
    res = socal.ce2(m, v, y, degree=range(2, 6), debias=False)
    assert res.selection.degrees == (5, 4, 3, 2)
    with pytest.raises(ValueError, match="non-empty list"):
        socal.ce2(m, v, y, degree=range(0), debias=False)


def test_an_unbounded_range_is_not_printed_with_infinity_in_it():
    """paper_degree(inf, ...) said 'must be a float in the range [1.0, inf]. Got inf': infinity is refused, so the
    rule names a finite float."""
    with pytest.raises(ValueError, match="'n' parameter of paper_degree must be a finite float >= 1.0. Got inf"):
        socal.paper_degree(math.inf, 1 / 16)
    with pytest.raises(ValueError, match="'lo' parameter of SechKernel must be a finite float. Got nan"):
        socal.SechKernel(0.1, math.nan)
