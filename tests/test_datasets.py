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


def test_truncated_and_malformed_files_refused(tmp_path):
    w = tmp_path / "CF_amt.csv"
    w.write_text("w1,t1,0,1,0\nw2,t1,1,1,0\nw3,t2,2,2,0\nw4,t2,4,2,0\n")
    assert datasets.load_weather(w).counts.sum() == 4
    w.write_text("w1,t1,0,1,0\nw2,t1,1,1,0\nw3,t2,2,2")  # cut in the middle of a line
    with pytest.raises(ValueError, match=r"line 3: the last line has no newline"):
        datasets.load_weather(w)
    w.write_text("w1,t1,0,1,0\nw2,t1\nw3,t2,2,2,0\n")
    with pytest.raises(ValueError, match=r"CF_amt\.csv, line 2: field 3 \(label\)"):
        datasets.load_weather(w)
    w.write_text("w1,t1,x,1,0\n")
    with pytest.raises(ValueError, match=r"line 1: field 3 \(label\) must be int, got 'x'"):
        datasets.load_weather(w)
    d = tmp_path / "dog"
    d.mkdir()
    (d / "dog_crowd.txt").write_text("1 1 2\n1 2 2\n2 1\n")
    (d / "dog_truth.txt").write_text("1 2\n1 2\n2 1\n")
    with pytest.raises(ValueError, match=r"dog_crowd\.txt, line 3: 2 field"):
        datasets.load_dog(d)
    with pytest.raises(ValueError, match="not found"):
        datasets.load_weather(tmp_path / "nope.csv")


def test_checksum_catches_a_cut_copy_of_the_shared_data(tmp_path, data_dir):
    src = data_dir / "snow2008_rte"
    dst = tmp_path / "snow2008_rte"
    dst.mkdir()
    (dst / "SOURCE.md").write_text((src / "SOURCE.md").read_text())
    lines = (src / "rte.standardized.tsv").read_text().splitlines(keepends=True)
    (dst / "rte.standardized.tsv").write_text("".join(lines[: len(lines) // 2]))  # half the file, whole lines
    with pytest.raises(ValueError, match="sha256 .* modified or truncated"):
        datasets.load_rte(dst)
    half = datasets.load_rte(dst, verify=False)  # asked for explicitly, it loads
    assert half.votes.sum() < datasets.load_rte(src).votes.sum()


@pytest.mark.parametrize("bad", [-3, 0, 2.5, True, "20"])
def test_max_votes_domain(tmp_path, bad):
    w = tmp_path / "CF_amt.csv"
    w.write_text("w1,t1,0,1,0\nw2,t1,1,1,0\n")
    with pytest.raises(ValueError, match="'max_votes'"):
        datasets.load_weather(w, max_votes=bad)


@pytest.mark.parametrize("bad", [-1, 1.5, 5, "cat", None])
def test_binarise_domain(tmp_path, bad):
    w = tmp_path / "CF_amt.csv"
    w.write_text("w1,t1,0,1,0\nw2,t1,1,1,0\nw3,t2,4,1,0\n")
    data = datasets.load_weather(w)
    with pytest.raises(ValueError, match="'positive' parameter of KSnapshots.binarise"):
        data.binarise(bad)
    assert data.binarise(4)[0].tolist() == [0.0, 1.0]


def test_judgment_rows_that_are_not_triples_are_named():
    for rows in ([("w1", "i1")], [3], [("w1", "i1", "a"), ("w1", "i2", "a", "extra")]):
        with pytest.raises(ValueError, match=r"'rows' parameter of from_judgments \(t\) must hold \(worker, item"):
            datasets.from_judgments("t", rows, ["a", "b"])


def test_dataset_load_names_a_bad_folder_or_option(tmp_path):
    """load('weather', None) was pathlib's TypeError, and an unknown option from_judgments' TypeError ("got an
    unexpected keyword argument"); both are now ValueErrors of load that say what it takes.  Checked before any
    file is read, so no data are needed."""
    for bad in (None, 3, tmp_path / "missing"):
        with pytest.raises(ValueError, match="'data_dir' parameter of load must be a folder"):
            datasets.load("weather", bad)
    with pytest.raises(ValueError, match=r"load\('weather'\) takes 'max_votes', 'on_duplicate', 'verify'; got 'bogus'"):
        datasets.load("weather", tmp_path, bogus=1)
    with pytest.raises(ValueError, match=r"load\('cifar10h'\) takes 'max_votes', 'rng', 'verify'; got 'on_duplicate'"):
        datasets.load("cifar10h", tmp_path, on_duplicate="raise")  # count data: no worker ids to deduplicate
    with pytest.raises((OSError, ValueError), match="(?i)chaosnli|no such file|not found"):
        datasets.load("chaosnli", tmp_path, subset="mnli")  # a real option: it reaches the loader, which finds no file


def test_from_judgments_refuses_a_gold_label_outside_the_classes():
    """A gold label that is not one of the classes (a typo, or the classes coded otherwise: 'Yes' for 'yes') was
    read as 'no gold label', -1, silently; a gold given as a list raised AttributeError ('list' has no 'get')."""
    rows = [("w1", "a", "x"), ("w2", "a", "y"), ("w1", "b", "x"), ("w2", "b", "x")]
    assert datasets.from_judgments("t", rows, ("x", "y"), gold={"a": "y", "zz": "x"}).gold.tolist() == [1, -1]
    with pytest.raises(ValueError, match="gold label of item 'a' is 'Y', not one of the classes"):
        datasets.from_judgments("t", rows, ("x", "y"), gold={"a": "Y"})
    with pytest.raises(TypeError, match="'gold' parameter of from_judgments \\(t\\) must be a mapping"):
        datasets.from_judgments("t", rows, ("x", "y"), gold=[("a", "y")])
    with pytest.raises(ValueError, match="'on_duplicate' parameter of from_judgments"):
        datasets.from_judgments("t", rows, ("x", "y"), on_duplicate="error")
