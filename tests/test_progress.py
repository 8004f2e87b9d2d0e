"""Progress on long runs (issue 26): the bars count the real work, stay at the end with the elapsed time, work
without tqdm, and the CLI shows them on a terminal or with --progress."""

import builtins

import pytest

import socal
from socal import synthetic
from socal.cli import main


def _err(capsys):
    return capsys.readouterr().err.replace("\r", "\n")


def test_ce2_progress_counts_rows_in_every_pass(capsys):
    pytest.importorskip("tqdm")
    m, v, y = synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    socal.ce2(m, v, y, h=1 / 16, n_boot=40, rng=0, progress=True)
    err = _err(capsys)
    assert "ce2: statistics" in err and "3.00k/3.00k" in err and "rows" in err
    assert "deviations and the bootstrap world at degree 6: 100%" in err and "rows under the refits: 100%" in err
    socal.ce2(m, v, y, h=1 / 16, n_boot=40, rng=0)
    assert _err(capsys) == ""  # silent by default


def test_the_fallback_without_tqdm_counts_and_keeps_the_line(capsys, monkeypatch):
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError("no tqdm here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    m, v, _, y = synthetic.toy_population().sample_raw(2000, rng=0)
    socal.calibration_test(m, v, y, progress=True)
    err = _err(capsys)
    assert "calibration test (order 2): 2,000/2,000 rows [" in err and err.endswith(" s]\n")


def test_cli_progress_flag(tmp_path, capsys):
    pytest.importorskip("tqdm")
    path = tmp_path / "d.csv"
    assert main(["demo", "--write", str(path), "--n", "600"]) == 0
    capsys.readouterr()
    args = ["evaluate", str(path), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20"]
    assert main(args + ["--progress"]) == 0
    err = _err(capsys)
    assert "calibration test (order 2)" in err and "ce2 bootstrap at degree" in err and "ce1: statistics" in err
    assert main(args + ["--no-progress"]) == 0
    assert _err(capsys) == ""
