"""The result objects (CalibrationError, intervals, bounds, truth values, tests): formats, membership, truth value."""

import numpy as np
import pytest

import socal


def test_results_format_as_numbers_and_intervals_hold_values(small):
    """f"{result:.3f}" raised "unsupported format string passed to CalibrationError.__format__" though
    float(result) works; `truth in result.ci` was unsupported."""
    m, v, y = small
    r = socal.ce2(m, v, y, rng=0, ci=0.9, upper=0.95)
    assert f"{r:.3f}" == f"{r.estimate:.3f}" and f"{r.upper:.4f}" == f"{r.upper.value:.4f}"
    assert f"{r}" == str(r)
    assert r.ci.low in r.ci and r.ci.high in r.ci and (r.ci.high + 1e-9) not in r.ci


def test_every_result_object_takes_a_format_spec():
    """Issue 62: f"{ev.reference:.4f}" raised TypeError (so did a TruthValue, a test and its parts); each formats
    its headline number, and an empty spec keeps str()."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(400, rng=0)
    ev = socal.evaluate(m, v, y, h=1 / 16, rng=0, n_boot=20)
    t = ev.test
    assert f"{ev.reference:.4f}" == f"{ev.reference.ce2.value:.4f}"
    assert f"{ev.reference.ce1:.3e}" == f"{ev.reference.ce1.value:.3e}"
    assert f"{t:.3g}" == f"{t.pvalue:.3g}" and f"{t}" == str(t) == t.summary()
    assert f"{t.mean_part:.2g}" == f"{t.mean_part.pvalue:.2g}" and f"{t.variance_part}" == str(t.variance_part)
    assert f"{ev:.4f}" == f"{ev.ce2.estimate:.4f}"
    for obj in (ev, t, t.mean_part, ev.reference, ev.reference.ce2, ev.ce2, ev.ce1):
        with pytest.raises((ValueError, TypeError)):  # a spec a float refuses is refused, not ignored
            format(obj, "q")


def test_membership_in_an_interval_is_false_for_what_is_not_a_number():
    """``'a' in result.ci`` raised "could not convert string to float"; ``None in ci`` a TypeError from float().
    What is not a real number is not in the interval; one value in an array is read; many are refused."""
    ci = socal.ConfidenceInterval(0.1, 0.2, 0.9)
    assert 0.15 in ci and np.float32(0.15) in ci and np.array([0.15]) in ci and 0.2 in ci
    assert not any(x in ci for x in ("a", None, True, float("nan"), 1, np.array(["a"]), 0.25))
    with pytest.raises(TypeError, match="for an array of 2 use"):
        np.array([0.15, 0.3]) in ci  # noqa: B015
