"""The explicit bounds against values worked out by hand, the thresholds, and the acceptance rule."""

import math

import numpy as np
import pytest

from socal.verify.bounds import LB_CONSTANT, lower_bound, step4, step5, threshold_n, upper_bound
from socal.verify.transport import two_point_minimax
from socal.verify.montecarlo import markov_acceptance, slope


def test_upper_bound_hand_checked_at_n_1e6_h_1_16():
    # theta = pi/16 + sqrt(pi^2/256 + 1) = 0.196350 + 1.019094 = 1.215444; ln theta = 0.195117
    # l = ceil(2 ln(1e6) / ln theta) = ceil(27.631 / 0.195117) = ceil(141.61) = 142; (l+1)^2 = 20449
    # Step 4: 406 * 20449 * ln(3e6) (= 14.91412) + 408 = 123,821,639 -> /1e6 = 123.822 -> 2 sqrt(.) = 22.255
    # Step 5: t* = sqrt((4 * 20449 * ln(6e6) (= 15.60727) + 2 ln 2) / 1e6) = sqrt(1.276611) = 1.129872
    assert step4(1e6, 1 / 16) == pytest.approx(22.255, abs=2e-3)
    assert step5(1e6, 1 / 16) == pytest.approx(1.129872 + 2e-6 + 1 / (1e6 * 1.129872), abs=2e-5)
    assert upper_bound(1e6, 1 / 16) == pytest.approx(23.385, abs=3e-3)


def test_lower_bound_and_constant():
    assert LB_CONSTANT == pytest.approx(0.0147313913, rel=1e-8)  # 1 / (48 * 1.414213562)
    assert lower_bound(100) == pytest.approx(0.00147313913, rel=1e-8)


def test_thresholds_bracket_the_level():
    for h in (1 / 16, 1 / 64):
        for level in (2.0, 0.1):
            n = threshold_n(h, level)
            assert upper_bound(n * 1.01, h) < level <= upper_bound(n / 1.05, h)
    assert threshold_n(1 / 16, 2.0, tight=True) < threshold_n(1 / 16, 2.0)


def test_two_point_risk_limit_of_tiny_eps():
    """As eps -> 0 the two laws coincide (TV -> 0), so the minimax risk tends to Delta/2."""
    risk, delta = two_point_minimax(4, 1e-5, 1 / 16)
    assert risk == pytest.approx(delta / 2, rel=1e-3)


def test_acceptance_rule_catches_a_wrong_bound_and_passes_a_true_one():
    rng = np.random.default_rng(0)
    errors = {n: np.abs(rng.normal(0, 1 / math.sqrt(n), 20)) for n in (100, 400, 1600)}
    ok, _ = markov_acceptance(errors, lambda n: 2 / math.sqrt(n))
    bad, details = markov_acceptance(errors, lambda n: 0.01 / math.sqrt(n))
    assert ok and not bad and all(d["above_2B"] >= 17 for d in details.values())
    s, lo, hi = slope(errors)
    assert lo < -0.5 < hi
