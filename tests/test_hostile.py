"""Every bad input named in the hostile-input report (issue 12) gets a clear error that names the argument, or, at a
domain edge within round-off, a clipped answer; none hangs, crashes with an unrelated error, or passes silently."""

import errno
import json
import math
import os
import re
import warnings

import numpy as np
import pytest

import socal
from socal import datasets
from socal.cli import main


@pytest.fixture(scope="module")
def small():
    m, v, y = socal.synthetic.toy_population().sample(400, h=1 / 16, rng=0)
    return m, v, y


def test_ce2_without_var_is_refused_not_ce1(small):
    m, v, y = small
    with pytest.raises(ValueError, match="'var' parameter of ce2 .* use ce1"):
        socal.ce2(m, None, y, debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of ce2 must be an \\(n, k\\) array with k >= 2"):
        socal.ce2(m, v, y[:, :1], debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of calibration_functions"):
        socal.calibration_functions(m, v, y[:, :1])


@pytest.mark.parametrize("kw,n", [({"max_degree": 0}, 400), ({"folds": 2}, 4), ({"folds": 2}, 7),
                                  ({"holdout": 0.7}, 10), ({"max_degree": 1}, 10), ({"degree": 0, "alpha": 0.0}, 10)])
def test_degenerate_sizes_finish(small, kw, n):
    """These looped forever in the degree schedule (floor 0: 0 // 2 == 0); now they finish with a finite answer."""
    m, v, y = small
    res = socal.ce2(m[:n], v[:n], y[:n], rng=0, **kw, debias=False)
    assert math.isfinite(res.estimate) and res.degree >= 0


def test_degree_schedule_terminates_everywhere():
    from socal.degrees import degree_schedule

    for lmax in range(0, 60):
        for floor in range(0, lmax + 2):
            s = degree_schedule(lmax, floor)
            assert s[0] == lmax and list(s) == sorted(set(s), reverse=True) and s[-1] >= min(floor, lmax)


def test_too_few_items_for_the_folds(small):
    m, v, y = small
    with pytest.raises(ValueError, match="at least 10 items"):
        socal.ce2(m[:9], v[:9], y[:9], debias=False)


def test_huge_and_overflowing_counts():
    n = 50
    m, v = np.linspace(0.1, 0.9, n), np.zeros(n)  # f* = m and no spread: CE2 = 0 exactly
    k = np.full(n, 4e9)
    a = np.round(k * m)
    # was: int64 overflow into negative targets
    res = socal.ce2(m, v, counts=(a, k), degree=2, alpha=1e-3, debias=False)
    assert 0 <= res.estimate < 0.01  # f* = m exactly (up to rounding a = k m): calibrated means
    k10 = np.full(n, 1e10)
    # was: a 74 GiB allocation
    res = socal.ce2(m, v, counts=(np.round(k10 * m), k10), degree=2, alpha=1e-3, debias=False)
    assert 0 <= res.estimate < 0.01
    from socal._validation import MAX_TRIALS

    with pytest.raises(ValueError, match=rf"'counts\[1\] \(trials\)' parameter of ce2 must be in \[2, {MAX_TRIALS}\]"):
        socal.ce2(m, v, counts=(a, np.full(n, 1e17)), debias=False)
    with pytest.raises(ValueError, match="whole numbers"):
        socal.ce2(m, v, counts=(a + 0.5, k), debias=False)


@pytest.mark.parametrize("h,match", [(1e-17, "'degree' parameter of ce2 is 'paper'.*above the limit"),
                                     (1e200, "'h' parameter"), (-1, "'h' parameter"),
                                     (float("nan"), "'h' parameter"), (True, "'h' parameter"), ("1/16", "'h'")])
def test_bandwidth_extremes(small, h, match):
    m, v, y = small
    with pytest.raises(ValueError, match=match):
        socal.ce2(m, v, y, h=h, degree="paper", debias=False)
    if match == "'h' parameter" or h == "1/16":
        with pytest.raises(ValueError, match="'h' parameter"):
            socal.SecondOrderPlatt(h=h).fit(m, v, y)


def test_paper_degree_domain():
    assert socal.paper_degree(1000, 1 / 16) == math.ceil(2 * math.log(1000) / math.log(socal.theta(1 / 16)))
    assert socal.paper_degree(10.5, 0.1) == math.ceil(2 * math.log(10.5) / math.log(socal.theta(0.1)))
    for args in ((1000, -1), (0, 0.1), (10, 0.0), (float("nan"), 0.1), ("10", 0.1)):
        with pytest.raises(ValueError, match="parameter of paper_degree"):
            socal.paper_degree(*args)


@pytest.mark.parametrize("kw,match", [({"alpha": []}, "'alpha'"), ({"alpha": [[1e-3]]}, "'alpha'"),
                                      ({"degree": []}, "'degree'"), ({"degree": -1}, "'degree'"),
                                      ({"degree": 4.5}, "'degree'"), ({"degree": "high"}, "'degree'"),
                                      ({"alpha": -1.0}, "'alpha'"), ({"folds": 1}, "'folds'"),
                                      ({"holdout": 1.0}, "'holdout'"), ({"ci": 1.0}, "'ci'"),
                                      ({"n_boot": 5}, "'n_boot'"), ({"rng": "seed"}, "'rng'")])
def test_bad_options_name_the_argument(small, kw, match):
    m, v, y = small
    with pytest.raises(ValueError, match=match):
        socal.ce2(m, v, y, **kw, debias=False)


def test_zero_dimensional_arrays_are_scalars(small):
    m, v, y = small
    a = socal.ce2(m, v, y, degree=np.array(4), alpha=np.array(1e-3), debias=False)
    b = socal.ce2(m, v, y, degree=4, alpha=1e-3, debias=False)
    assert a.estimate == b.estimate and a.degree == 4


def test_round_off_at_the_edges_is_clipped_beyond_is_refused(small):
    m, v, y = small
    m2, v2 = m.copy(), v.copy()
    m2[0], v2[0] = 1 + 1e-12, -1e-17
    ref_m, ref_v = m.copy(), v.copy()
    ref_m[0], ref_v[0] = 1.0, 0.0
    assert socal.ce2(m2, v2, y, degree=4, alpha=1e-3, debias=False).estimate == socal.ce2(ref_m, ref_v, y, degree=4,
                                                                          alpha=1e-3, debias=False).estimate
    m32 = m.astype(np.float32)
    m32[0] = np.float32(1.0000001)
    assert math.isfinite(socal.ce2(m32, v, y, degree=4, alpha=1e-3, debias=False).estimate)
    m2[0] = 1 + 1e-6
    with pytest.raises(ValueError, match="'mean' parameter of ce2 must be in \\[0, 1\\]"):
        socal.ce2(m2, v, y, debias=False)
    v2[0] = 0.25 + 1e-6
    with pytest.raises(ValueError, match="'var' parameter of ce2 must be in \\[0, 1/4\\]"):
        socal.ce2(m, v2, y, debias=False)


@pytest.mark.parametrize("bad", [np.array(["a"] * 400), np.zeros((400, 1)), np.full(400, np.nan), None,
                                 np.zeros(399), [object()] * 400, np.zeros(400, dtype=complex)])
def test_bad_mean_arrays(small, bad):
    _, v, y = small
    with pytest.raises(ValueError, match="'mean' parameter of ce2|the same shape as 'mean'"):
        socal.ce2(bad, v, y, debias=False)


def test_sech_kernel_centre_outside_support():
    k = socal.SechKernel(1 / 1024)
    for fn in (lambda: k.ppf(0.5, 2.0), lambda: k.pdf(0.5, -0.1), lambda: k.cdf(0.5, 1.5), lambda: k.sf(0.2, 9.0),
               lambda: k.normalizer(np.nan), lambda: k.rvs(1.2, rng=0)):
        with pytest.raises(ValueError, match="'s' parameter of SechKernel"):
            fn()
    with pytest.raises(ValueError, match="'t' parameter of SechKernel.pdf must be finite"):
        k.pdf(np.nan, 0.5)
    assert k.ppf(0.5, 1.0) <= 1.0 and k.cdf(1.0, 1.0) == 1.0


def _platt_dict():
    m, v, y = socal.synthetic.toy_population().sample(600, h=1 / 16, rng=1)
    return socal.SecondOrderPlatt(degree=3, alpha=1e-3).fit(m, v, y).to_dict()


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["map"]["beta"][0].__setitem__(0, float("nan")), "map.beta"),
    (lambda d: d["map"].__setitem__("beta", d["map"]["beta"][:-1]), "map.beta"),
    (lambda d: d["map"].__setitem__("degree", "3"), "map.degree"),
    (lambda d: d["map"].__setitem__("alpha", None), "map.alpha"),
    (lambda d: d["map"].__setitem__("ndim", 1), "map.ndim"),
    (lambda d: d.pop("map"), "missing"),
    (lambda d: d.pop("version"), "missing"),
    (lambda d: d.__setitem__("version", 99), "version"),
    (lambda d: d["params"].__setitem__("folds", "five"), "params.folds"),
    (lambda d: d["params"].__setitem__("h", -1.0), "params.h"),
    (lambda d: d["params"].__setitem__("evil", "__import__('os')"), "params"),
    (lambda d: d.__setitem__("n_samples_fit", 0), "n_samples_fit"),
    (lambda d: d.__setitem__("class", "FirstOrderPlatt"), "class"),
])
def test_from_dict_schema(mutate, field):
    d = json.loads(json.dumps(_platt_dict()))
    socal.SecondOrderPlatt.from_dict(json.loads(json.dumps(d)))  # the untouched dict loads
    mutate(d)
    with pytest.raises(ValueError, match=field):
        socal.SecondOrderPlatt.from_dict(d)
    with pytest.raises(ValueError, match="a dict"):
        socal.SecondOrderPlatt.from_dict([1, 2])


# -- data loaders ------------------------------------------------------------------------------------------------

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


# -- command line --------------------------------------------------------------------------------------------------

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


def test_issue26_hostile_inputs_get_socal_errors():
    """pandas nullable Float64 with NA, a negative seed, an empty list of judgments, a string for a bool: each gets
    socal's one-line error naming the argument (and a nullable Float64 without NA is just floats)."""
    pd = pytest.importorskip("pandas")
    import socal
    from socal import datasets

    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    with_na = pd.Series(m, dtype="Float64")
    with_na[3] = pd.NA
    with pytest.raises(ValueError, match="'mean'.*finite"):
        socal.calibration_test(with_na, v, y)
    clean = socal.calibration_test(pd.Series(m, dtype="Float64"), pd.Series(v, dtype="Float64"), y)
    assert clean.statistic == pytest.approx(socal.calibration_test(m, v, y).statistic, rel=1e-12)
    with pytest.raises(ValueError, match="'rng'.*>= 0.*Got -1"):
        socal.evaluate(m, v, y, rng=-1)
    with pytest.raises(ValueError, match="no \\(worker, item, label\\) rows"):
        datasets.from_judgments("mine", [], (0, 1))
    with pytest.raises(ValueError, match="'project'.*True or False"):
        socal.calibration_functions(m, v, y, project="no")
    with pytest.raises(ValueError, match="percentages\\? divide by 100"):
        socal.calibration_test(m * 100, v, y)


def test_exact_truth_refuses_atoms_no_population_has():
    """socal.truth's exact CE functions compute a number for any arrays; outside the atoms' domain (weights not a
    probability vector, e2 outside [e1^2, e1], a raw variance above m (1 - m), lengths that differ, points outside
    the score rectangle) that number is no population's CE, so each gets a ValueError naming the argument.  Valid
    atoms give what the unchecked quadrature gives."""
    T = socal.truth
    m, v, w, e1, e2 = [0.3, 0.6], [0.01, 0.02], [0.5, 0.5], [0.3, 0.6], [0.1, 0.38]
    unchecked = sum(T._ce2_once(1 / 16, *(np.asarray(x, dtype=float) for x in (m, v, w, e1, e2)), 512))
    assert T.discrete_ce2(1 / 16, m, v, w, e1, e2).value == unchecked
    cases = [
        (dict(weights=[-0.5, 1.5]), "'weights'.*non-negative"),
        (dict(weights=[1.0, 1.0]), "'weights'.*sum to 1"),
        (dict(e2=[0.01, 0.38]), "'e2'.*\\[e1\\^2, e1\\]"),
        (dict(e2=[0.31, 0.38]), "'e2'.*\\[e1\\^2, e1\\]"),
        (dict(e1=[0.3, 1.2]), "'e1'.*in \\[0, 1\\]"),
        (dict(vars_=[0.01, 0.25]), "'vars_'.*at most means"),
        (dict(weights=[1.0]), "'weights'.*one entry per atom \\(2"),
        (dict(means=[0.3, np.nan]), "'means'.*finite"),
        (dict(h=0.0), "'h'"),
        (dict(panels=3), "'panels'"),
    ]
    base = dict(h=1 / 16, means=m, vars_=v, weights=w, e1=e1, e2=e2)
    for change, match in cases:
        with pytest.raises(ValueError, match=match):
            T.discrete_ce2(**{**base, **change})
    with pytest.raises(ValueError, match="'weights'.*sum to 1"):
        T.discrete_ce1(1 / 16, m, [2.0, 2.0], e1)
    with pytest.raises(ValueError, match="'t1'.*in \\[0, 1\\]"):
        T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, [1.5], [0.01])
    with pytest.raises(ValueError, match="'t1' and 't2'.*broadcast"):
        T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, [0.1, 0.2, 0.3], [0.01, 0.02])
    e1_at, e2_at = T.discrete_calibration_functions(1 / 16, m, v, w, e1, e2, 0.2, 0.01)
    assert e1_at.shape == () and 0 < float(e1_at) < 1


def test_a_cut_or_foreign_statistics_file_is_refused_without_pickle_advice(tmp_path):
    """A truncated, empty or foreign file gets socal's ValueError (before: zipfile's BadZipFile escaped), and the
    message never relays numpy's suggestion to load the file as a pickle."""
    s = socal.SufficientStats(max_degree=4, rng=0)
    m, v, y = socal.synthetic.toy_population().sample(200, h=1 / 16, rng=0)
    s.update(m, v, y)
    data = s.to_bytes()
    assert socal.SufficientStats.from_bytes(data).n == 200
    for bad in (data[:100], data[:-10], b"", b"junk"):
        with pytest.raises(ValueError, match="not a SufficientStats file.*not an .npz archive") as err:
            socal.SufficientStats.from_bytes(bad)
        assert "pickle" not in str(err.value)
    with pytest.raises(ValueError, match=re.escape(os.strerror(errno.ENOENT))):  # the platform's words
        socal.SufficientStats.load(tmp_path / "none.npz")


def test_a_mean_only_recalibrator_says_where_the_labels_went():
    """FirstOrderPlatt (ndim=1 by default) fit(mean, labels) put the labels in the 'var' slot and answered "needs
    'labels'"; a variance passed to a mean-only fit was silently unused.  Both now say what to pass."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    with pytest.raises(ValueError, match="second argument as 'var'.*fit\\(mean, None, labels\\)"):
        socal.FirstOrderPlatt(degree=3).fit(m, y)
    with pytest.raises(ValueError, match="'var' parameter of FirstOrderPlatt.partial_fit must be None.*ndim=2"):
        socal.FirstOrderPlatt(degree=3).partial_fit(m, v, y)
    with pytest.raises(ValueError, match="'var' parameter of SecondOrderPlatt.fit must be None"):
        socal.SecondOrderPlatt(ndim=1, degree=3).fit(m, v, y)
    fitted = socal.FirstOrderPlatt(degree=3).fit(m, None, y)
    assert np.allclose(fitted.transform(m[:5], v[:5])[0], socal.FirstOrderPlatt(degree=3).fit(m[:, None], y)
                       .transform(m[:5, None])[:, 0])


def test_drawing_functions_name_a_wrong_argument():
    with pytest.raises(TypeError, match="'data' parameter of plot.plot_reliability must be a ReliabilityData"):
        socal.plot.plot_reliability(3)
    with pytest.raises(TypeError, match="'data' parameter of plot.plot_residual_map must be a ResidualMap"):
        socal.plot.plot_residual_map(None)
    rd = socal.plot.reliability(*socal.synthetic.toy_population().sample(500, h=1 / 16, rng=0), n_boot=0)
    with pytest.raises(TypeError, match="'after' parameter of plot.plot_before_after"):
        socal.plot.plot_before_after(rd, "x")


def test_a_population_given_to_a_few_digits_has_its_exact_truth():
    """DiscretePopulation accepts probabilities whose sums are within np.isclose of 1 (given to 6 digits, say) and
    divides them by their sums, so its exact CE is the normalised population's; socal.truth, which now holds sums
    to 1e-9, refused such a population's own truth before the division."""
    pop = socal.synthetic.DiscretePopulation(means=[0.3, 0.6], vars=[0.01, 0.02], weights=[0.499999, 0.5],
                                             fstar=[[0.3, 0.2], [0.6, 0.1]], fprobs=[[0.999999, 0.0], [1.0, 0.0]])
    assert pop.weights.sum() == pytest.approx(1.0, abs=1e-15)
    w = np.array([0.499999, 0.5]) / 0.999999
    e1, e2 = np.array([0.3, 0.6]), np.array([0.09, 0.36])
    exact = socal.truth.discrete_ce2(1 / 16, [0.3, 0.6], [0.01, 0.02], w, e1, e2).value
    assert pop.ce2(1 / 16).value == pytest.approx(exact, rel=1e-12)
    with pytest.raises(ValueError, match="'weights'.*sum to 1"):
        socal.truth.discrete_ce2(1 / 16, [0.3, 0.6], [0.01, 0.02], [0.499999, 0.5], e1, e2)


def test_label_dataframes_get_the_rules_label_arrays_get():
    """A DataFrame of labels is read as its array: nullable columns with NA get the missing-votes hint a NaN array
    gets (before: "must be an array of real numbers. Got DataFrame"), and a complex column is refused (before: its
    imaginary part was dropped with only numpy's ComplexWarning)."""
    pd = pytest.importorskip("pandas")
    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    with_na = pd.DataFrame(y).astype("Float64")
    with_na.iloc[::7, 1] = pd.NA
    with pytest.raises(ValueError, match="'labels'.*finite.*missing votes\\? pass counts"):
        socal.calibration_test(m, v, with_na)
    with pytest.raises(ValueError, match="'labels'.*real numbers \\(Complex data not supported\\)"):
        socal.calibration_test(m, v, pd.DataFrame(y.astype(complex)))
    plain = socal.calibration_test(m, v, y).statistic
    assert socal.calibration_test(m, v, pd.DataFrame(y).astype("Int64")).statistic == plain
    assert socal.calibration_test(m, v, pd.DataFrame(y)).statistic == plain


def test_text_is_refused_as_text_whatever_holds_it():
    """A numpy array of "0.5" strings was refused, while a pandas Series of the same strings (pandas 3's default
    string dtype, what read_csv gives a column with a stray word) or a categorical of them was parsed as numbers."""
    pd = pytest.importorskip("pandas")
    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    text = m.astype(str)
    for holder in (text, pd.Series(text), pd.Series(text, dtype="string"), pd.Series(text).astype("category"),
                   pd.DataFrame({"m": text})["m"]):
        with pytest.raises(ValueError, match="'mean' parameter of calibration_test must be an array of real numbers"):
            socal.calibration_test(holder, v, y)
    with pytest.raises(ValueError, match="'labels' parameter of calibration_test must be an array of real numbers"):
        socal.calibration_test(m, v, pd.DataFrame(y.astype(int).astype(str)).astype("string"))
    plain = socal.calibration_test(m, v, y).statistic  # the control: numbers in a categorical or nullable dtype
    assert socal.calibration_test(pd.Series(m).astype("category"), v, y).statistic == plain
    assert socal.calibration_test(pd.Series(m).astype("Float64"), v, y).statistic == plain


@pytest.mark.parametrize("kwargs, name", [
    (dict(var_level=-1), "var_level"), (dict(var_level=float("nan")), "var_level"), (dict(var_level=1.0), "var_level"),
    (dict(var_factor=-2), "var_factor"), (dict(temperature=0), "temperature"), (dict(temperature=-1), "temperature"),
    (dict(mean_shift=5), "mean_shift"), (dict(region_from=2), "region_from"), (dict(var_factor="big"), "var_factor"),
])
def test_a_synthetic_population_is_checked_when_built(kwargs, name):
    """A negative var_factor made negative variances and temperature 0 divided by zero, at sampling time or never."""
    with pytest.raises(ValueError, match=f"'{name}' parameter of EnsembleLikePopulation"):
        socal.synthetic.EnsembleLikePopulation(**kwargs)
    pop = socal.synthetic.EnsembleLikePopulation(0.01, var_factor=0.0, temperature=2.0, mean_shift=-1.0,
                                                 region_from=0.0)
    m, v, _, _ = pop.sample_raw(50, rng=0)
    assert np.all((v >= 0) & (v <= m * (1 - m)))


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


class _AuditRan(Exception):
    pass


def _guard_audit_runner(monkeypatch):
    """Make the audit's runner fail if reached.  It is patched where `socal audit` looks it up: the entry point
    loads socal.verify.cli, a module object other than verify.cli (patching the latter never fired)."""
    import socal.verify.cli

    def ran(*a, **k):
        raise _AuditRan("the audit ran")

    monkeypatch.setattr(socal.verify.cli, "run", ran)


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


def _experiments():
    pytest.importorskip("sklearn")
    from socal.experiments import decision, rate, real_labels, recalibration

    return decision, rate, real_labels, recalibration


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


def test_judgment_rows_that_are_not_triples_are_named():
    for rows in ([("w1", "i1")], [3], [("w1", "i1", "a"), ("w1", "i2", "a", "extra")]):
        with pytest.raises(ValueError, match=r"'rows' parameter of from_judgments \(t\) must hold \(worker, item"):
            datasets.from_judgments("t", rows, ["a", "b"])


def _csv(path, rows, header="mean,var,y1,y2", end="\n"):
    path.write_text(header + "\n" + "\n".join(rows) + end)
    return path


def _read(path, **kw):
    from socal.io import read_all, read_chunks

    return read_all(read_chunks(path, mean="mean", var="var", labels=["y1", "y2"], chunk_rows=1000, **kw))


def test_csv_files_as_people_write_them(tmp_path):
    """Trailing empty lines (an editor's) were "an empty line inside the data"; a header without rows reached the
    estimator as "the source gave no chunks"; a tab-separated .tsv was one column; a label 2 was named by chunk, not
    line.  Each is now read, or refused with the line."""
    rng = np.random.default_rng(0)
    m = rng.uniform(0.1, 0.9, 2500)
    rows = [f"{a},{a * (1 - a) / 4},{int(a > 0.5)},{int(a > 0.3)}" for a in m]
    plain = _read(_csv(tmp_path / "a.csv", rows))
    for end in ("\n\n\n", "\n \n", "\r\n\r\n"):  # empty lines that end the file end the data
        got = _read(_csv(tmp_path / "b.csv", rows, end=end))
        assert np.array_equal(got[0], plain[0]) and np.array_equal(got[2], plain[2])
    got = _read(_csv(tmp_path / "c.csv", rows[:1000], end="\n\n"))  # the empty lines at a chunk's boundary
    assert got[0].size == 1000
    with pytest.raises(ValueError, match="line 1002: an empty line inside the data"):
        _read(_csv(tmp_path / "d.csv", rows[:1000] + [""] + rows[1000:]))  # a hole in the next chunk's start
    with pytest.raises(ValueError, match="line 4: an empty line inside the data"):
        _read(_csv(tmp_path / "e.csv", rows[:2] + ["", ""] + rows[2:3]))
    for empty in ("", "\n\n"):
        with pytest.raises(ValueError, match="has a header row but no data rows"):
            _read(_csv(tmp_path / "f.csv", [], end=empty))
    tsv = tmp_path / "g.tsv"
    _csv(tsv, [r.replace(",", "\t") for r in rows], header="mean\tvar\ty1\ty2")
    assert np.array_equal(_read(tsv)[0], plain[0])
    semi = _csv(tmp_path / "h.csv", [r.replace(",", ";") for r in rows], header="mean;var;y1;y2")
    with pytest.raises(ValueError, match="separated by another character than ','"):
        _read(semi)
    assert np.array_equal(_read(semi, delimiter=";")[0], plain[0])
    bad = rows.copy()
    bad[1800] = "0.5,0.01,2,0"
    with pytest.raises(ValueError, match=r"line 1802, column 'y1': 2 is not a 0/1 label"):
        _read(_csv(tmp_path / "i.csv", bad))


def test_masked_entries_are_refused_and_transposed_labels_are_named():
    """A masked array's masked entries were read as the values hidden under the mask (the test's statistic came out
    as if nothing were masked); labels given as (k, n) got no hint."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    hidden = np.ma.masked_array(m, mask=np.r_[True, np.zeros(299, bool)])
    with pytest.raises(ValueError, match="'mean' parameter of calibration_test must be an array without masked "
                                         "entries.*1 masked value"):
        socal.calibration_test(hidden, v, y)
    with pytest.raises(ValueError, match="'labels' parameter of ce2 must be an array without masked entries"):
        socal.ce2(m, v, np.ma.masked_equal(y, 1), debias=False)
    plain = socal.calibration_test(m, v, y).statistic  # the control: nothing masked reads as the plain array
    assert socal.calibration_test(np.ma.masked_array(m), v, y).statistic == plain
    with pytest.raises(ValueError, match=r"shape \(2, 300\) \(transposed\? labels are \(n, k\)"):
        socal.calibration_test(m, v, y.T)


def test_count_columns_are_checked_with_their_line(tmp_path):
    from socal.io import read_all, read_chunks

    rows = [f"0.{i % 9 + 1},0.01,{i % 3},3" for i in range(2500)]
    for r, bad, match in ((2100, "0.5,0.01,1.5,3", r"line 2102, column 'a': 1.5 is not a count of positive labels"),
                          (1500, "0.5,0.01,5,3", r"line 1502: 5 positives \('a'\) out of 3 labels \('k'\)"),
                          (10, "0.5,0.01,0,0", r"line 12, column 'k': 0 is not a count of labels")):
        text = rows.copy()
        text[r] = bad
        path = _csv(tmp_path / f"c{r}.csv", text, header="m,v,a,k")
        with pytest.raises(ValueError, match=match):
            read_all(read_chunks(path, mean="m", var="v", positives="a", trials="k", chunk_rows=1000))
    good = read_all(read_chunks(_csv(tmp_path / "ok.csv", rows, header="m,v,a,k"), mean="m", var="v",
                                positives="a", trials="k", chunk_rows=1000))
    assert good[3][0].sum() == sum(i % 3 for i in range(2500))


def test_a_parquet_column_of_text_or_a_file_without_rows_is_named(tmp_path):
    """Parquet is typed: a column of strings was parsed as numbers (as pandas text was), and a file without rows
    reached the estimator as "the source gave no chunks"."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from socal.io import read_all, read_chunks

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"m": rng.uniform(0.1, 0.9, 300), "v": 0.01, "y1": rng.integers(0, 2, 300),
                      "y2": rng.integers(0, 2, 300)})

    def read(frame, name):
        frame.to_parquet(tmp_path / name)
        return read_all(read_chunks(tmp_path / name, mean="m", var="v", labels=["y1", "y2"]))

    with pytest.raises(ValueError, match="column 'm' holds (large_)?string, not numbers"):
        read(d.assign(m=d.m.astype(str)), "a.parquet")
    with pytest.raises(ValueError, match="column 'y1' holds (large_)?string, not numbers"):
        read(d.assign(y1=d.y1.astype(str)), "b.parquet")
    with pytest.raises(ValueError, match="c.parquet has no rows"):
        read(d.iloc[:0], "c.parquet")
    plain = read(d, "d.parquet")  # the control, and numbers in a bool or categorical column read as numbers
    for frame in (d.assign(y1=d.y1.astype(bool)), d.assign(y1=d.y1.astype("category"))):
        assert np.array_equal(read(frame, "e.parquet")[2], plain[2])


def test_the_calibration_test_takes_any_level_in_the_open_unit_interval():
    """The detectable effects at a level alpha search the noncentrality that reaches 80% power.  alpha = 1e-300
    never returned (the critical value chi2.ppf(1 - alpha) rounded to inf), and a level at or above the power
    failed inside scipy's root finder ("f(a) and f(b) must have different signs")."""
    m, v, _, y = socal.synthetic.calibrated_population().sample_raw(2000, rng=0)
    base = socal.calibration_test(m, v, y)
    for a in (1e-20, 1e-300, 5e-324):
        t = socal.calibration_test(m, v, y, alpha=a)
        assert t.pvalue == base.pvalue and t.rejected is False
        for name, d in t.detectable.items():  # a stricter level detects only larger effects
            assert np.isfinite(d) and d > base.detectable[name]
    below = socal.calibration_test(m, v, y, alpha=0.79).detectable
    assert all(0 < d < base.detectable[name] for name, d in below.items())
    for a in (0.8, 0.9, 1 - 1e-12):  # the test rejects with probability alpha >= 80% without any error
        t = socal.calibration_test(m, v, y, alpha=a)
        assert t.detectable and all(d == 0 for d in t.detectable.values())
        assert t.unseen().startswith("nothing: at this level the test rejects")


def test_the_summary_checks_its_level_and_names_the_level_of_the_unseen_effects():
    """summary(alpha=2) printed "rejected at level 2"; and with a level other than the test's it printed the effects
    likely unseen at the test's level (0.05) as if they were at its own."""
    m, v, _, y = socal.synthetic.calibrated_population().sample_raw(2000, rng=0)
    t = socal.calibration_test(m, v, y)
    assert "(80% power): " in t.summary()
    s = t.summary(alpha=0.01)
    assert "at level 0.01" in s and "(80% power at level 0.05): " in s
    assert "(80% power): " in socal.calibration_test(m, v, y, alpha=0.01).summary()
    for bad in (0, 1, 2, float("nan"), "0.05"):
        with pytest.raises(ValueError, match="'alpha' parameter of CalibrationTest.summary must be a float in the "
                                             "range"):
            t.summary(alpha=bad)


def test_progress_is_true_or_false_everywhere(small):
    """'progress' took any object and read its truth (progress="no" drew bars), where 'debias' and 'project' were
    checked; now every function that takes it checks it alike."""
    m, v, y = small
    rm, rv, _, ry = socal.synthetic.calibrated_population().sample_raw(400, rng=0)
    calls = {"ce2": lambda p: socal.ce2(m, v, y, degree=2, alpha=1e-3, debias=False, progress=p),
             "ce1": lambda p: socal.ce1(m, y, degree=2, alpha=1e-3, debias=False, progress=p),
             "calibration_test": lambda p: socal.calibration_test(rm, rv, ry, progress=p),
             "evaluate": lambda p: socal.evaluate(rm, rv, ry, progress=p)}
    for name, call in calls.items():
        for bad in ("no", None, 1, 0):
            with pytest.raises(ValueError, match=f"'progress' parameter of {name} must be True or False"):
                call(bad)
    assert calls["ce2"](np.bool_(False)).estimate == calls["ce2"](False).estimate  # numpy's bool is a bool


def test_statistics_saved_under_a_name_load_under_that_name(tmp_path, small):
    """save('stats') wrote stats.npz (numpy.savez appends the extension), so load('stats') found no file."""
    m, v, y = small
    st = socal.SufficientStats(rng=0).update(m, v, y)
    st.save(tmp_path / "stats")
    st.save(str(tmp_path / "other.bin"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.bin", "stats"]
    for name in ("stats", "other.bin"):
        back = socal.SufficientStats.load(tmp_path / name)
        assert np.array_equal(back.M, st.M) and np.array_equal(back.count, st.count)


def test_kernel_draws_check_their_shape():
    """SechKernel.rvs passed size on to numpy: -1 was numpy's "negative dimensions are not allowed", 2.5 a
    TypeError."""
    k = socal.SechKernel(0.1)
    for bad in (-1, 2.5, (2, -1), True, "3"):
        with pytest.raises(ValueError, match="'size' parameter of SechKernel.rvs must be an int >= 0"):
            k.rvs(0.5, rng=0, size=bad)
    for size, shape in ((3, (3,)), ((2, 3), (2, 3)), ([2, 3], (2, 3)), (0, (0,)), (np.int64(4), (4,))):
        assert k.rvs(0.5, rng=0, size=size).shape == shape


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


def test_an_interval_needs_a_replicate_beyond_each_end(small):
    """ci=0.999 with the default 200 replicates returned the range of the 200 bootstrap values, labelled a 99.9%
    interval: its ends, the bootstrap's 0.05% and 99.95% quantiles, lay on or between the extreme replicates.  Now
    n_boot must reach 2 / (1 - ci) (1 / (1 - upper) for the bound), checked before any work."""
    m, v, y = small
    rm, rv, _, ry = socal.synthetic.calibrated_population().sample_raw(400, rng=0)
    kw = dict(degree=2, alpha=1e-3)
    cases = [(lambda: socal.ce2(m, v, y, ci=0.999, **kw), "ce2", "2 / \\(1 - ci\\) = 2000 for ci=0.999"),
             (lambda: socal.ce1(m, y, ci=0.99, n_boot=199, **kw), "ce1", "2 / \\(1 - ci\\) = 200 for ci=0.99"),
             (lambda: socal.ce2(m, v, y, upper=0.999, **kw), "ce2", "1 / \\(1 - upper\\) = 1000 for upper=0.999"),
             (lambda: socal.evaluate(rm, rv, ry, ci=0.999), "evaluate", "2 / \\(1 - ci\\) = 2000"),
             (lambda: socal.evaluate_recalibrated(socal.SecondOrderPlatt(rng=0).fit(m, v, y), m, v, y, ci=0.995),
              "evaluate_recalibrated", "2 / \\(1 - ci\\) = 400")]
    for call, name, rule in cases:
        with pytest.raises(ValueError, match=f"'n_boot' parameter of {name} must be at least {rule}"):
            call()
    # at the edge the interval is drawn, and it is wider than the default level's on the same replicates
    wide = socal.ce2(m, v, y, ci=0.99, upper=0.995, rng=0, **kw)
    base = socal.ce2(m, v, y, ci=0.9, upper=0.95, rng=0, **kw)
    assert wide.ci.low <= base.ci.low and wide.ci.high >= base.ci.high and wide.upper.value >= base.upper.value


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


def test_one_column_in_two_roles_is_refused(tmp_path):
    """--positives pos --trials pos read every item as all-positive and the evaluation ran; a column given as the
    mean and as a label (or as the mean and the variance) is refused alike."""
    from socal.io import read_chunks

    path = tmp_path / "c.csv"
    path.write_text("m,v,pos,tri\n" + "0.5,0.1,1,2\n" * 20)
    for kw, roles in ((dict(positives="pos", trials="pos"), "'positives' and 'trials'"),
                      (dict(var="m", positives="pos", trials="tri"), "'mean' and 'var'"),
                      (dict(positives="m", trials="tri"), "'mean' and 'positives'")):
        with pytest.raises(ValueError, match=f"reads column '.*' as both {roles}; every role needs its own column"):
            read_chunks(path, **{"mean": "m", "var": "v", **kw})
    with pytest.raises(ValueError, match="reads column 'y1' as both 'mean' and 'labels'"):
        read_chunks(path, mean="y1", var="v", labels=["y1", "y2"])
    assert read_chunks(path, mean="m", var="v", positives="pos", trials="tri") is not None  # the control


def test_demo_refuses_an_ignored_or_unresolvable_bandwidth(capsys, tmp_path):
    """demo --write x.csv --h 0.5 ignored --h (the file holds raw scores); demo --h 1e-6 printed its header and
    sampled before the exact truth refused the bandwidth."""
    code, out, err = _run(capsys, ["demo", "--write", str(tmp_path / "x.csv"), "--h", "0.5"])
    assert code == 2 and out == "" and "--write saves the raw (unperturbed) scores, so --h would do nothing" in err
    assert not (tmp_path / "x.csv").exists()
    code, out, err = _run(capsys, ["demo", "--h", "1e-6"])
    assert code == 2 and out == "" and "--h 1e-06 is narrower than the demo's exact truth resolves" in err


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


# sweep 7 (issue 24, seventh round): each of these failed on 4f70ff5


def test_dask_inputs_mix_with_in_memory_arrays(small):
    """A dask mean with numpy labels raised AttributeError ('numpy.ndarray' object has no attribute 'to_delayed');
    the in-memory inputs now take the dask array's row blocks, and a row count that differs is named."""
    da = pytest.importorskip("dask.array", reason="needs dask")
    m, v, y = small
    ref = socal.ce2(m, v, y, debias=False)
    mixed = socal.ce2(da.from_array(m, chunks=150), v, y, debias=False)
    assert mixed.estimate == pytest.approx(ref.estimate, rel=1e-12)
    mixed = socal.ce2(m, v, da.from_array(y, chunks=(150, 2)), debias=False)
    assert mixed.estimate == pytest.approx(ref.estimate, rel=1e-12)
    with pytest.raises(ValueError, match="'var' parameter of ce2 must have one row per item \\(400"):
        socal.ce2(da.from_array(m, chunks=150), da.from_array(np.r_[v, v], chunks=150), y, debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of ce2 must have one row per item \\(400"):
        socal.ce2(da.from_array(m, chunks=150), v, y[:300], debias=False)


def test_feature_names_out_checks_input_features_as_scikit_learn_does(small):
    """get_feature_names_out(['a']) returned ('mean', 'var') for a map fitted on two columns; scikit-learn's
    transformers refuse input names that are not the fitted ones."""
    m, v, y = small
    X = np.column_stack([m, v])
    fit = socal.SecondOrderPlatt().fit(X, y)
    assert list(fit.get_feature_names_out(["x0", "x1"])) == ["mean", "var"]
    with pytest.raises(ValueError, match="'input_features' parameter .* must name the 2 feature"):
        fit.get_feature_names_out(["a"])
    pd = pytest.importorskip("pandas", reason="named columns need pandas")
    named = socal.SecondOrderPlatt().fit(pd.DataFrame(X, columns=["m", "v"]), y)
    assert list(named.get_feature_names_out(["m", "v"])) == ["mean", "var"]
    with pytest.raises(ValueError, match="must equal the feature names seen at fit"):
        named.get_feature_names_out(["v", "m"])
    with pytest.raises(socal.NotFittedError):
        socal.SecondOrderPlatt().get_feature_names_out(["m", "v"])


def test_statistics_add_up_with_sum(small):
    """sum(parts) raised TypeError (0 + SufficientStats); the parts of a stream now add up with Python's sum, to
    the statistics of the whole."""
    m, v, y = small
    parts = [socal.SufficientStats(max_degree=6).update(m[i::3], v[i::3], y[i::3]) for i in range(3)]
    whole = socal.SufficientStats(max_degree=6).update(m, v, y)
    assert sum(parts).n == 400 and np.allclose(sum(parts).M, whole.M) and np.allclose(sum(parts).Z, whole.Z)
    rm, rv, _, ry = socal.synthetic.toy_population().sample_raw(400, rng=0)
    tests = [socal.CalibrationTestStats().update(rm[i::3], rv[i::3], ry[i::3]) for i in range(3)]
    assert sum(tests).test().pvalue == pytest.approx(socal.calibration_test(rm, rv, ry).pvalue, rel=1e-9)
    with pytest.raises(TypeError):
        1 + parts[0]


def test_a_range_of_degrees_is_a_list_of_degrees(small):
    """degree=range(2, 6) was refused as 'an int in the range [0, 200]. Got range(2, 6)'."""
    m, v, y = small
    res = socal.ce2(m, v, y, degree=range(2, 6), debias=False)
    assert res.selection.degrees == (5, 4, 3, 2)
    with pytest.raises(ValueError, match="non-empty list"):
        socal.ce2(m, v, y, degree=range(0), debias=False)


def test_an_unbounded_range_is_not_printed_with_infinity_in_it():
    """paper_degree(inf, ...) said 'must be a float in the range [1.0, inf]. Got inf': infinity is refused, so the
    rule names a finite float."""
    with pytest.raises(ValueError, match="'n' parameter of paper_degree must be a finite float >= 1.0. Got inf"):
        socal.paper_degree(math.inf, 1 / 16)
    with pytest.raises(ValueError, match="'lo' parameter of SechKernel must be a finite float. Got nan"):
        socal.SechKernel(0.1, math.nan)


def test_drawing_functions_name_wrong_axes_and_evaluation_figure_checks_first(small):
    """plot_reliability(data, axes=one_axes) raised "cannot unpack non-iterable Axes object"; evaluation_figure with
    h=0 was refused in SecondOrderPlatt's name, and with n_boot=1 only after the fit, in plot.reliability's."""
    pytest.importorskip("matplotlib", reason="drawing needs matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m, v, y = small
    data = socal.plot.reliability(m, v, y, n_boot=0, rng=0)
    one = plt.subplots()[1]
    for draw in (lambda ax: socal.plot.plot_reliability(data, axes=ax),
                 lambda ax: socal.plot.plot_before_after(data, data, axes=ax),
                 lambda ax: socal.plot.plot_residual_map(socal.plot.residual_map(m, v, y, rng=0), axes=ax)):
        with pytest.raises(TypeError, match="'axes' parameter of plot.plot_.* must be two matplotlib Axes"):
            draw(one)
    assert len(socal.plot.plot_reliability(data, axes=plt.subplots(2, 1)[1])) == 2  # a column of two panels
    with pytest.raises(ValueError, match="'h' parameter of plot.evaluation_figure"):
        socal.plot.evaluation_figure(m, v, y, h=0)
    with pytest.raises(ValueError, match="'n_boot' parameter of plot.evaluation_figure"):
        socal.plot.evaluation_figure(m, v, y, n_boot=1)
    plt.close("all")


@pytest.mark.parametrize("ext", [".gz", ".bz2", ".xz"])
def test_compressed_csv_files_are_read_as_the_text_inside(tmp_path, ext):
    """demo.csv.gz was refused as "not UTF-8 text (invalid start byte)"; a compressed CSV (or TSV) is now read
    through its decompressor, the same numbers as the plain file, and a misnamed or cut file is a ValueError
    naming it.  A path of another type than str, bytes or os.PathLike is a TypeError naming 'path' (an int gave
    pathlib's message)."""
    import bz2
    import gzip
    import lzma

    from socal import io

    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[ext]
    m, v, y = socal.synthetic.toy_population().sample(300, h=1 / 16, rng=0)
    text = "m,v,y1,y2\n" + "".join(f"{float(a)!r},{float(b)!r},{c},{d}\n"
                                     for a, b, c, d in zip(m, v, y[:, 0], y[:, 1]))
    plain = tmp_path / "s.csv"
    plain.write_text(text)
    (tmp_path / f"s.csv{ext}").write_bytes(compress(text.encode()))
    (tmp_path / f"s.tsv{ext}").write_bytes(compress(text.replace(",", "\t").encode()))
    kw = dict(mean="m", var="v", labels=["y1", "y2"])
    ref = io.read_all(io.read_chunks(plain, **kw))
    for name in (f"s.csv{ext}", f"s.tsv{ext}"):
        got = io.read_all(io.read_chunks(tmp_path / name, **kw))
        assert all(np.array_equal(a, b) for a, b in zip(got[:3], ref[:3]))
    (tmp_path / f"bad.csv{ext}").write_bytes(b"m,v,y1,y2\n0.5,0.1,1,0\n")
    with pytest.raises(ValueError, match="cannot be decompressed"):
        io.read_chunks(tmp_path / f"bad.csv{ext}", **kw)
    whole = compress((text * 20).encode())
    (tmp_path / f"cut.csv{ext}").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="cut.csv"):
        io.read_all(io.read_chunks(tmp_path / f"cut.csv{ext}", **kw))
    with pytest.raises(TypeError, match="'path' parameter of read_chunks must be a file path"):
        io.read_chunks(3, **kw)
    assert io.read_chunks(os.fsencode(plain), **kw).path == plain


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


def test_calibration_functions_take_one_score_and_shape_errors_carry_no_percent_hint(small):
    """cf.eta1(0.5, 0.1) was refused ("must be a one-dimensional array. Got a scalar"), and ce2(1.5, ...) added
    "(percentages? divide by 100)" to that shape error; one score now gives floats equal to the array's values,
    and the hint is kept for values out of range."""
    m, v, y = small
    cf = socal.calibration_functions(m, v, y, degree=3, alpha=1e-3)
    e1, e2 = cf(0.4, 0.05)
    a1, a2 = cf(np.array([0.4]), np.array([0.05]))
    assert isinstance(e1, float) and (e1, e2) == (a1[0], a2[0]) and cf.eta2(0.4, 0.05) == e2
    with pytest.raises(ValueError, match="one-dimensional array. Got a scalar instead.$"):
        socal.ce2(1.5, 0.1, [[1, 0]])
    with pytest.raises(ValueError, match="percentages"):
        socal.ce2(np.full(20, 50.0), np.full(20, 0.1), np.ones((20, 2)))


def test_prebuilt_statistics_refuse_another_split_instead_of_ignoring_it(small):
    """ce2(stats, chunks=..., folds=10) and holdout=0.2 ran on the statistics' own 5 folds and said nothing (the
    split is fixed when the statistics are built); so did SecondOrderPlatt(folds=10).fit(stats).  Another split is
    now refused, naming both; the statistics' own split, or 'folds' at its default, is taken."""
    m, v, y = small
    stats = socal.SufficientStats(max_degree=6, folds=4).update(m, v, y)
    chunks = [(m, v, y)]
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(10\\) is not the split .* \\(folds=4\\)"):
        socal.ce2(stats, chunks=chunks, folds=10, debias=False)
    with pytest.raises(ValueError, match="'holdout' parameter of ce2 \\(0.2\\) is not the split"):
        socal.ce2(stats, chunks=chunks, holdout=0.2, debias=False)
    with pytest.raises(ValueError, match="'folds' parameter of SecondOrderPlatt.fit \\(10\\)"):
        socal.SecondOrderPlatt(folds=10).fit(stats)
    assert socal.ce2(stats, chunks=chunks, folds=4, debias=False).selection.folds == 4
    assert socal.ce2(stats, chunks=chunks, debias=False).selection.folds == 4  # the default: as built
    held = socal.SufficientStats(max_degree=6, holdout=0.25).update(m, v, y)
    assert socal.ce2(held, chunks=chunks, holdout=0.25, debias=False).selection.method == "holdout"
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(3\\) .* \\(holdout=0.25\\)"):
        socal.ce2(held, chunks=chunks, folds=3, debias=False)


def test_folds_beside_a_holdout_split_is_refused(small):
    """ce2(..., holdout=0.2, folds=10) and SufficientStats(folds=10, holdout=0.2) used the hold-out split and
    dropped the folds silently; both are named now (folds at its default is accepted, as before)."""
    m, v, y = small
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(10\\) would be ignored with holdout=0.2"):
        socal.ce2(m, v, y, holdout=0.2, folds=10, debias=False)
    with pytest.raises(ValueError, match="'folds' parameter of SufficientStats \\(10\\) would be ignored"):
        socal.SufficientStats(folds=10, holdout=0.2)
    assert socal.ce2(m, v, y, holdout=0.2, debias=False).selection.method == "holdout"


def test_n_boot_without_the_bootstrap_is_refused(small):
    """ce2(..., debias=False, n_boot=500) drew nothing and said nothing, where the CLI refuses --n-boot with
    --no-interval; the API now says so too (n_boot left at its default is accepted)."""
    m, v, y = small
    with pytest.raises(ValueError, match="'n_boot' parameter of ce2 \\(500\\) would be ignored with debias=False"):
        socal.ce2(m, v, y, debias=False, n_boot=500)
    with pytest.raises(ValueError, match="'n_boot' parameter of ce1"):
        socal.ce1(m, y, debias=False, n_boot=40)
    assert socal.ce2(m, v, y, debias=False).ci is None


def test_a_reader_row_left_with_one_vote_is_explained_as_missing_votes(small, tmp_path):
    """ce2(chunks=read_chunks(csv_with_an_empty_cell)) said only "'counts[1] (trials)' ... must be in [2, ...]": the
    reader had turned the label columns into counts.  The message now says where the counts came from and what to
    do; counts a caller passes keep the plain message."""
    from socal import io

    m, v, y = small
    rows = [f"{float(a)!r},{float(b)!r},{c},{d}" for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])]
    rows[4] = rows[4].rsplit(",", 1)[0] + ","
    path = tmp_path / "votes.csv"
    path.write_text("m,v,y1,y2\n" + "\n".join(rows) + "\n")
    reader = io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"])
    with pytest.raises(ValueError, match="read from label columns with empty cells \\(missing votes\\)"):
        socal.ce2(chunks=reader, debias=False)
    with pytest.raises(ValueError) as exc:
        socal.ce2(m, v, counts=(y.sum(axis=1), np.r_[1, np.full(len(m) - 1, 2)]), debias=False)
    assert "missing votes" not in str(exc.value)


# -- hostile sweep 8 ------------------------------------------------------------------------------------------------

def test_an_infeasible_raw_score_is_named_in_plain_numbers():
    """The message printed numpy 2's repr, "var=np.float64(0.1288...) at mean=np.float64(0.8679...)"."""
    with pytest.raises(ValueError) as exc:
        socal.calibration_test([0.5, 0.9] * 10, [0.1, 0.2] * 10, np.ones((20, 2)))
    msg = str(exc.value)
    assert "e.g. var=0.2 at mean=0.9" in msg and "np.float64" not in msg


def test_a_saved_field_with_other_keys_is_described_by_its_keys(small):
    """from_dict with params={} said "must be a dict with exactly the keys [...]. Got [] instead": a list for a dict."""
    m, v, y = small
    d = socal.SecondOrderPlatt(degree=2, alpha=1e-3, rng=0).fit(m, v, y).to_dict()
    with pytest.raises(ValueError, match="Got a dict with the keys \\[\\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "params": {}})
    with pytest.raises(ValueError, match="Got a dict with the keys \\['beta'\\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "map": {"beta": []}})
    with pytest.raises(ValueError, match="Got 'x' instead"):  # anything else is shown as before
        socal.SecondOrderPlatt.from_dict({**d, "map": "x"})


def test_from_members_names_class_probabilities_and_warns_on_a_transposed_array():
    """(n, M, 2) class probabilities were refused as "must be a 2-dimensional array" with no hint, and an (M, n)
    stack of members (np.stack(member_predictions)) was read silently as M items of n members each."""
    p = np.random.default_rng(0).random((50, 4))
    with pytest.raises(ValueError, match="pass probabilities\\[\\.\\.\\., 1\\]"):
        socal.from_members(np.stack([1 - p, p], axis=-1))
    with pytest.warns(UserWarning, match="4 item rows.*pass probabilities.T"):
        m, _ = socal.from_members(p.T)
    assert m.shape == (4,)  # read as given
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        socal.from_members(p)  # items as rows: no warning
        socal.from_members(p[:4])  # as many members as items: no warning


def test_from_members_of_many_classes_gives_the_mean_vector_and_covariance():
    """An (n, M, C) multi-class stack with C > 2 was refused with the one-vs-rest recipe; it is now the multiclass
    input (issue 59): the mean vector and the members' covariance.  One class's slice is the binary input, as
    before, and other shapes are refused as before."""
    probs = np.random.default_rng(0).dirichlet(np.ones(10), (100, 5))
    m, cov = socal.from_members(probs)
    assert m.shape == (100, 10) and cov.shape == (100, 10, 10)
    m, v = socal.from_members(probs[:, :, 3])  # one class, one-vs-rest
    assert m.shape == v.shape == (100,)
    with pytest.raises(ValueError, match="must be a 2-dimensional array"):  # other shapes as before
        socal.from_members(probs[:, :, :, None])


def test_csv_label_cells_true_and_false_read_as_one_and_zero(small, tmp_path):
    """pandas writes boolean label columns as True/False; the CSV reader refused them ("'True' is not a number")
    while the same data as Parquet were read.  Only label columns take them; other words stay refused."""
    from socal import io

    m, v, y = small
    words = {0: ["False", "false", "FALSE"], 1: ["True", "true", "TRUE"]}
    plain, boolean = tmp_path / "plain.csv", tmp_path / "bool.csv"
    rows = [(f"{float(a)!r},{float(b)!r}", int(c), int(d)) for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])]
    plain.write_text("m,v,y1,y2\n" + "\n".join(f"{s},{c},{d}" for s, c, d in rows) + "\n")
    boolean.write_text("m,v,y1,y2\n" + "\n".join(f"{s},{words[c][i % 3]},{words[d][(i + 1) % 3]}"
                                                 for i, (s, c, d) in enumerate(rows)) + "\n")
    kw = dict(mean="m", var="v", labels=["y1", "y2"])
    a, b = io.read_all(io.read_chunks(plain, **kw)), io.read_all(io.read_chunks(boolean, **kw))
    assert np.array_equal(a[2], b[2]) and np.array_equal(a[0], b[0])
    other = tmp_path / "yes.csv"
    other.write_text("m,v,y1,y2\n0.5,0.1,yes,no\n")
    with pytest.raises(ValueError, match="'yes' is not a number"):
        io.read_all(io.read_chunks(other, **kw))
    mean_word = tmp_path / "meanword.csv"
    mean_word.write_text("m,v,y1,y2\nTrue,0.1,1,0\n")
    with pytest.raises(ValueError, match="column 'm': 'True' is not a number"):
        io.read_all(io.read_chunks(mean_word, **kw))


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


def test_a_population_names_its_own_fields_and_refuses_nan_where_it_is_built():
    """DiscretePopulation named its fields 'mean' and 'var' (they are 'means' and 'vars'), said "Got shape (2, 2)"
    for an f* value of 1.4 in a well-shaped array, and took a NaN in 'fstar', which failed only in .ce2() as
    "The 'e1' parameter of discrete_ce2", a parameter the user never gave."""
    from socal.synthetic import DiscretePopulation

    ok = dict(means=[0.3, 0.7], vars=[0.01, 0.02], weights=[0.5, 0.5], fstar=[[0.2, 0.4], [0.6, 0.8]],
              fprobs=[[0.5, 0.5], [0.5, 0.5]])
    DiscretePopulation(**ok)
    cases = [("vars", [0.3, 0.02], "'vars' parameter of DiscretePopulation must be in \\[0, 1/4\\]"),
             ("means", [float("nan"), 0.7], "'means' parameter of DiscretePopulation must be finite"),
             ("fstar", [[0.2, 1.4], [0.6, 0.8]], "'fstar' .* must be in \\[0, 1\\].*e.g. 1.4"),
             ("fstar", [[0.2, float("nan")], [0.6, 0.8]], "'fstar' parameter of DiscretePopulation must be finite"),
             ("fstar", [[0.2], [0.6]], "'fstar' .* one row per atom \\(2\\) and the shape of 'fprobs' \\(2, 2\\)"),
             ("fprobs", [[0.5, 0.4], [0.5, 0.5]], "'fprobs' .* rows summing to 1. Got row sums"),
             ("weights", [float("nan"), 1.0], "'weights' parameter of DiscretePopulation must be finite")]
    for field, value, match in cases:
        with pytest.raises(ValueError, match=match):
            DiscretePopulation(**{**ok, field: value})
    with pytest.raises(ValueError, match="'n' parameter of beta_calibrated_sample"):  # returned empty arrays
        socal.synthetic.beta_calibrated_sample(0, rng=0)


def test_calibration_functions_read_statistics_without_chunks(small):
    """calibration_functions(stats) demanded 'chunks' "for the CE average", which it does not compute; the
    recalibrators' fit(stats) never did.  The fit from the statistics alone is the fit from the arrays."""
    m, v, y = small
    st = socal.SufficientStats(max_degree=6, folds=5, rng=3).update(m, v, y)
    from_stats = socal.calibration_functions(st, degree=3, alpha=1e-3, rng=3)
    from_arrays = socal.calibration_functions(m, v, y, degree=3, alpha=1e-3, rng=3)
    assert np.allclose(from_stats(m[:5], v[:5]), from_arrays(m[:5], v[:5]), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="'chunks' parameter of ce2 is needed"):  # ce2 does pass over the rows
        socal.ce2(st, debias=False)


def test_statistics_from_bytes_names_a_wrong_type(small):
    with pytest.raises(TypeError, match="'data' parameter of SufficientStats.from_bytes must be bytes"):
        socal.SufficientStats.from_bytes("not bytes")


def test_an_empty_chunk_or_partition_adds_nothing_everywhere(small):
    """An empty dask partition (a filter's) was skipped by ce2 but made calibration_test fail ("'mean' ... must be
    an array with at least 1 row"), and an empty chunk in a list (a reader's last batch) made ce2 fail.  Both now
    add nothing, in every estimator."""
    m, v, y = small
    empty = dict(mean=m[:0], var=v[:0], labels=y[:0])
    parts = [dict(mean=m[i::3], var=v[i::3], labels=y[i::3]) for i in range(3)]
    plain = socal.ce2(chunks=parts, rng=0)
    padded = socal.ce2(chunks=[empty] + parts + [empty], rng=0)
    assert padded.estimate == plain.estimate and padded.ci == plain.ci
    assert socal.ce1(chunks=[empty] + parts, rng=0).estimate == socal.ce1(chunks=parts, rng=0).estimate
    with pytest.raises(ValueError, match="at least 10 items"):  # nothing but empty chunks: still refused
        socal.ce2(chunks=[empty, empty], debias=False)
    rm, rv, _, ry = socal.synthetic.toy_population().sample_raw(400, rng=1)
    raw = [dict(mean=rm[:0], var=rv[:0], labels=ry[:0]), dict(mean=rm, var=rv, labels=ry)]
    assert socal.calibration_test(chunks=raw).pvalue == socal.calibration_test(rm, rv, ry).pvalue
    da = pytest.importorskip("dask.array")
    rows = (150, 0, 250)
    got = socal.calibration_test(da.from_array(rm, chunks=(rows,)), da.from_array(rv, chunks=(rows,)),
                                 da.from_array(ry, chunks=(rows, 2)))
    assert got.pvalue == pytest.approx(socal.calibration_test(rm, rv, ry).pvalue, rel=1e-9)


def test_one_chunk_where_a_list_belongs_is_named(small):
    """chunks={'mean': m, ...} was iterated as its keys: "A chunk of ce2 (chunk 0) must be a mapping ... Got str"."""
    m, v, y = small
    with pytest.raises(TypeError, match="must be a list of chunks. Got one chunk .*pass \\[chunk\\]"):
        socal.ce2(chunks=dict(mean=m, var=v, labels=y), debias=False)


def test_the_documented_submodules_are_reachable_after_import_socal():
    """README's `socal.io.read_chunks` raised "module 'socal' has no attribute 'io'" after `import socal`.  The
    submodules now load on first use (as scipy's do); importing socal still loads none of them."""
    import subprocess
    import sys

    code = ("import sys, socal; assert 'socal.io' not in sys.modules and 'socal.datasets' not in sys.modules; "
            "assert callable(socal.io.read_chunks) and callable(socal.datasets.load); "
            "assert 'io' in dir(socal); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError, match="no attribute 'nothere'"):
        socal.nothere  # noqa: B018


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


def test_evaluate_recalibrated_names_both_recalibrators_and_a_saved_map(small):
    """The message named SecondOrderPlatt alone, though FirstOrderPlatt is taken too; a saved map (a dict) now gets
    the call that loads it."""
    m, v, y = small
    with pytest.raises(ValueError, match="SecondOrderPlatt or FirstOrderPlatt. Got dict instead \\(a saved map"):
        socal.evaluate_recalibrated({"format": "socal.recalibrator"}, m, v, y)


def test_results_format_as_numbers_and_intervals_hold_values(small):
    """f"{result:.3f}" raised "unsupported format string passed to CalibrationError.__format__" though
    float(result) works; `truth in result.ci` was unsupported."""
    m, v, y = small
    r = socal.ce2(m, v, y, rng=0, ci=0.9, upper=0.95)
    assert f"{r:.3f}" == f"{r.estimate:.3f}" and f"{r.upper:.4f}" == f"{r.upper.value:.4f}"
    assert f"{r}" == str(r)
    assert r.ci.low in r.ci and r.ci.high in r.ci and (r.ci.high + 1e-9) not in r.ci


def test_every_result_object_takes_a_format_spec():
    """Issue 62: f"{ev.reference:.4f}" raised TypeError (so did a TruthValue, a test and its parts); each formats
    its headline number, and an empty spec keeps str()."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(400, rng=0)
    ev = socal.evaluate(m, v, y, h=1 / 16, rng=0, n_boot=20)
    t = ev.test
    assert f"{ev.reference:.4f}" == f"{ev.reference.ce2.value:.4f}"
    assert f"{ev.reference.ce1:.3e}" == f"{ev.reference.ce1.value:.3e}"
    assert f"{t:.3g}" == f"{t.pvalue:.3g}" and f"{t}" == str(t) == t.summary()
    assert f"{t.mean_part:.2g}" == f"{t.mean_part.pvalue:.2g}" and f"{t.variance_part}" == str(t.variance_part)
    assert f"{ev:.4f}" == f"{ev.ce2.estimate:.4f}"
    for obj in (ev, t, t.mean_part, ev.reference, ev.reference.ce2, ev.ce2, ev.ce1):
        with pytest.raises((ValueError, TypeError)):  # a spec a float refuses is refused, not ignored
            format(obj, "q")


def test_a_negative_fraction_for_h_gets_h_s_own_message(capsys):
    """'--h -1/16' made argparse say "expected one argument" (a token starting with '-' that does not look like a
    number is read as an option); it now gets --h's rule, as '--h=-1/16' did."""
    with pytest.raises(SystemExit):
        main(["demo", "--h", "-1/16"])
    assert "must be a positive number such as 0.0625 or 1/16" in capsys.readouterr().err


def test_an_item_id_with_a_lone_surrogate_keys_the_perturbation():
    """Hypothesis found it: an id holding a lone surrogate ('\\ud800', what surrogateescape makes of undecodable
    bytes) raised UnicodeEncodeError in the text hash; it is hashed by its own bytes (surrogatepass)."""
    from socal.rowkeys import text_columns

    cols = text_columns(np.array(["\ud800", "\udfff", "a"]))
    assert cols.shape == (3, 2) and np.unique(cols, axis=0).shape[0] == 3
    m, v = socal.perturb(np.full(3, 0.3), np.full(3, 0.01), h=1 / 16, rng=0, key=["\ud800", "\udfff", "a"])
    assert np.unique(m).size == 3


def test_a_recalibrator_saves_and_loads_as_the_readme_says(small, tmp_path):
    """README said the map is "saved with .save()", which did not exist (to_dict/from_dict did).  save/load write
    and read JSON (never pickle): the same transform, bit for bit, from a path or a file object; a file that is not
    a saved map is a ValueError naming it."""
    import io as _io

    m, v, y = small
    platt = socal.SecondOrderPlatt(degree=3, alpha=1e-3, rng=0).fit(m, v, y)
    platt.save(tmp_path / "platt.json")
    again = socal.SecondOrderPlatt.load(tmp_path / "platt.json")
    assert all(np.array_equal(a, b) for a, b in zip(platt.transform(m, v), again.transform(m, v)))
    buf = _io.StringIO()
    platt.save(buf)
    buf.seek(0)
    assert np.array_equal(socal.SecondOrderPlatt.load(buf).transform(m, v)[1], platt.transform(m, v)[1])
    (tmp_path / "x.json").write_text("mean,var\n")
    with pytest.raises(ValueError, match="x.json is not a saved recalibrator"):
        socal.SecondOrderPlatt.load(tmp_path / "x.json")
    with pytest.raises(ValueError, match="field 'class' of FirstOrderPlatt.from_dict"):
        socal.FirstOrderPlatt.load(tmp_path / "platt.json")


def test_a_partial_overlap_with_the_fit_rows_is_estimated_and_said():
    """evaluate_recalibrated on items half of which the map was fitted on printed "held-out items" (only the very
    fit rows were detected).  The fingerprint's bottom-256 sketch of the fit rows' keys estimates the share that
    match; it survives to_dict/from_dict and partial_fit, and fresh items read 0."""
    m, v, y = socal.synthetic.toy_population().sample(8000, h=1 / 16, rng=1)
    fit, fresh = np.arange(4000), np.arange(4000, 8000)
    platt = socal.SecondOrderPlatt(degree=3, alpha=1e-3, rng=0).fit(m[fit], v[fit], y[fit])
    half = np.r_[fit[:2000], fresh[:2000]]
    with pytest.warns(UserWarning, match="about [45][0-9]% of these 4000 items match rows the recalibrator"):
        r = socal.evaluate_recalibrated(platt, m[half], v[half], y[half], rng=0, n_boot=20)
    share, read = r.fit_overlap
    assert not r.in_sample and abs(share - 0.5) < 4 * math.sqrt(0.25 / read) and read > 150
    assert r.summary().startswith("Recalibrated scores on 4000 items, about")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clean = socal.evaluate_recalibrated(platt, m[fresh], v[fresh], y[fresh], rng=0, n_boot=20)
    assert clean.fit_overlap[0] == 0.0 and clean.summary().startswith("Recalibrated scores on 4000 held-out items")
    saved = socal.SecondOrderPlatt.from_dict(json.loads(json.dumps(platt.to_dict())))
    with pytest.warns(UserWarning, match="match rows the recalibrator"):
        again = socal.evaluate_recalibrated(saved, m[half], v[half], y[half], rng=0, n_boot=20)
    assert again.fit_overlap == r.fit_overlap
    stream = socal.SecondOrderPlatt(degree=3, alpha=1e-3, rng=0)
    for i in range(4):
        stream.partial_fit(m[fit][i::4], v[fit][i::4], y[fit][i::4])
    assert stream.fit_rows_.sketch == platt.fit_rows_.sketch
    with pytest.raises(ValueError, match="'fit_sketch' of SecondOrderPlatt.from_dict must be null or up to 256"):
        socal.SecondOrderPlatt.from_dict({**platt.to_dict(), "fit_sketch": "zz"})


def test_sample_truth_checks_its_arguments_before_the_draws():
    """sample_truth(None) raised "'NoneType' object is not callable", log2_n=40 failed in numpy's allocation of
    40 TiB, and one replicate gave an error of NaN (the error is the spread between replicates)."""
    from socal.truth import sample_truth

    with pytest.raises(TypeError, match="'sampler' parameter of sample_truth must be a callable"):
        sample_truth(None, 1 / 16)
    with pytest.raises(ValueError, match="'log2_n' parameter of sample_truth must be an int in the range \\[1, 26\\]"):
        sample_truth(lambda u: None, 1 / 16, log2_n=40)
    with pytest.raises(ValueError, match="'replicates' parameter of sample_truth must be an int in the range \\[2,"):
        sample_truth(lambda u: None, 1 / 16, replicates=1)


# -- hostile sweep 9 ------------------------------------------------------------------------------------------------

def test_a_calibration_test_has_no_truth_value():
    """``if socal.calibration_test(...):`` read as "if rejected" and was always true (the object's truth, even at
    p = 1): it is now a TypeError that names the two ways to ask."""
    m, v, _, y = socal.synthetic.calibrated_population().sample_raw(500, rng=0)
    res = socal.calibration_test(m, v, y)
    assert res.pvalue > 0.05
    with pytest.raises(TypeError, match="use test.pvalue < alpha, or pass alpha= and read test.rejected"):
        bool(res)
    assert socal.calibration_test(m, v, y, alpha=0.05).rejected is False


def test_test_statistics_refuse_an_unread_variance_and_name_themselves():
    """CalibrationTestStats(order=1).update(m, v, y) dropped v without a word while calibration_test refuses it;
    and .test() on too few rows named calibration_test's 'mean', which the user had not passed."""
    m, v, _, y = socal.synthetic.calibrated_population().sample_raw(200, rng=0)
    with pytest.raises(ValueError, match="'var' parameter of CalibrationTestStats.update must be None for order=1"):
        socal.CalibrationTestStats(order=1).update(m, v, y)
    first = socal.CalibrationTestStats(order=1).update(m, labels=y)
    assert first.test().pvalue == socal.calibration_test(m, None, y, order=1).pvalue
    with pytest.raises(ValueError, match="CalibrationTestStats.test needs at least 10 items; the statistics hold 0"):
        socal.CalibrationTestStats().test()
    with pytest.raises(ValueError, match="calibration_test needs at least 10 items; the data hold 5"):
        socal.calibration_test(m[:5], v[:5], y[:5])


def test_membership_in_an_interval_is_false_for_what_is_not_a_number():
    """``'a' in result.ci`` raised "could not convert string to float"; ``None in ci`` a TypeError from float().
    What is not a real number is not in the interval; one value in an array is read; many are refused."""
    ci = socal.ConfidenceInterval(0.1, 0.2, 0.9)
    assert 0.15 in ci and np.float32(0.15) in ci and np.array([0.15]) in ci and 0.2 in ci
    assert not any(x in ci for x in ("a", None, True, float("nan"), 1, np.array(["a"]), 0.25))
    with pytest.raises(TypeError, match="for an array of 2 use"):
        np.array([0.15, 0.3]) in ci  # noqa: B015


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


def test_the_evaluation_figure_names_itself_when_its_held_out_half_is_too_small():
    """evaluation_figure on 30 items said "The 'n_boot' parameter of plot.reliability ... or a smaller 'degree'":
    a function the user had not called, and a parameter evaluation_figure does not have."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    m, v, _, y = socal.synthetic.toy_population().sample_raw(30, rng=0)
    with pytest.raises(ValueError, match=r"'n_boot' parameter of plot\.evaluation_figure .* \(the held-out half\): "
                                         r"pass n_boot=0 for the curves alone, or more items\.$"):
        socal.plot.evaluation_figure(m, v, y, rng=0)
    with pytest.raises(ValueError, match=r"parameter of plot\.reliability .* or a smaller 'degree'\.$"):
        socal.plot.reliability(m[:12], v[:12], y[:12], rng=0)
    assert socal.plot.evaluation_figure(m, v, y, n_boot=0, rng=0) is not None


def test_signed_scores_are_named_as_possible_logits():
    """Members' logits passed as probabilities were refused with no hint (percentages get one): a signed array is
    now named as possible log-odds, and an array of one sign is not."""
    logits = np.random.default_rng(0).normal(size=(100, 3))
    with pytest.raises(ValueError, match=r"\(logits\? map them to probabilities with scipy\.special\.expit\)$"):
        socal.from_members(logits)
    with pytest.raises(ValueError, match="'mean' parameter of ce2 must be in \\[0, 1\\]") as err:
        socal.ce2(np.full(100, -0.1), np.full(100, 0.1), np.zeros((100, 2)))
    assert "logits" not in str(err.value)


@pytest.mark.parametrize("row,fine", [
    ("0,5,0,1,1,0", False),  # decimal commas: m read as 0, v as 5, the labels as 0, 1 (the old reading)
    ("0.5,0.1,1,0,a note, with a comma", False),  # an unquoted comma in a text column after the named ones
    ("0.5,0.1,1,0,", True),  # a trailing delimiter (as spreadsheets write): the extra field is empty
    ('0.5,0.1,1,0,"a note, quoted"', True),
])
def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path, row, fine):
    """A row with more fields than the header was read by position without a word: a comma inside an unquoted field
    (a decimal comma, a text) shifts the cells, and the named columns then hold their neighbours' values (pandas
    refuses such rows: "Expected 5 fields, saw 6").  Empty extra fields (trailing delimiters) stay accepted."""
    path = tmp_path / "s.csv"
    path.write_text("m,v,y1,y2,note\n0.4,0.05,0,0,ok\n" + row + "\n")
    reader = socal.io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"])
    if fine:
        m, v, y, _ = socal.io.read_all(reader)
        assert m.tolist() == [0.4, 0.5] and v.tolist() == [0.05, 0.1] and y.tolist() == [[0, 0], [1, 0]]
    else:
        with pytest.raises(ValueError, match=r"s\.csv, line 3: 6 field\(s\), but the header has 5: a ',' inside an "
                                             r"unquoted field"):
            socal.io.read_all(reader)


def test_pandas_inputs_with_other_indexes_are_refused_not_paired_by_position():
    """ce2(df["m"].sort_values(), df["v"], df[["y1", "y2"]]) paired each sorted mean with another row's variance and
    labels and returned 0.43 for a predictor whose CE2 is 0.12 (pandas would have aligned them by index).  Pandas
    inputs must now share one index; numpy arrays, and pandas objects with one index, are read as before."""
    pd = pytest.importorskip("pandas")
    m, v, y = socal.synthetic.toy_population().sample(2000, h=1 / 16, rng=0)
    df = pd.DataFrame({"m": m, "v": v, "y1": y[:, 0], "y2": y[:, 1]})
    labels = df[["y1", "y2"]]
    rule = "has another pandas index than '{}': socal pairs rows by position"
    with pytest.raises(ValueError, match="'var' parameter of ce2 " + rule.format("mean")):
        socal.ce2(df["m"].sort_values(), df["v"], labels, debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of ce1 " + rule.format("mean")):
        socal.ce1(df["m"], labels.iloc[::-1], debias=False)
    with pytest.raises(ValueError, match=r"'counts\[1\]' parameter of calibration_test " + rule.format("mean")):
        socal.calibration_test(df["m"], df["v"] * 0, counts=(labels.sum(axis=1), pd.Series(2, index=df.index + 1)))
    with pytest.raises(ValueError, match="'labels' parameter of evaluate " + rule.format("raw_mean")):
        socal.evaluate(df["m"], df["v"] * 0, labels.sample(frac=1, random_state=0))
    with pytest.raises(ValueError, match="'y' parameter of SecondOrderPlatt.fit " + rule.format("X")):
        socal.SecondOrderPlatt().fit(df[["m", "v"]], labels.iloc[::-1])
    plain = socal.ce2(m, v, y, debias=False).estimate
    assert socal.ce2(df["m"], df["v"], labels, debias=False).estimate == plain
    assert socal.ce2(df["m"].to_numpy(), df["v"], labels.iloc[::-1].to_numpy()[::-1], debias=False).estimate == plain


def test_a_holdout_split_leaving_a_side_empty_is_refused():
    """holdout=0.999 on 500 items trained on half an item: selection fell back to a constant fit and returned 0.43
    (the default CE2 estimate is 0.21); holdout=0.001 validated on none.  As K folds need 2 items each, each side of
    a hold-out split now needs 2."""
    m, v, y = socal.synthetic.toy_population().sample(500, h=1 / 16, rng=0)
    for holdout, sides in ((0.999, "0.5 items to train on and 499.5 to validate"),
                           (0.001, "499.5 items to train on and 0.5 to validate")):
        with pytest.raises(ValueError, match=r"'holdout' parameter of ce2 must leave at least 2 of the 500 items on "
                                             r"each side \(a fraction in \[0\.004, 0\.996\]\)\. Got "
                                             + f"{holdout} instead, {sides}"):
            socal.ce2(m, v, y, holdout=holdout, debias=False)
    assert 0 < socal.ce2(m, v, y, holdout=0.996, debias=False).estimate < 1


def test_evaluate_and_the_reference_name_their_own_score_parameters():
    """evaluate(raw_mean, raw_var, ...) and calibrated_reference said "The 'mean' parameter of evaluate", a parameter
    neither has; they name raw_mean and raw_var now (and DiscretePopulation its fields, without rewriting text)."""
    with pytest.raises(ValueError, match="The 'raw_mean' parameter of evaluate must be in \\[0, 1\\]"):
        socal.evaluate(np.full(20, 1.5), np.zeros(20), np.zeros((20, 2)))
    with pytest.raises(ValueError, match=r"'raw_var' parameter of evaluate must be at most raw_mean\*\(1-raw_mean\)"):
        socal.evaluate(np.full(20, 0.1), np.full(20, 0.2), np.zeros((20, 2)))
    with pytest.raises(ValueError, match="The 'raw_mean' parameter of calibrated_reference must be an array with at "
                                         "least 1 row"):
        socal.truth.calibrated_reference(np.array([]), np.array([]), h=1 / 16)
    with pytest.raises(ValueError, match="The 'vars' parameter of DiscretePopulation must be at most means"):
        socal.synthetic.DiscretePopulation(means=[0.1], vars=[0.2], weights=[1.0], fstar=[[0.1]], fprobs=[[1.0]])


def test_a_recalibrator_saves_to_what_it_loads_from(tmp_path, small):
    """load took a binary file object and save raised "a bytes-like object is required"; save to a folder or a
    missing folder raised a bare OSError where load's ValueError names the file; a saved map with a NaN coefficient
    was described as "'list of length 25'", the one thing about it that was right."""
    import io

    m, v, y = small
    platt = socal.SecondOrderPlatt(degree=3, alpha=1e-3, rng=0).fit(m, v, y)
    want = platt.transform(m[:5], v[:5])
    buffer = io.BytesIO()
    platt.save(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(socal.SecondOrderPlatt.load(buffer).transform(m[:5], v[:5]), want)
    with open(tmp_path / "b.json", "wb") as fh:
        platt.save(fh)
    np.testing.assert_array_equal(socal.SecondOrderPlatt.load(tmp_path / "b.json").transform(m[:5], v[:5]), want)
    for path in (tmp_path, tmp_path / "no" / "p.json"):
        with pytest.raises(OSError) as os_error:  # the platform's own words for why (Linux: 'Is a directory', ...)
            open(path, "w")
        why = re.escape(os_error.value.strerror)
        with pytest.raises(ValueError, match=f"SecondOrderPlatt.save: .* cannot be written \\({why}\\)"):
            platt.save(path)
    d = platt.to_dict()
    beta = [list(row) for row in d["map"]["beta"]]
    beta[3][1] = float("nan")
    with pytest.raises(ValueError, match=r"'map.beta' .* 2 finite numbers .* Got row 3 = \[.*, nan\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "map": {**d["map"], "beta": beta}})


def test_the_reliability_diagram_is_the_same_every_call_with_rng_omitted(small):
    """plot.reliability(m, v, y) drew its folds and bands from fresh entropy, so the curve itself moved between two
    identical calls (the estimators' rng=None is a fixed seed, as README promises)."""
    m, v, y = small
    a, b = (socal.plot.reliability(m, v, y, n_boot=20) for _ in range(2))
    np.testing.assert_array_equal(a.eta1, b.eta1)
    np.testing.assert_array_equal(a.eta1_band, b.eta1_band)
    np.testing.assert_array_equal(a.cond_var_band, b.cond_var_band)


def test_a_float32_variance_at_its_bound_is_round_off_not_an_error():
    """var = m (1 - m) computed in float32 (a GPU ensemble's members all at 0 or 1) lies up to ~1e-8 above the
    float64 bound and was refused as infeasible ("at most mean*(1-mean)"), while the same round-off at the ends of
    [0, 1] is clipped: it is clipped onto the bound now, and a real excess is still refused."""
    rng = np.random.default_rng(0)
    m = rng.uniform(0.01, 0.99, 3000).astype(np.float32)
    v = (m * (1 - m)).astype(np.float32)
    assert np.any(v.astype(float) > m.astype(float) * (1 - m.astype(float)))  # the round-off is there
    agree = np.repeat((rng.random((3000, 1)) < m[:, None]).astype(float), 2, axis=1)
    res = socal.calibration_test(m, v, agree)  # f* is 0 or 1 and both labels agree: calibrated, nothing impossible
    assert res.impossible == 0 and res.pvalue > 0.001  # (its size here: 1.5% of 200 seeds rejected at 0.05)
    with pytest.raises(ValueError, match="at most mean\\*\\(1-mean\\)"):  # 1e-6 above: a real excess
        socal.calibration_test(np.full(20, 0.1, dtype=np.float32), np.full(20, 0.09 + 1e-6, dtype=np.float32),
                               np.zeros((20, 2)))


# -- hostile sweep 10 --------------------------------------------------------------------------------------------------

def test_a_shifted_row_cannot_hide_behind_a_short_one(tmp_path):
    """The fast CSV parse was taken when the file's delimiters totalled the header's fields on every line, so a row
    with a decimal comma (a field too many, its cells shifted) next to a row without its last, unnamed field read
    m = 0, v = 4 in silence.  Lines are now counted one by one; the shifted one is refused by its line number."""
    path = tmp_path / "s.csv"
    path.write_text("m,v,y1,y2,note\n0,4,0.05,0,0,ok\n0.5,0.1,1,0\n")
    with pytest.raises(ValueError, match=r"s\.csv, line 2: 6 field\(s\), but the header has 5"):
        socal.io.read_all(socal.io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"]))


def test_a_trailing_delimiter_on_every_line_takes_the_fast_parse(tmp_path, monkeypatch):
    """A file whose every line ends with the delimiter (a spreadsheet export) was parsed row by row: 5.3 s against
    1.2 s for 200,000 rows.  The empty last field is now allowed in the fast parse; the arrays are those of the
    same file without it."""
    rows = ["0.4,0.05,0,1", "0.5,0.1,1,0", "0.25,0.0,1,1"]
    plain, trailing = tmp_path / "p.csv", tmp_path / "t.csv"
    plain.write_text("\n".join(["m,v,y1,y2"] + rows) + "\n")
    trailing.write_text("\n".join(["m,v,y1,y2"] + [r + "," for r in rows]) + "\n")

    def slow(*args):
        raise AssertionError("the row-by-row parse was taken")

    want = socal.io.read_all(socal.io.read_chunks(plain, mean="m", var="v", labels=["y1", "y2"]))
    monkeypatch.setattr(socal.io.CSVChunks, "_parse_slow", slow)
    got = socal.io.read_all(socal.io.read_chunks(trailing, mean="m", var="v", labels=["y1", "y2"]))
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(a, b)


def test_a_level_no_replicate_count_can_reach_is_named_as_the_level(small):
    """ci=0.9999999 asked for "n_boot at least 2 / (1 - ci) = 20000001 for ci=1": the level printed rounded to 1,
    and a count above n_boot's cap of 1,000,000.  The level itself is now refused (above 1 - 2/1e6 for an interval,
    1 - 1/1e6 for a bound), and the message prints the level as given.  ci=0.9999 asked for 20001 replicates: 1 -
    0.9999 is 9.99999999999989e-05 in floats, and the count's round-off allowance was absolute."""
    m, v, y = small
    for kw, rule in ((dict(ci=0.9999999), "'ci' parameter of ce2 must be at most 0.999998 "),
                     (dict(upper=0.9999995), "'upper' parameter of ce2 must be at most 0.999999 ")):
        with pytest.raises(ValueError, match=re.escape(rule) + r".*capped at 1,000,000.*Got 0\.99999"):
            socal.ce2(m, v, y, **kw)
    with pytest.raises(ValueError, match=re.escape("= 20000 for ci=0.9999 ")):  # 2 / (1 - 0.9999) rounds up
        socal.ce2(m, v, y, ci=0.9999)


def test_counts_and_chunks_in_the_wrong_container_say_which_to_use(small):
    """counts=np.column_stack([positives, trials]) and chunks=(mean, var, labels) were refused as 'Got ndarray':
    true, but the fix (two arrays, a list of chunks) was left to guess.  Both messages now name it."""
    m, v, y = small
    a, k = y.sum(axis=1), np.full(y.shape[0], 2)
    for c, fix in ((np.column_stack([a, k]), "c[:, 0], c[:, 1]"), (np.vstack([a, k]), "c[0], c[1]")):
        with pytest.raises(ValueError, match=re.escape(f"Got ndarray of shape {c.shape} instead. An array of both "
                                                       f"columns? pass counts=({fix}).")):
            socal.ce2(m, v, counts=c)
    with pytest.raises(ValueError, match=r"pair \(positives, trials\) of arrays\. Got tuple of length 3 instead\.$"):
        socal.ce2(m, v, counts=(a, k, k))
    with pytest.raises(TypeError, match=re.escape("Got ndarray instead (the arrays of one chunk where a list of "
                                                  "chunks belongs? pass chunks=[(mean, var, labels)]")):
        socal.ce2(chunks=(m, v, y))


def test_one_label_per_item_in_the_var_slot_of_a_first_order_map_says_so(small):
    """FirstOrderPlatt().fit(mean, labels) with labels a 1-D 0/1 array (one label per item, which first order
    accepts) was told only that 'var' must be None.  The message now reads the 0/1 values as labels and names both
    calls that fit them; a 1-D array of other values keeps the plain rule."""
    m, _, y = small
    with pytest.raises(ValueError, match=re.escape("one label per item? call fit(mean, None, labels[:, None]), or "
                                                   "pass X = mean[:, None]")):
        socal.FirstOrderPlatt().fit(m, y[:, 0])
    with pytest.raises(ValueError, match=r"Pass var=None, or ndim=2 to fit on \(mean, var\)\.$"):
        socal.FirstOrderPlatt().fit(m, np.full(m.shape, 0.01))
    np.testing.assert_array_equal(socal.FirstOrderPlatt().fit(m, None, y[:, :1]).transform(m[:3])[0],
                                  socal.FirstOrderPlatt().fit(m[:, None], y[:, 0]).transform(m[:3, None])[:, 0])


def test_negative_zeros_key_the_same_draws_as_zeros():
    """A variance column with -0.0 where another had 0.0 (the same numbers: -x * 0 gives -0.0) drew other bootstrap
    labels and folds, since the draws are keyed by each row's bits: CE2 moved from 0.1363 to 0.1352.  Validated
    scores and counts now read -0.0 as 0.0, so every number is the same, bit for bit."""
    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    v = v.copy()
    v[:50] = 0.0
    zero = np.arange(3000) < 200
    mz = np.where(zero, 0.0, m)
    yz = np.where(zero[:, None], 0.0, y)

    def numbers(sign):
        neg = (lambda x: np.where(x == 0, sign * 0.0, x))
        r = socal.ce2(neg(mz), neg(v), neg(yz), ci=0.9, upper=0.95, n_boot=50)
        rc = socal.ce2(neg(mz), neg(v), counts=(neg(yz.sum(axis=1)), np.full(3000, 2)), n_boot=50)
        t = socal.calibration_test(neg(mz), np.minimum(neg(v), mz * (1 - mz)), neg(yz))
        return [r.estimate, r.ci.low, r.ci.high, r.upper.value, rc.estimate, t.statistic]

    assert np.signbit(np.where(v == 0, -0.0, v)).sum() == 50  # the negative zeros are there
    assert numbers(-1.0) == numbers(1.0)


def test_a_map_fits_on_dask_arrays_and_knows_its_rows():
    """SecondOrderPlatt.fit on dask arrays (which ce2 takes) failed with AttributeError: 'DaskSource' object has no
    attribute 'chunk' (the fit-row fingerprint read the in-memory chunk).  The fingerprint now takes a pass over the
    partitions: the same map, and the same fingerprint and sketch, as from the arrays."""
    da = pytest.importorskip("dask.array")
    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    ref = socal.SecondOrderPlatt(h=1 / 16).fit(m, v, y)
    got = socal.SecondOrderPlatt(h=1 / 16).fit(da.from_array(m, 700), da.from_array(v, 700), da.from_array(y, 700))
    assert got.fit_rows_ == ref.fit_rows_ and got.fit_rows_.sketch == ref.fit_rows_.sketch
    np.testing.assert_allclose(got.transform(m, v), ref.transform(m, v), rtol=0, atol=1e-12)
    with pytest.warns(UserWarning, match="are the ones the recalibrator was fitted on"):
        assert socal.evaluate_recalibrated(got, m, v, y, n_boot=20).in_sample


def test_dask_inputs_filtered_differently_are_named():
    """ce2(mean[keep], var, labels) with dask arrays (mean filtered, so its row blocks have unknown sizes) raised
    dask's own "Chunks must be unchanging along dimensions with missing values".  It now names the argument, the
    one with unknown blocks, and the fix; inputs filtered with one mask are read as before."""
    da = pytest.importorskip("dask.array")
    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    M, V, Y = da.from_array(m, 700), da.from_array(v, 700), da.from_array(y, 700)
    keep = M > 0.2
    for args, name, unknown in (((M[keep], V, Y), "var", "mean"), ((M[keep], V[keep], Y), "labels", "mean"),
                                ((M, V[keep], Y[keep]), "var", "var")):
        with pytest.raises(ValueError, match=f"The '{name}' parameter of ce2 cannot be split into the row blocks of "
                                             f"'mean': the row blocks of '{unknown}' have unknown sizes .*\\."
                                             f"compute_chunk_sizes\\(\\) on '{unknown}'"):
            socal.ce2(*args, debias=False)
    k = m > 0.2
    assert socal.ce2(M[keep], V[keep], Y[keep], debias=False).estimate == pytest.approx(
        socal.ce2(m[k], v[k], y[k], debias=False).estimate, rel=1e-12)


_SMALL_ARGS = socal.synthetic.toy_population().sample(300, h=1 / 16, rng=0)


@pytest.mark.parametrize("call, name", [
    (lambda rng: socal.ce2(*_SMALL_ARGS, rng=rng), "ce2"),
    (lambda rng: socal.perturb([0.5], [0.1], h=1 / 16, rng=rng), "perturb"),
    (lambda rng: socal.SufficientStats(rng=rng), "SufficientStats"),
    (lambda rng: socal.synthetic.toy_population().sample(10, h=1 / 16, rng=rng), "DiscretePopulation.sample"),
])
def test_a_bad_rng_names_the_function_and_the_legacy_generator(call, name):
    """A bad rng was refused as "The 'rng' parameter must be ..." without the function's name, which every other
    message carries; numpy's legacy RandomState (scikit-learn's random_state habit) got no word on what to pass."""
    with pytest.raises(ValueError, match=f"The 'rng' parameter of {re.escape(name)} must be .* Got RandomState "
                                         f"instead \\(the legacy RandomState: pass np\\.random\\.default_rng"):
        call(np.random.RandomState(0))
    with pytest.raises(ValueError, match=f"The 'rng' parameter of {re.escape(name)} must be .* Got str instead\\.$"):
        call("0")


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


def test_statistics_take_an_empty_chunk_and_refuse_to_merge_with_themselves(small):
    """SufficientStats.update and CalibrationTestStats.update refused an empty chunk ('at least 1 row'), which ce2's
    and calibration_test's chunks, and dask partitions, add as nothing; and stats.merge(stats) counted every row
    twice in silence.  An empty chunk now adds nothing; a merge with the same object is refused."""
    m, v, y = small
    rm, rv, _, ry = socal.synthetic.calibrated_population().sample_raw(400, rng=0)
    for stats, (a, b, c) in ((socal.SufficientStats(max_degree=4, rng=0), (m, v, y)),
                             (socal.CalibrationTestStats(), (rm, rv, ry))):
        state = (lambda s: s.to_bytes() if hasattr(s, "to_bytes") else s.sums.tobytes())  # every sum, as bytes
        stats.update(a, b, c)
        before = state(stats)
        assert stats.update(a[:0], b[:0], c[:0]) is stats
        assert stats.update(a[:0], b[:0], counts=(c[:0, 0], c[:0, 0])) is stats
        assert state(stats) == before
        with pytest.raises(ValueError, match="merged with themselves would count every row twice"):
            stats.merge(stats)
        with pytest.raises(ValueError, match="merged with themselves would count every row twice"):
            stats + stats  # noqa: B018
        with pytest.raises(ValueError, match="must be an array with at least 1 row|must be an array of shape"):
            stats.update(a[:0], b[:3], c[:0])  # a mean of 0 rows beside 3 variances: not an empty chunk


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


def test_the_baselines_give_the_same_estimate_every_call_with_rng_omitted():
    """bucketing_ce2 and kernel_ce2 with rng omitted drew their hold-out split from fresh entropy: two identical
    calls on the toy population returned 0.1727 and 0.1799 (another c chosen).  Omitted is now the seed 0, as for
    the estimators (README)."""
    from socal.baselines import bucketing_ce2, kernel_ce2

    for seed in range(6):
        m, v, y = socal.synthetic.toy_population().sample(600, h=1 / 16, rng=seed)
        for fn in (bucketing_ce2, kernel_ce2):
            got = [fn(m, v, y, h=1 / 16) for _ in range(2)]
            want = fn(m, v, y, h=1 / 16, rng=0)
            assert [(r.estimate, r.alpha) for r in got] == [(want.estimate, want.alpha)] * 2


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


def test_one_label_per_item_as_a_vector_is_first_order_data():
    """ce1(mean, labels) with labels a 1-D 0/1 vector (one label per item, scikit-learn's y; ce1 takes k >= 1) was
    refused as 'must be a 2-dimensional array'.  A vector is now read as the (n, 1) column for first order (ce1,
    the order-1 test), with the same numbers; ce2 still refuses it and says why."""
    m, _, y = socal.synthetic.toy_population().sample(2000, h=1 / 16, rng=0)
    assert socal.ce1(m, y[:, 0], ci=0.9, n_boot=50).ci == socal.ce1(m, y[:, :1], ci=0.9, n_boot=50).ci
    rm, rv, _, ry = socal.synthetic.toy_population().sample_raw(2000, rng=0)
    assert (socal.calibration_test(rm, None, ry[:, 0], order=1).statistic
            == socal.calibration_test(rm, None, ry[:, :1], order=1).statistic)
    with pytest.raises(ValueError, match="A k-snapshot needs k >= 2 labels per item, an \\(n, k\\) array; with one "
                                         "label per item only the first-order error can be measured \\(ce1\\)"):
        socal.ce2(rm, rv, ry[:, 0])
