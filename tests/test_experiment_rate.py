"""Experiment 1, reduced (the --quick run): the polynomial estimators beat both baselines on average."""

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="Experiment 1 trains its ensemble with scikit-learn (test extra)")
pytest.importorskip("joblib", reason="Experiment 1 runs seeds in parallel with joblib (test extra)")

from socal.experiments.rate import ESTIMATORS, HS, run_rate, slope_errors, slopes, summarise  # noqa: E402


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_rate(seeds=3, sizes=(500, 2000, 10_000), out=tmp_path_factory.mktemp("rate"), n_jobs=1,
                    log2_sobol=14)


def test_polynomial_beats_baselines_averaged_over_n(rows):
    summ = summarise(rows)
    for h in HS:
        mean_err = {e: np.mean([v[0] for v in summ[(h, e)].values()]) for e in ESTIMATORS}
        assert min(mean_err["poly-cv"], mean_err["poly-val"]) < min(mean_err["bucketing"],
                                                                    mean_err["nadaraya-watson"]), (h, mean_err)


def test_errors_fall_with_n(rows):
    for (h, est), s in slopes(rows).items():
        assert s < 0, (h, est, s)


def test_resume_does_not_recompute(rows, tmp_path):
    out = tmp_path / "r"
    first = run_rate(seeds=1, sizes=(500,), out=out, n_jobs=1, log2_sobol=12)
    again = run_rate(seeds=1, sizes=(500,), out=out, n_jobs=1, log2_sobol=12)
    assert [r["estimate"] for r in first] == [r["estimate"] for r in again]
    assert (out / "rate.csv").read_text().count("\n") == len(first) + 1


def _rows(errors):
    """Rows of one (h, estimator) with abs_error[seed][j] at sizes 500, 2000, 10000."""
    return [{"seed": seed, "h": 1 / 16, "n": n, "estimator": "poly-cv", "abs_error": e}
            for seed, errs in enumerate(errors) for n, e in zip((500, 2000, 10_000), errs)]


def test_slope_errors_are_the_seeds_jackknife():
    """The SE is the leave-one-seed-out jackknife of the slope, computed here by hand; 0 when the seeds agree; NaN
    with fewer than 3 seeds (no spread to read).  Negative control: other seeds' errors give another SE."""
    errors = [[0.10, 0.05, 0.02], [0.12, 0.04, 0.03], [0.08, 0.06, 0.02], [0.11, 0.05, 0.015]]
    rows = _rows(errors)
    ns = np.log10([500, 2000, 10_000])
    loo = [np.polyfit(ns, np.log10(np.mean([e for j, e in enumerate(errors) if j != i], axis=0)), 1)[0]
           for i in range(4)]
    want = np.sqrt(3 / 4 * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    got = slope_errors(rows)[(1 / 16, "poly-cv")]
    assert abs(got - want) < 1e-12 and got > 0
    assert slope_errors(_rows([errors[0]] * 3))[(1 / 16, "poly-cv")] < 1e-12
    assert np.isnan(slope_errors(_rows(errors[:2]))[(1 / 16, "poly-cv")])
    assert abs(slope_errors(_rows(errors[1:]))[(1 / 16, "poly-cv")] - want) > 1e-3


def test_the_quick_runs_slopes_print_their_errors(rows):
    """Every slope of the reduced run has a finite SE, and the report prints it beside the slope."""
    from socal.experiments.rate import report

    se = slope_errors(rows)
    assert set(se) == set(slopes(rows)) and all(np.isfinite(v) and v >= 0 for v in se.values())
    text = report(rows, 1.0, "out")
    assert text.count(" ± ") == len(se) and "jackknife SE" in text
