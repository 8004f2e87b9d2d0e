"""The socal subcommands (socal.commands, socal.cli) on hostile input: one-line errors with exit code 2, options
that would do nothing or overwrite each other refused before any work, outputs checked before the computation."""

import json

import numpy as np
import pytest

import socal
from socal.cli import main


@pytest.fixture
def csv_file(tmp_path):
    m, v, y = socal.synthetic.toy_population().sample(300, h=1 / 16, rng=0)
    path = tmp_path / "s.csv"
    path.write_text("m,v,y1,y2\n" + "".join(f"{float(a)!r},{float(b)!r},{int(c)},{int(d)}\n"
                                            for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])))
    return path


def _run(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


class _AuditRan(Exception):
    pass


def _guard_audit_runner(monkeypatch):
    """Make the audit's runner fail if reached.  It is patched where `socal audit` looks it up: the entry point
    loads socal.verify.cli, a module object other than verify.cli (patching the latter never fired)."""
    import socal.verify.cli

    def ran(*a, **k):
        raise _AuditRan("the audit ran")

    monkeypatch.setattr(socal.verify.cli, "run", ran)


@pytest.mark.parametrize("make,match", [
    (lambda p: p.parent / "missing.csv", "not found"),
    (lambda p: p.parent, "a folder"),
    (lambda p: (p.write_text(p.read_text() + "0.5,0.1\n"), p)[1], "line 302"),
    (lambda p: (p.write_text("m,v,y1,y1\n0.5,0.1,0,1\n"), p)[1], "more than once"),
])
def test_cli_user_errors_are_one_line_exit_2(capsys, csv_file, make, match):
    path = make(csv_file)
    code, _, err = _run(capsys, ["estimate", str(path), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                 "--no-interval"])
    assert code == 2 and match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_bom_fractional_h_and_counts(capsys, csv_file, tmp_path):
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + csv_file.read_bytes())
    code, out, err = _run(capsys, ["estimate", str(bom), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                   "--h", "1/16", "--no-interval", "--json"])
    assert code == 0, err
    res = json.loads(out)
    assert res["ce2"]["h"] == 1 / 16
    counts = tmp_path / "counts.csv"
    rows = csv_file.read_text().splitlines()[1:]
    counts.write_text("m,v,pos,k\n" + "".join(f"{r.split(',')[0]},{r.split(',')[1]},"
                                              f"{int(r.split(',')[2]) + int(r.split(',')[3])},2\n" for r in rows))
    code, out2, _ = _run(capsys, ["estimate", str(counts), "--mean", "m", "--var", "v", "--positives", "pos",
                                  "--trials", "k", "--h", "1/16", "--no-interval", "--json"])
    assert code == 0 and abs(json.loads(out2)["ce2"]["estimate"] - res["ce2"]["estimate"]) < 1e-12


def test_cli_empty_cells_are_missing_votes(capsys, csv_file):
    text = csv_file.read_text().splitlines()
    text[5] = text[5].rsplit(",", 1)[0] + ","  # y2 empty on one row
    csv_file.write_text("\n".join(text) + "\n")
    code, _, err = _run(capsys, ["estimate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                 "--no-interval", "--json"])
    # one vote left on that row (k = 1 < 2): left out with a note, as 'evaluate' does (it was refused in the name
    # of 'counts[1] (trials)', a parameter the user never gave)
    assert code == 0 and "left out 1 of 300 rows with fewer than 2 labels (missing votes; data rows 5)" in err
    y3 = [r + ",1" for r in text[1:]]
    csv_file.write_text("m,v,y1,y2,y3\n" + "\n".join(y3) + "\n")
    code, out, err = _run(capsys, ["estimate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2,y3",
                                   "--no-interval", "--json"])
    assert code == 0 and "1 empty label cell(s) read as missing votes" in err


@pytest.mark.parametrize("argv,match", [
    (["estimate", "x.csv", "--mean", "m", "--var", "v", "--labels", ""], "at least one column"),
    (["estimate", "x.csv", "--mean", "m", "--var", "v"], "--labels"),
    (["estimate", "x.csv", "--mean", "m", "--var", "v", "--labels", "a,b", "--h", "0"], "--h"),
    (["estimate", "x.csv", "--mean", "m", "--var", "v", "--labels", "a,b", "--ci", "1.5"], "--ci"),
    (["demo", "--n", "-5"], "--n"),
])
def test_cli_bad_options(capsys, tmp_path, monkeypatch, argv, match):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.csv").write_text("m,v,a,b\n0.5,0.1,0,1\n")
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors exit 2
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and match in err and "Traceback" not in err


def test_cli_real_labels_on_an_empty_folder(capsys, tmp_path):
    code, _, err = _run(capsys, ["reproduce", "real-labels", "--data-dir", str(tmp_path), "--repeats", "2",
                                 "--out", str(tmp_path / "o")])
    assert code == 2 and "not found" in err and "Traceback" not in err


def test_cli_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and socal.__version__ in capsys.readouterr().out


def test_audit_only_empty_is_refused(capsys):
    pytest.importorskip("sympy")
    code, _, err = _run(capsys, ["audit", "--only", ""])
    assert code == 2 and "--only needs at least one claim id" in err


def test_missing_optional_dependency_is_reported_before_work(capsys, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a))
    code, out, err = _run(capsys, ["reproduce", "rate", "--quick", "--out", str(tmp_path / "r")])
    assert code == 2 and "pip install 'socal[experiments]'" in err and "sklearn" in err
    assert not (tmp_path / "r").exists()  # nothing was started


def test_the_audit_runner_guard_fires_on_a_command_that_runs_the_audit(monkeypatch):
    """The negative control of the two tests that guard the runner: a valid command reaches it."""
    pytest.importorskip("sympy")
    _guard_audit_runner(monkeypatch)
    with pytest.raises(_AuditRan):
        main(["audit", "--quick", "--only", "platt-exact", "--no-progress"])


@pytest.mark.parametrize("argv, match", [
    (["audit", "--quick", "--baseline", "missing.json"], "--baseline missing.json: cannot be read"),
    (["audit", "--quick", "--baseline", "list.json"], "not a report of socal audit --json"),
    (["audit", "--quick", "--baseline", "x.csv"], "--baseline x.csv: not a JSON report"),
    (["audit", "--quick", "--scheduler", "tcp://127.0.0.1:1"], "needs the 'dask' backend"),
    (["reproduce", "rate", "--quick", "--scheduler", "tcp://127.0.0.1:1", "--out", "r"], "needs the 'dask' backend"),
])
def test_audit_and_reproduce_options_are_checked_before_any_work(capsys, tmp_path, monkeypatch, argv, match):
    """A bad --baseline was read after the whole audit; --scheduler without --backend dask was ignored (the work
    ran here).  Both are now refused first: the audit's runner must not be reached."""
    pytest.importorskip("sympy")
    import socal.parallel

    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.csv").write_text("m,v,a,b\n0.5,0.1,0,1\n")
    (tmp_path / "list.json").write_text("[1, 2]")
    _guard_audit_runner(monkeypatch)
    code, _, err = _run(capsys, argv)
    assert code == 2 and match in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="'scheduler' parameter"):
        with socal.parallel.backend("loky", scheduler="tcp://127.0.0.1:1"):
            pass


def test_evaluate_never_writes_over_its_input_and_reads_min_labels_on_complete_columns(capsys, tmp_path,
                                                                                        monkeypatch):
    """--out naming the input file replaced the data with the perturbed scores; --min-labels above the number of
    label columns was ignored when no vote was missing; demo --write into a missing folder gave a bare errno."""
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--write", "d.csv", "--n", "500"]) == 0
    capsys.readouterr()
    before = (tmp_path / "d.csv").read_bytes()
    base = ["evaluate", "d.csv", "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20"]
    for out in ("d.csv", "./d.csv", str(tmp_path / "d.csv")):
        code, _, err = _run(capsys, base + ["--out", out])
        assert code == 2 and "is the input file" in err
    assert (tmp_path / "d.csv").read_bytes() == before
    code, _, err = _run(capsys, base + ["--min-labels", "3"])
    assert code == 2 and "fewer than 3 labels (--min-labels): it has 2 label columns" in err
    code, _, err = _run(capsys, ["demo", "--write", str(tmp_path / "no" / "d.csv")])
    assert code == 2 and "--write" in err and "does not exist" in err
    code, _, _ = _run(capsys, base + ["--min-labels", "2", "--out", "p.csv"])  # the control: both allowed
    assert code == 0 and (tmp_path / "p.csv").read_text().startswith("perturbed_mean,perturbed_var")


def test_evaluate_refuses_a_plot_format_before_any_work(capsys, csv_file, monkeypatch):
    """--plot x.txt ran the whole evaluation, printed it, and only then failed in matplotlib's savefig."""
    pytest.importorskip("matplotlib")

    def no_work(*a, **k):
        raise AssertionError("the evaluation ran")

    monkeypatch.setattr(socal._evaluate, "evaluate", no_work)
    code, out, err = _run(capsys, ["evaluate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                   "--plot", str(csv_file.parent / "x.txt")])
    assert code == 2 and out == ""
    assert "matplotlib cannot write '.txt' files" in err and "nothing was computed" in err


@pytest.mark.parametrize("argv, match", [
    (["audit", "--list", "--json", "x.json"], "--list prints and exits without running the audit, so --json would"),
    (["audit", "--coverage", "--only", "posreal"], "--coverage prints and exits without running the audit, so --only"),
    (["audit", "--list", "--quick", "--markdown", "x.md"], "so --quick, --markdown would do nothing; drop them"),
    (["audit", "--list", "--coverage"], "--list prints and exits without running the audit, so --coverage would"),
    (["audit", "--quick", "--json", "a.json", "--markdown", "./a.json"], "--json and --markdown name the same file (a.json): one would replace the other"),
])
def test_audit_options_that_would_do_nothing_or_overwrite_each_other_are_refused(capsys, tmp_path, monkeypatch,
                                                                                  argv, match):
    """--list and --coverage print and exit: --json, --only, --quick and the like were ignored without a word; and
    one file named for --json and --markdown ended as the Markdown alone."""
    pytest.importorskip("sympy")
    monkeypatch.chdir(tmp_path)
    _guard_audit_runner(monkeypatch)
    code, out, err = _run(capsys, argv)
    assert code == 2 and match in err and out == ""
    assert list(tmp_path.iterdir()) == []


def test_evaluate_refuses_one_file_for_two_outputs(capsys, csv_file, monkeypatch):
    """--out x.png --plot x.png wrote the scores, then the figure over them."""
    monkeypatch.setattr(socal._evaluate, "evaluate", lambda *a, **k: pytest.fail("the evaluation ran"))
    same = csv_file.parent / "x.png"
    code, out, err = _run(capsys, ["evaluate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                   "--out", str(same), "--plot", str(csv_file.parent / "." / "x.png")])
    assert code == 2 and out == "" and "--out and --plot name the same file" in err and not same.exists()


def test_estimate_without_an_interval_refuses_the_interval_options(capsys, csv_file):
    """socal estimate --no-interval --ci 0.8 (or --upper, --n-boot) printed the plug-in and ignored the option; the
    API refuses debias=False with ci.  The defaults are unchanged when the options are left out."""
    base = ["estimate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2", "--json"]
    for extra, named in ((["--ci", "0.8"], "--ci would"), (["--upper", "0.9", "--n-boot", "300"], "--upper, --n-boot")):
        code, out, err = _run(capsys, base + ["--no-interval"] + extra)
        assert code == 2 and out == "" and f"--no-interval runs no bootstrap, so {named}" in err
    code, out, _ = _run(capsys, base)
    got = json.loads(out)["ce2"]
    assert code == 0 and got["ci"]["level"] == 0.9 and got["upper"]["level"] == 0.95
    code, out, _ = _run(capsys, base + ["--ci", "0.9", "--upper", "0.95", "--n-boot", "200"])
    assert json.loads(out)["ce2"] == got  # the defaults, given or left out


@pytest.mark.parametrize("argv, match", [
    (["reproduce", "decision", "--quick", "--repeats", "50"], "--quick runs 20 repeats, so --repeats 50 would do"),
    (["reproduce", "recalibration", "--quick", "--seeds", "5"], "--quick runs 3 seeds, so --seeds 5 would do"),
    (["reproduce", "rate", "--quick", "--seeds", "2"], "--quick runs 3 seeds, so --seeds 2 would do"),
    (["reproduce", "real-labels", "--dataset", "all", "--positive", "1", "--data-dir", "."],
     "--positive 1 names one data set's class, and --dataset all runs 6"),
])
def test_reproduce_options_that_would_be_ignored_are_refused(capsys, tmp_path, monkeypatch, argv, match):
    """--quick overrode --repeats and --seeds, and --dataset all dropped --positive, without a word; now refused
    before any work (no output folder is made)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, argv + ["--out", "r"])
    assert code == 2 and match in err and out == ""
    assert not (tmp_path / "r").exists()


def test_demo_refuses_an_ignored_or_unresolvable_bandwidth(capsys, tmp_path):
    """demo --write x.csv --h 0.5 ignored --h (the file holds raw scores); demo --h 1e-6 printed its header and
    sampled before the exact truth refused the bandwidth."""
    code, out, err = _run(capsys, ["demo", "--write", str(tmp_path / "x.csv"), "--h", "0.5"])
    assert code == 2 and out == "" and "--write saves the raw (unperturbed) scores, so --h would do nothing" in err
    assert not (tmp_path / "x.csv").exists()
    code, out, err = _run(capsys, ["demo", "--h", "1e-6"])
    assert code == 2 and out == "" and "--h 1e-06 is narrower than the demo's exact truth resolves" in err


def test_standard_input_is_refused_with_the_reason(tmp_path, monkeypatch, capsys):
    """'socal evaluate -' said "must be an existing file. Got '-' (not found)": the habit of reading standard input
    is now named, with why it cannot work here (the rows are read more than once)."""
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "-", "--mean", "m", "--var", "v", "--labels", "a,b"]) == 2
    assert "'-' (standard input) cannot be read" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["d.csv", "d.csv.gz", "d.tsv.bz2", "d.xz", "d.parquet"])
def test_demo_write_and_evaluate_out_write_the_format_their_name_says(tmp_path, capsys, name):
    """'socal demo --write d.csv.gz' (or d.parquet) wrote plain comma-separated text under that name, which
    'socal evaluate' then refused ("cannot be decompressed as its name says", "not a readable Parquet file").  A
    file socal writes is now read back by socal as the same columns; so is evaluate --out."""
    from socal import io

    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path, plain = tmp_path / name, tmp_path / "plain.csv"
    for p in (path, plain):
        assert main(["demo", "--n", "400", "--write", str(p)]) == 0
    kw = dict(mean="mean", var="var", labels=["y1", "y2"])
    a, b = io.read_all(io.read_chunks(path, **kw)), io.read_all(io.read_chunks(plain, **kw))
    assert all(np.array_equal(x, z) for x, z in zip(a[:3], b[:3]))
    out = tmp_path / ("out_" + name)
    assert main(["evaluate", str(plain), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20",
                 "--out", str(out)]) == 0
    pd = pytest.importorskip("pandas")
    back = pd.read_parquet(out) if name.endswith(".parquet") else pd.read_csv(out, sep="\t" if ".tsv" in name
                                                                                else ",")
    assert list(back.columns) == ["perturbed_mean", "perturbed_var"] and len(back) == 400


def test_a_compressed_parquet_name_is_refused_before_any_work(tmp_path, capsys):
    assert main(["demo", "--n", "400", "--write", str(tmp_path / "d.parquet.gz")]) == 2
    assert "compressed inside" in capsys.readouterr().err
    assert not (tmp_path / "d.parquet.gz").exists()


def test_demo_shows_progress_bars_only_on_a_terminal_unless_asked(capsys):
    """'socal demo' and 'socal reproduce' drew their bars whatever stderr was, so a log file or a pipe collected
    every redraw; estimate and evaluate already drew them on a terminal only.  --progress forces them."""
    assert main(["demo", "--n", "400"]) == 0
    assert "rows/s" not in capsys.readouterr().err  # pytest's captured stderr is not a terminal
    assert main(["demo", "--n", "400", "--progress"]) == 0
    assert "rows/s" in capsys.readouterr().err


def test_a_negative_fraction_for_h_gets_h_s_own_message(capsys):
    """'--h -1/16' made argparse say "expected one argument" (a token starting with '-' that does not look like a
    number is read as an option); it now gets --h's rule, as '--h=-1/16' did."""
    with pytest.raises(SystemExit):
        main(["demo", "--h", "-1/16"])
    assert "must be a positive number such as 0.0625 or 1/16" in capsys.readouterr().err


def test_a_table_written_to_standard_output_is_refused_before_any_work(tmp_path, monkeypatch, capsys, csv_file):
    """'socal evaluate --out -' (and 'demo --write -') wrote a file named '-' next to the user's data, where a Unix
    user expects standard output, which carries the report."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, ["demo", "--n", "400", "--write", "-"])
    assert code == 2 and "--write -: standard output carries the report" in err
    code, _, err = _run(capsys, ["evaluate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2",
                                 "--out", "-"])
    assert code == 2 and "--out -: standard output carries the report" in err and "nothing was computed" in err
    assert not (tmp_path / "-").exists()


def test_a_report_written_to_standard_output_is_refused_before_any_work(tmp_path, monkeypatch, capsys, csv_file):
    """'socal audit --json -' (and --markdown -, evaluate --plot -) wrote a file named '-' after the audit's work,
    and 'reproduce ... --out -' a folder named '-', while --out - and --write - were already refused: every output
    path is now checked alike."""
    monkeypatch.chdir(tmp_path)
    for argv, flag in ((["audit", "--only", "posreal", "--json", "-"], "--json"),
                       (["audit", "--only", "posreal", "--markdown", "-"], "--markdown"),
                       (["evaluate", str(csv_file), "--mean", "m", "--var", "v", "--labels", "y1,y2", "--plot", "-"],
                        "--plot")):
        code, _, err = _run(capsys, argv)
        assert code == 2 and f"{flag} -: standard output carries the report" in err and "nothing was computed" in err
    code, _, err = _run(capsys, ["reproduce", "decision", "--repeats", "2", "--out", "-"])  # a folder named '-'
    assert code == 2 and "--out -: standard output carries the report; give a folder" in err
    assert not (tmp_path / "-").exists()


def test_underscores_in_numbers_are_not_read_as_digit_separators(tmp_path, capsys):
    """Python's float reads '0.0_5' as 0.05, '1_6' as 16 and fullwidth digits as digits: a CSV cell '0.0_5' was
    read as 0.05 on the row-by-row parse (numpy's fast parse refuses it, so the same cell was refused or read
    depending on its neighbours), and '--h 1_6' (a typo of 1/6) blurred the scores by h = 16.  All are refused."""
    path = tmp_path / "u.csv"
    path.write_text("m,v,y1,y2,y3\n0.4,0.0_5,0,1,\n")  # the empty cell sends the file to the row-by-row parse
    with pytest.raises(ValueError, match=r"u\.csv, line 2, column 'v': '0\.0_5' is not a number"):
        socal.io.read_all(socal.io.read_chunks(path, mean="m", var="v", labels=["y1", "y2", "y3"]))
    wide = tmp_path / "w.csv"
    wide.write_text("m,v,y1,y2,y3\n\uff10.\uff14,0.05,0,1,\n", encoding="utf-8")  # fullwidth '０.４'
    with pytest.raises(ValueError, match=r"w\.csv, line 2, column 'm': '\uff10\.\uff14' is not a number"):
        socal.io.read_all(socal.io.read_chunks(wide, mean="m", var="v", labels=["y1", "y2", "y3"]))
    for flag, value in (("--h", "1_6"), ("--ci", "0.9_5")):
        with pytest.raises(SystemExit) as exc:  # argparse's usage error
            main(["evaluate", str(path), "--mean", "m", "--var", "v", "--labels", "y1,y2", flag, value])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and f"argument {flag}: must be" in err and repr(value) in err


def test_whole_numbers_in_scientific_notation_are_read(tmp_path, monkeypatch, capsys):
    """'socal demo --n 1e3' (as sizes are written) was refused as 'must be a whole number'; a whole number in
    scientific notation is read now, and a fraction is still refused."""
    monkeypatch.chdir(tmp_path)
    for text, rows in (("1e3", 1000), ("1.5e2", 150)):
        code, out, _ = _run(capsys, ["demo", "--n", text, "--write", f"d{rows}.csv"])
        assert code == 0 and f"wrote {rows} rows" in out
        assert len((tmp_path / f"d{rows}.csv").read_text().splitlines()) == rows + 1
    for text in ("150.5", "inf", "1e400", "1_0e2"):
        with pytest.raises(SystemExit):
            main(["demo", "--n", text])
        assert f"argument --n: must be a whole number (got {text!r})" in capsys.readouterr().err


def test_whole_numbers_are_ascii_digits_as_levels_are(tmp_path, monkeypatch, capsys):
    """'--n 1_000' and '--n' in other scripts' digits ('\u0663\u0660\u0660', Arabic-Indic 300) were read, since
    Python's int() takes both, while '--ci 0.9_5' was refused: the parsers disagreed.  Whole numbers are ASCII digits
    now; plain digits are still read (scientific notation: the test above)."""
    monkeypatch.chdir(tmp_path)
    for text in ("1_000", "\u0663\u0660\u0660", "\uff13\uff10\uff10"):  # underscore, Arabic-Indic, full-width
        with pytest.raises(SystemExit):
            main(["demo", "--n", text])
        assert f"argument --n: must be a whole number (got {text!r})" in capsys.readouterr().err
    code, out, _ = _run(capsys, ["demo", "--n", "300", "--write", "d.csv"])
    assert code == 0 and "wrote 300 rows" in out
