"""Experiment 3 (reduced): the paper's shape claims hold, and the checks catch curves that violate them."""

import dataclasses

import numpy as np
import pytest

from socal.experiments.decision import METHODS, run_decision, sample_clinic, shape_checks


@pytest.fixture(scope="module")
def result():
    return run_decision(repeats=20, rng=1)


def test_shape_claims_hold(result):
    checks = shape_checks(result)
    assert all(c["holds"] for c in checks.values()), checks


def test_shape_checks_negative_control(result):
    """Swap the 2-D second-order curve for the raw (m, var) plug-in: the tracking claim must fail."""
    gain = result.gain.copy()
    j2, jr = METHODS.index("2-D second-order Platt"), METHODS.index("raw (m, var)")
    gain[:, j2] = gain[:, jr]
    swapped = dataclasses.replace(result, gain=gain)
    assert not shape_checks(swapped)["2-D second-order tracks the oracle for tau >= 0"]["holds"]
    ref = result.referred.copy()
    ref[:, METHODS.index("raw m")] = 0.5
    assert not shape_checks(dataclasses.replace(result, referred=ref))[
        "first-order methods refer almost no one (tau >= 0)"]["holds"]


def test_population_matches_appendix():
    d = sample_clinic(200_000, 0)
    frac = np.bincount(d["group"], minlength=4) / 200_000
    np.testing.assert_allclose(frac, (0.25, 0.25, 0.35, 0.15), atol=0.005)
    g3 = d["group"] == 3
    assert abs(np.mean(d["var"][g3]) - 0.06) < 0.001 and abs(np.mean(d["theta"][g3] > 0.5) - 0.5) < 0.01
    border = (d["m"] >= 0.35) & (d["m"] <= 0.65)
    assert 0.45 < border.mean() < 0.55  # "about half pass the borderline filter"


def test_same_seed_same_curves():
    a, b = run_decision(repeats=3, rng=7), run_decision(repeats=3, rng=7)
    np.testing.assert_array_equal(a.gain, b.gain)


def test_cli_reproduce_decision(tmp_path, capsys):
    from socal.cli import main

    assert main(["reproduce", "decision", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("[holds]") == 3
    assert (tmp_path / "decision.csv").exists() and (tmp_path / "decision_checks.json").exists()
