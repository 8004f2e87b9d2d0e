"""socal._validation: inputs numpy cannot make an array of are refused with socal's own message (issue 61)."""

import numpy as np
import pytest

import socal

M, V = [0.2, 0.4, 0.6] * 40, [0.01, 0.02, 0.03] * 40
Y = [[0, 1], [1, 1], [0, 0]] * 40
RAGGED_Y = [[0, 1], [1, 1, 0], [0, 0]] * 40


@pytest.mark.parametrize("call, name", [
    (lambda: socal.ce2([[0.1], [0.2, 0.3]] * 60, V, Y), "mean"),
    (lambda: socal.ce2(M, [[0.1], [0.1, 0.2]] * 60, Y), "var"),
    (lambda: socal.ce2(M, V, RAGGED_Y), "labels"),
    (lambda: socal.ce1([0.1, [0.2], 0.3] * 40, Y), "mean"),
    (lambda: socal.calibration_test(M, V, RAGGED_Y), "labels"),
    (lambda: socal.evaluate(M, V, RAGGED_Y), "labels"),
    (lambda: socal.SecondOrderPlatt().fit(M, V, RAGGED_Y), "labels"),
])
def test_a_ragged_list_is_refused_naming_the_argument_and_the_rule(call, name):
    """ce2([[0.1], [0.2, 0.3]], ...) raised numpy's "inhomogeneous shape after 1 dimensions"."""
    with pytest.raises(ValueError, match=f"The '{name}' parameter of .* must be a rectangular array") as err:
        call()
    assert "inhomogeneous" not in str(err.value) and "different lengths" in str(err.value)
    if name == "labels":
        assert "pass counts=(positives, trials)" in str(err.value)


def test_the_same_lists_made_rectangular_are_taken():
    """Negative control: the refusal is about the raggedness, not about lists."""
    assert socal.calibration_test(M, V, Y).df > 0
    a = np.array([sum(r) for r in RAGGED_Y], dtype=float)
    k = np.array([len(r) for r in RAGGED_Y], dtype=float)
    assert socal.calibration_test(M, V, counts=(a, k)).n == 120
