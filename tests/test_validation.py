"""socal._validation: inputs numpy cannot make an array of are refused with socal's own message (issue 61)."""

import numpy as np
import pytest

import socal
import math
import re

M, V = [0.2, 0.4, 0.6] * 40, [0.01, 0.02, 0.03] * 40
Y = [[0, 1], [1, 1], [0, 0]] * 40
RAGGED_Y = [[0, 1], [1, 1, 0], [0, 0]] * 40


@pytest.mark.parametrize("call, name", [
    (lambda: socal.ce2([[0.1], [0.2, 0.3]] * 60, V, Y), "mean"),
    (lambda: socal.ce2(M, [[0.1], [0.1, 0.2]] * 60, Y), "var"),
    (lambda: socal.ce2(M, V, RAGGED_Y), "labels"),
    (lambda: socal.ce1([0.1, [0.2], 0.3] * 40, Y), "mean"),
    (lambda: socal.calibration_test(M, V, RAGGED_Y), "labels"),
    (lambda: socal.evaluate(M, V, RAGGED_Y), "labels"),
    (lambda: socal.SecondOrderPlatt().fit(M, V, RAGGED_Y), "labels"),
])
def test_a_ragged_list_is_refused_naming_the_argument_and_the_rule(call, name):
    """ce2([[0.1], [0.2, 0.3]], ...) raised numpy's "inhomogeneous shape after 1 dimensions"."""
    with pytest.raises(ValueError, match=f"The '{name}' parameter of .* must be a rectangular array") as err:
        call()
    assert "inhomogeneous" not in str(err.value) and "different lengths" in str(err.value)
    if name == "labels":
        assert "pass counts=(positives, trials)" in str(err.value)


def test_the_same_lists_made_rectangular_are_taken():
    """Negative control: the refusal is about the raggedness, not about lists."""
    assert socal.calibration_test(M, V, Y).df > 0
    a = np.array([sum(r) for r in RAGGED_Y], dtype=float)
    k = np.array([len(r) for r in RAGGED_Y], dtype=float)
    assert socal.calibration_test(M, V, counts=(a, k)).n == 120


_SMALL_ARGS = socal.synthetic.toy_population().sample(300, h=1 / 16, rng=0)


def test_ce2_without_var_is_refused_not_ce1(small):
    m, v, y = small
    with pytest.raises(ValueError, match="'var' parameter of ce2 .* use ce1"):
        socal.ce2(m, None, y, debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of ce2 must be an \\(n, k\\) array with k >= 2"):
        socal.ce2(m, v, y[:, :1], debias=False)
    with pytest.raises(ValueError, match="'labels' parameter of calibration_functions"):
        socal.calibration_functions(m, v, y[:, :1])


@pytest.mark.parametrize("kw,n", [({"max_degree": 0}, 400), ({"folds": 2}, 4), ({"folds": 2}, 7),
                                  ({"holdout": 0.7}, 10), ({"max_degree": 1}, 10), ({"degree": 0, "ridge": 0.0}, 10)])
def test_degenerate_sizes_finish(small, kw, n):
    """These looped forever in the degree schedule (floor 0: 0 // 2 == 0); now they finish with a finite answer."""
    m, v, y = small
    res = socal.ce2(m[:n], v[:n], y[:n], rng=0, **kw, debias=False)
    assert math.isfinite(res.estimate) and res.degree >= 0


def test_huge_and_overflowing_counts():
    n = 50
    m, v = np.linspace(0.1, 0.9, n), np.zeros(n)  # f* = m and no spread: CE2 = 0 exactly
    k = np.full(n, 4e9)
    a = np.round(k * m)
    # was: int64 overflow into negative targets
    res = socal.ce2(m, v, counts=(a, k), degree=2, ridge=1e-3, debias=False)
    assert 0 <= res.estimate < 0.01  # f* = m exactly (up to rounding a = k m): calibrated means
    k10 = np.full(n, 1e10)
    # was: a 74 GiB allocation
    res = socal.ce2(m, v, counts=(np.round(k10 * m), k10), degree=2, ridge=1e-3, debias=False)
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


@pytest.mark.parametrize("kw,match", [({"ridge": []}, "'ridge'"), ({"ridge": [[1e-3]]}, "'ridge'"),
                                      ({"degree": []}, "'degree'"), ({"degree": -1}, "'degree'"),
                                      ({"degree": 4.5}, "'degree'"), ({"degree": "high"}, "'degree'"),
                                      ({"ridge": -1.0}, "'ridge'"), ({"folds": 1}, "'folds'"),
                                      ({"holdout": 1.0}, "'holdout'"), ({"ci": 1.0}, "'ci'"),
                                      ({"n_boot": 5}, "'n_boot'"), ({"rng": "seed"}, "'rng'")])
def test_bad_options_name_the_argument(small, kw, match):
    m, v, y = small
    with pytest.raises(ValueError, match=match):
        socal.ce2(m, v, y, **kw, debias=False)


def test_zero_dimensional_arrays_are_scalars(small):
    m, v, y = small
    a = socal.ce2(m, v, y, degree=np.array(4), ridge=np.array(1e-3), debias=False)
    b = socal.ce2(m, v, y, degree=4, ridge=1e-3, debias=False)
    assert a.estimate == b.estimate and a.degree == 4


def test_round_off_at_the_edges_is_clipped_beyond_is_refused(small):
    m, v, y = small
    m2, v2 = m.copy(), v.copy()
    m2[0], v2[0] = 1 + 1e-12, -1e-17
    ref_m, ref_v = m.copy(), v.copy()
    ref_m[0], ref_v[0] = 1.0, 0.0
    assert socal.ce2(m2, v2, y, degree=4, ridge=1e-3, debias=False).estimate == socal.ce2(ref_m, ref_v, y, degree=4,
                                                                          ridge=1e-3, debias=False).estimate
    m32 = m.astype(np.float32)
    m32[0] = np.float32(1.0000001)
    assert math.isfinite(socal.ce2(m32, v, y, degree=4, ridge=1e-3, debias=False).estimate)
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


def test_progress_is_true_or_false_everywhere(small):
    """'progress' took any object and read its truth (progress="no" drew bars), where 'debias' and 'project' were
    checked; now every function that takes it checks it alike."""
    m, v, y = small
    rm, rv, _, ry = socal.synthetic.calibrated_population().sample_raw(400, rng=0)
    calls = {"ce2": lambda p: socal.ce2(m, v, y, degree=2, ridge=1e-3, debias=False, progress=p),
             "ce1": lambda p: socal.ce1(m, y, degree=2, ridge=1e-3, debias=False, progress=p),
             "calibration_test": lambda p: socal.calibration_test(rm, rv, ry, progress=p),
             "evaluate": lambda p: socal.evaluate(rm, rv, ry, progress=p)}
    for name, call in calls.items():
        for bad in ("no", None, 1, 0):
            with pytest.raises(ValueError, match=f"'progress' parameter of {name} must be True or False"):
                call(bad)
    assert calls["ce2"](np.bool_(False)).estimate == calls["ce2"](False).estimate  # numpy's bool is a bool


def test_an_interval_needs_a_replicate_beyond_each_end(small):
    """ci=0.999 with the default 200 replicates returned the range of the 200 bootstrap values, labelled a 99.9%
    interval: its ends, the bootstrap's 0.05% and 99.95% quantiles, lay on or between the extreme replicates.  Now
    n_boot must reach 2 / (1 - ci) (1 / (1 - upper) for the bound), checked before any work."""
    m, v, y = small
    rm, rv, _, ry = socal.synthetic.calibrated_population().sample_raw(400, rng=0)
    kw = dict(degree=2, ridge=1e-3)
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


def test_calibration_functions_take_one_score_and_shape_errors_carry_no_percent_hint(small):
    """cf.eta1(0.5, 0.1) was refused ("must be a one-dimensional array. Got a scalar"), and ce2(1.5, ...) added
    "(percentages? divide by 100)" to that shape error; one score now gives floats equal to the array's values,
    and the hint is kept for values out of range."""
    m, v, y = small
    cf = socal.calibration_functions(m, v, y, degree=3, ridge=1e-3)
    e1, e2 = cf(0.4, 0.05)
    a1, a2 = cf(np.array([0.4]), np.array([0.05]))
    assert isinstance(e1, float) and (e1, e2) == (a1[0], a2[0]) and cf.eta2(0.4, 0.05) == e2
    with pytest.raises(ValueError, match="one-dimensional array. Got a scalar instead.$"):
        socal.ce2(1.5, 0.1, [[1, 0]])
    with pytest.raises(ValueError, match="percentages"):
        socal.ce2(np.full(20, 50.0), np.full(20, 0.1), np.ones((20, 2)))


def test_an_infeasible_raw_score_is_named_in_plain_numbers():
    """The message printed numpy 2's repr, "var=np.float64(0.1288...) at mean=np.float64(0.8679...)"."""
    with pytest.raises(ValueError) as exc:
        socal.calibration_test([0.5, 0.9] * 10, [0.1, 0.2] * 10, np.ones((20, 2)))
    msg = str(exc.value)
    assert "e.g. var=0.2 at mean=0.9" in msg and "np.float64" not in msg


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


def _count_calls(monkeypatch, module, name):
    """Wrap ``module.name`` so that its calls are counted (the list returned grows by one per call)."""
    calls, real = [], getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[:1])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_evaluate_validates_its_rows_once(monkeypatch):
    """evaluate checks the raw scores and labels itself, once, and hands them on (socal.sources.Rows): the test,
    CE2 and CE1 inside it validate no rows again (they validated the raw scores 3 times and the labels 4).
    Negative control: the public ce2 on the same arrays validates its rows."""
    import socal.pipeline
    import socal.testing

    m, v, _, y = socal.synthetic.toy_population().sample_raw(1500, rng=0)
    rows = [_count_calls(monkeypatch, mod, "check_rows") for mod in (socal.pipeline, socal.testing)]
    scores = _count_calls(monkeypatch, socal._evaluate, "check_scores")
    labels = _count_calls(monkeypatch, socal._evaluate, "check_labels")
    socal.evaluate(m, v, y, h=1 / 16, n_boot=20)
    assert (len(scores), len(labels), len(rows[0]) + len(rows[1])) == (1, 1, 0)
    socal.ce2(m, v, y, h=1 / 16, n_boot=20)  # control: a public call validates its rows
    assert len(rows[0]) == 1


@pytest.mark.parametrize("kw,match", [(dict(alpha=1.5), "'alpha' parameter of calibration_test"),
                                      (dict(degree=99), "'degree' parameter of calibration_test"),
                                      (dict(covariance="robust"), "'covariance' parameter of calibration_test"),
                                      (dict(order=True), "'order' parameter of calibration_test"),
                                      (dict(progress=1), "'progress' parameter of calibration_test")])
def test_the_calibration_test_checks_its_options_before_its_pass(monkeypatch, kw, match):
    """Every option of the test's declarative table (socal.testing.TEST_PARAMETERS) is refused before the pass over
    the data (alpha and degree were checked only after it).  Negative control: with valid options the pass runs."""
    import socal.testing

    m, v, _, y = socal.synthetic.toy_population().sample_raw(500, rng=0)
    passes = _count_calls(monkeypatch, socal.testing.TestPass, "__call__")
    with pytest.raises(ValueError, match=match):
        socal.calibration_test(m, v, y, **kw)
    assert passes == []
    socal.calibration_test(m, v, y, alpha=0.1, degree=3)
    assert len(passes) == 1


def test_every_declarative_table_names_a_rule_in_words():
    """The tables of the public calls (the estimators', the test's, evaluate's) hold Rules whose words a reader can
    print; a rule that depends on another comes after it (n_boot after ci and upper)."""
    from socal._evaluate import EVALUATE_PARAMETERS
    from socal.pipeline import ESTIMATOR_PARAMETERS
    from socal.testing import TEST_PARAMETERS

    for table in (ESTIMATOR_PARAMETERS, TEST_PARAMETERS, EVALUATE_PARAMETERS):
        assert all(isinstance(rule.doc, str) and rule.doc for rule in table.values())
    order = list(ESTIMATOR_PARAMETERS)
    assert order.index("n_boot") > max(order.index("ci"), order.index("upper"))
    assert list(EVALUATE_PARAMETERS).index("n_boot") > list(EVALUATE_PARAMETERS).index("ci")
