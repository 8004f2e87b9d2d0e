"""Experiment 1, reduced (the --quick run): the polynomial estimators beat both baselines on average."""

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="Experiment 1 trains its ensemble with scikit-learn (test extra)")
pytest.importorskip("joblib", reason="Experiment 1 runs seeds in parallel with joblib (test extra)")

from socal.experiments.rate import ESTIMATORS, HS, run_rate, slopes, summarise  # noqa: E402


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
