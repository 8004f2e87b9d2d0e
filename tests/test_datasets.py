"""Loaders on every data set in ../shared/data (skipped, with the reason, where that folder is absent), validation
of bad files, and Experiment 4 reduced."""

import warnings

import numpy as np
import pytest

from socal import datasets


# statistics stated in each data set's SOURCE.md / ../shared/data/README.md
EXPECTED = {
    "weather": (300, 5, 20, 25),
    "cifar10h": (10_000, 10, 47, 63),
    "chaosnli": (1514, 3, 100, 100),
    "rte": (800, 2, 10, 10),
    "temp": (462, 2, 10, 10),
    "bluebirds": (108, 2, 39, 39),
    "dog": (807, 4, 10, 10),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loader_matches_documented_statistics(name, data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", datasets.DataWarning)
        d = datasets.load(name, data_dir)
    items, classes, vmin, vmax = EXPECTED[name]
    assert d.counts.shape == (items, classes)
    assert d.votes.min() == vmin and d.votes.max() == vmax
    a, k = d.binarise(d.classes[0])
    assert np.all((0 <= a) & (a <= k))


def test_weather_duplicates_reported_and_first_20_votes(data_dir):
    with pytest.warns(datasets.DataWarning, match="dropped 5 duplicate"):
        d = datasets.load("weather", data_dir)
    assert d.report["duplicates_dropped"] == 5 and d.report["ragged"]
    assert d.report["votes_per_item"] == {20: 290, 21: 2, 22: 5, 24: 2, 25: 1}
    with pytest.warns(datasets.DataWarning):
        d20 = datasets.load("weather", data_dir, max_votes=20)
    assert d20.counts.sum(axis=0).tolist() == [1164, 1523, 1709, 1320, 284]  # as SOURCE.md computes
    with pytest.raises(ValueError, match="repeats worker"):
        datasets.load("weather", data_dir, on_duplicate="raise")


def test_unknown_class_and_duplicates_are_not_passed_on(tmp_path):
    with pytest.raises(ValueError, match="row 2 has label 7"):
        datasets.from_judgments("t", [("w1", "i1", 0), ("w2", "i1", 7)], (0, 1))
    with pytest.warns(datasets.DataWarning):
        d = datasets.from_judgments("t", [("w1", "i1", 0), ("w1", "i1", 0), ("w2", "i1", 1)], (0, 1))
    assert d.counts.tolist() == [[1, 1]]
    (tmp_path / "CF_amt.csv").write_text("w1,5,0,0,1\nw2,5,9,0,1\n")
    with pytest.raises(ValueError, match="label 9"):
        datasets.load_weather(tmp_path)


def test_experiment_4_reduced_matches_paper_at_5_percent(data_dir):
    from socal.experiments.real_labels import run_real_labels

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", datasets.DataWarning)
        d = datasets.load("weather", data_dir, max_votes=20)
    r = run_real_labels(d, positive=1, repeats=200, rng=0)
    y = {k: v[0] for k, v in r.at(0.05).items()}
    assert abs(y["2-D second-order"] - 46.4) < 3 and abs(y["2-D first-order"] - 30.9) < 3
    assert abs(y["oracle"] - 49.8) < 3
    for m in ("raw 2m(1-m)", "raw s", "raw 1-s", "1-D first-order", "1-D second-order"):
        assert abs(y[m] - 26) < 3, (m, y[m])
    lift = r.auc_lift()
    assert all(v["ci95"][0] > 0 and v["win_fraction"] >= 0.97 for v in lift.values()), lift
