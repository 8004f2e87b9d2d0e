"""The experiment runners (socal.experiments) name a bad argument before any work."""

import json
import warnings

import numpy as np
import pytest

import socal


def _experiments():
    pytest.importorskip("sklearn")
    from socal.experiments import decision, rate, real_labels, recalibration

    return decision, rate, real_labels, recalibration


@pytest.mark.parametrize("call, name", [
    (lambda: socal.synthetic.GaussianMixtureTask(components=0), "components"),
    (lambda: socal.synthetic.GaussianMixtureTask(components=2.5), "components"),
    (lambda: socal.synthetic.GaussianMixtureTask(d=-3), "d"),
    (lambda: socal.synthetic.GaussianMixtureTask().sample_x(-1), "n"),
    (lambda: socal.synthetic.GaussianMixtureTask().labels(np.zeros((3, 4)), k=0), "k"),
    (lambda: socal.synthetic.validation_zoo(include_held_out="no"), "include_held_out"),
])
def test_the_experiment_task_and_the_zoo_name_a_bad_argument(call, name):
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        call()


@pytest.mark.parametrize("which, kwargs, match", [
    ("decision", dict(n_cal=0), "'n_cal' parameter of run_decision"),
    ("decision", dict(n_eval=-5), "'n_eval' parameter of run_decision"),
    ("decision", dict(cost=float("nan")), "'cost' parameter of run_decision"),
    ("decision", dict(taus=[]), "'taus' parameter of run_decision"),
    ("decision", dict(taus=[0.1, float("nan")]), "'taus' parameter of run_decision"),
    ("decision", dict(n_jobs=0), "'n_jobs' parameter of run_decision"),
    ("rate", dict(seeds=0), "'seeds' parameter of run_rate"),
    ("rate", dict(sizes=()), "'sizes' parameter of run_rate"),
    ("rate", dict(sizes=500), "'sizes' parameter of run_rate"),
    ("rate", dict(sizes=(500, 500)), "'sizes' parameter of run_rate"),
    ("rate", dict(log2_sobol=100), "'log2_sobol' parameter of run_rate"),
    ("recalibration", dict(seeds=0), "'seeds' parameter of run_recalibration"),
    ("recalibration", dict(n_cal=0), "'n_cal' parameter of run_recalibration"),
    ("recalibration", dict(members=1), "'members' parameter of run_recalibration"),
    ("recalibration", dict(h=0), "'h' parameter of run_recalibration"),
])
def test_the_experiment_runners_name_a_bad_argument_before_any_work(tmp_path, which, kwargs, match):
    """These were met deep inside ('not enough values to unpack' for seeds=0, GaussianMixtureTask.sample_x's 'n'
    for n_cal=0, numpy's 'negative dimensions') or not at all (seeds=0 and sizes=() returned [], a NaN cost gave
    NaN curves)."""
    decision, rate, _, recalibration = _experiments()
    run = {"decision": decision.run_decision, "rate": rate.run_rate,
           "recalibration": recalibration.run_recalibration}[which]
    if which == "rate":
        kwargs = {"out": str(tmp_path / "r"), **kwargs}
    with pytest.raises(ValueError, match=match):
        run(**kwargs)
    assert not (tmp_path / "r").exists()


def test_the_real_labels_runner_and_the_clinic_sampler_name_a_bad_argument():
    decision, _, real_labels, _ = _experiments()
    with pytest.raises(TypeError, match="'data' parameter of run_real_labels must be a socal.datasets.KSnapshots"):
        real_labels.run_real_labels(None)
    with pytest.raises(ValueError, match="'n' parameter of sample_clinic"):
        decision.sample_clinic(-1, 0)
    assert decision.sample_clinic(5, 0)["m"].shape == (5,)


def test_experiment_2_with_one_seed_reports_no_spread_instead_of_nan():
    """'socal reproduce recalibration --seeds 1' printed "0.037+-nan" and wrote NaN into recalibration.json, which
    is not JSON; with one seed there is no spread, and the summary says so (None, "(1 seed)")."""
    pytest.importorskip("sklearn")
    from socal.experiments.recalibration import report, run_recalibration

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's "Degrees of freedom <= 0" before
        res = run_recalibration(seeds=1, n_cal=2000, n_eval=2000, members=3, epochs=5, log2_sobol=10, rng=0)
        summ = res.summary()
    assert summ["ce2_after_sd"] is None and summ["pearson_recal_sd"] is None
    json.dumps(summ, allow_nan=False)
    text = report(res, 1)
    assert "(1 seed)" in text and "nan" not in text
