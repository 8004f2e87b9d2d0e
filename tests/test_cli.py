import json

import numpy as np
import pytest

from socal import synthetic
from socal.cli import main


@pytest.fixture
def csv_file(tmp_path):
    m, v, y = synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    path = tmp_path / "scores.csv"
    with open(path, "w") as fh:
        fh.write("m,v,y1,y2\n")
        for row in zip(m, v, y[:, 0], y[:, 1]):
            fh.write(",".join(repr(float(x)) for x in row) + "\n")
    return path


def test_estimate_json(csv_file, capsys):
    assert main(["estimate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2", "--h", "0.0625",
                 "--n-boot", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    truth = synthetic.toy_population().ce2(1 / 16).value
    assert abs(out["ce2"]["estimate"] - truth) < 0.05
    assert out["ce2"]["ci"]["low"] <= out["ce2"]["ci"]["high"]
    assert out["ce1"]["kind"] == "ce1"


def test_estimate_candidates_table(csv_file, capsys):
    """--candidates prints each degree compared; the reported one is marked, and the printed interval's ends are
    the lowest and highest of the candidates' (the union)."""
    args = ["estimate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2", "--h", "0.0625",
            "--n-boot", "20"]
    assert main(args + ["--candidates"]) == 0
    out = capsys.readouterr().out
    assert main(args + ["--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    for kind in ("ce2", "ce1"):
        cands = js[kind]["candidates"]
        assert min(c["ci"]["low"] for c in cands) == js[kind]["ci"]["low"]
        assert max(c["ci"]["high"] for c in cands) == js[kind]["ci"]["high"]
        assert sum(c["chosen"] for c in cands) == 1
    assert out.count("<- reported") == 2 and out.count("bias high") == 2
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [int(r[0]) for r in rows] == [c["degree"] for k in ("ce2", "ce1") for c in js[k]["candidates"]]
    assert main(args[:-2] + ["--no-interval", "--candidates"]) == 0  # without --n-boot, which it would not read
    assert "no bootstrap" in capsys.readouterr().out


def test_estimate_reports_missing_column(csv_file, capsys):
    assert main(["estimate", str(csv_file), "--mean", "m", "--var", "nope", "--labels", "y1,y2"]) == 2
    assert "nope" in capsys.readouterr().err


def test_estimate_reports_bad_values(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    rows = ["m,v,y1,y2"] + [f"{0.1 * (i % 9) + 0.05},0.3,1,0" for i in range(40)]
    path.write_text("\n".join(rows) + "\n")
    assert main(["estimate", str(path), "--mean", "m", "--var", "v", "--labels", "y1,y2"]) == 2
    assert "'var'" in capsys.readouterr().err


def test_demo_runs(capsys):
    assert main(["demo", "--n", "2000"]) == 0
    out = capsys.readouterr().out
    assert "exact CE2^pert" in out and "CE1 =" in out


def test_evaluate_prints_the_same_for_the_rows_in_another_order(tmp_path, capsys):
    """The command reads the rows of a file, perturbs them keyed by content and estimates: the same rows shuffled
    print the same report, digit for digit (before, the perturbation followed the row order and the CE2 line of the
    README's demo moved from 0.1369 [0.1287, 0.1508] to 0.1345 [0.1282, 0.1490])."""
    m, v, _, y = synthetic.toy_population().sample_raw(3000, rng=0)
    p = np.random.default_rng(1).permutation(m.size)
    printed = []
    for name, order in (("a.csv", np.arange(m.size)), ("b.csv", p)):
        path = tmp_path / name
        rows = [f"{float(m[i])!r},{float(v[i])!r},{int(y[i, 0])},{int(y[i, 1])}" for i in order]
        path.write_text("mean,var,y1,y2\n" + "\n".join(rows) + "\n")
        assert main(["evaluate", str(path), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20"]) == 0
        printed.append(capsys.readouterr().out.replace(name, "FILE"))
    assert "CE2 (mean and var)" in printed[0]
    assert printed[0] == printed[1]


def test_estimate_says_where_the_interval_reaches_zero(tmp_path, capsys):
    """On calibrated scores whose candidates' interval stays above 0, the printed interval reaches 0 and says why
    (the calibration test of CE = 0 on the same rows does not reject); --candidates prints the test's p-value."""
    m, v, _, y = synthetic.beta_calibrated_sample(1500, rng=0)  # both brackets miss 0 (tests/test_estimators.py)
    path = tmp_path / "cal.csv"
    path.write_text("m,v,y1,y2\n" + "".join(f"{float(a)!r},{float(b)!r},{int(c)},{int(d)}\n"
                                            for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])))
    args = ["estimate", str(path), "--mean", "m", "--var", "v", "--labels", "y1,y2"]
    assert main(args + ["--candidates"]) == 0
    out = capsys.readouterr().out
    for kind in ("CE2", "CE1"):
        assert f"90% CI [0.0000, " in out and f"(reaches 0: the calibration test of {kind} = 0 does not reject" in out
        assert f"calibration test of {kind} = 0 on the same scores: p = " in out and "so the interval reaches 0" in out
    assert main(args + ["--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["ce2"]["ci"]["low"] == 0.0 and js["ce2"]["null_pvalue"] >= 0.1


def test_estimate_leaves_out_rows_with_missing_votes_as_evaluate_does(tmp_path, capsys):
    """A row of one vote (an empty label cell) stopped 'socal estimate' with "The 'counts[1] (trials)' parameter of
    ce2 ... must be in [2, ...]", a parameter the user never gave; 'evaluate' drops such rows with a note.  Now
    'estimate' leaves them out of its stream too (--min-labels, default 2) and says which; the estimate is that of
    the complete rows."""
    m, v, y = synthetic.toy_population().sample(600, h=1 / 16, rng=1)
    path = tmp_path / "votes.csv"
    with open(path, "w") as fh:
        fh.write("m,v,y1,y2\n")
        for i, row in enumerate(zip(m, v, y[:, 0], y[:, 1])):
            cells = [repr(float(x)) for x in row]
            if i in (3, 10):
                cells[3] = ""  # one vote missing
            fh.write(",".join(cells) + "\n")
    base = ["estimate", str(path), "--mean", "m", "--var", "v", "--labels", "y1,y2", "--no-interval", "--json"]
    assert main(base) == 0
    captured = capsys.readouterr()
    assert "left out 2 of 600 rows with fewer than 2 labels (missing votes; data rows 4, 11)" in captured.err
    got = json.loads(captured.out)
    keep = np.setdiff1d(np.arange(600), [3, 10])
    complete = tmp_path / "complete.csv"
    with open(complete, "w") as fh:
        fh.write("m,v,y1,y2\n")
        for row in zip(m[keep], v[keep], y[keep, 0], y[keep, 1]):
            fh.write(",".join(repr(float(x)) for x in row) + "\n")
    assert main(["estimate", str(complete)] + base[2:]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert got["ce2"]["n"] == 598 and got["ce2"]["estimate"] == ref["ce2"]["estimate"]
    assert main(base + ["--min-labels", "3"]) == 2
    assert "every row of" in capsys.readouterr().err


def test_reproduce_out_naming_a_file_is_refused_before_work(tmp_path, capsys):
    """reproduce ... --out FILE failed with mkdir's "[Errno 17] File exists: 'FILE'"; it is named as a file now,
    before any work, for every experiment."""
    target = tmp_path / "taken.csv"
    target.write_text("x\n")
    for exp in ("decision", "rate"):
        assert main(["reproduce", exp, "--quick", "--out", str(target)]) == 2
        assert f"--out {target} is a file; give a folder" in capsys.readouterr().err
    assert target.read_text() == "x\n"


def test_rows_below_min_labels_from_count_columns_are_not_called_missing_votes(tmp_path, capsys):
    """A row whose trials column says 1 was reported as "(missing votes; ...)" when left out: there is no empty
    cell; the note names the column instead (estimate and evaluate alike)."""
    m, v, y = synthetic.toy_population().sample(300, h=1 / 16, rng=1)
    path = tmp_path / "counts.csv"
    with open(path, "w") as fh:
        fh.write("m,v,p,t\n")
        for i, (a, b, c) in enumerate(zip(m, v, y.sum(axis=1))):
            trials, pos = (1, min(int(c), 1)) if i == 7 else (2, int(c))
            fh.write(f"{float(a)!r},{float(b)!r},{pos},{trials}\n")
    assert main(["estimate", str(path), "--mean", "m", "--var", "v", "--positives", "p", "--trials", "t",
                 "--no-interval"]) == 0
    err = capsys.readouterr().err
    assert "left out 1 of 300 rows with fewer than 2 labels (column 't' below it; data rows 8)" in err
    assert "missing votes" not in err
