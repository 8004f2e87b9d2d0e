"""Mergeable sufficient statistics: exact merges, chunk-invariant folds, and every out-of-core path against the
in-memory one (coefficients to 1e-10 relative, CE2 to 1e-12)."""

import io
import json
import pickle
import warnings

import numpy as np
import pytest

import socal
from socal import SufficientStats
from socal.io import CSVChunks, MissingVotesWarning, ParquetChunks, read_chunks
import errno
import os
import re

COEF_RTOL = 1e-10  # the bar for coefficients (relative to the largest coefficient)
CE_ATOL = 1e-12  # and for CE2


@pytest.fixture(scope="module")
def sample():
    pop = socal.synthetic.toy_population()
    m, v, y = pop.sample(12_000, h=1 / 16, rng=3)
    return m, v, y


def _random_chunks(m, v, y, rng, n_chunks):
    cuts = np.sort(rng.choice(np.arange(1, len(m)), n_chunks - 1, replace=False))
    bounds = np.r_[0, cuts, len(m)]
    return [(m[a:b], v[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_merge_is_exact_and_associative_for_any_chunking(sample):
    m, v, y = sample
    whole = SufficientStats(max_degree=12, rng=5).update(m, v, y)
    rng = np.random.default_rng(0)
    for n_chunks in (2, 7, 31):
        parts = [SufficientStats(max_degree=12, rng=5).update(*c) for c in _random_chunks(m, v, y, rng, n_chunks)]
        left = parts[0]
        for p in parts[1:]:
            left = left.merge(p)
        right = parts[-1]
        for p in parts[-2::-1]:
            right = p.merge(right)
        for got in (left, right):
            assert got.n == whole.n
            np.testing.assert_array_equal(got.count, whole.count)  # folds do not depend on the chunking
            for key in ("M", "Z", "zz"):
                np.testing.assert_allclose(getattr(got, key), getattr(whole, key), rtol=1e-12, atol=1e-8)


def test_folds_do_not_depend_on_row_order_or_chunk(sample):
    m, v, y = sample
    st = SufficientStats(max_degree=4, rng=9)
    zs = np.column_stack(socal.snapshots.targets(y.sum(1), np.full(len(m), 2.0)))
    f = st.fold_of(m, v, zs)
    perm = np.random.default_rng(1).permutation(len(m))
    np.testing.assert_array_equal(st.fold_of(m[perm], v[perm], zs[perm]), f[perm])
    np.testing.assert_array_equal(st.fold_of(m[:100], v[:100], zs[:100]), f[:100])
    # another seed, other folds (the seed matters); roughly balanced
    assert np.mean(SufficientStats(max_degree=4, rng=10).fold_of(m, v, zs) == f) < 0.3
    assert np.bincount(f).min() > 0.18 * len(m)


def test_merge_refuses_other_settings(sample):
    m, v, y = sample
    a = SufficientStats(max_degree=6, rng=1).update(m[:100], v[:100], y[:100])
    for other in (SufficientStats(max_degree=7, rng=1), SufficientStats(max_degree=6, rng=2),
                  SufficientStats(max_degree=6, folds=4, rng=1), SufficientStats(max_degree=6, ndim=1, rng=1)):
        with pytest.raises(ValueError, match="cannot be merged"):
            a.merge(other)
    with pytest.raises(TypeError):
        a.merge(np.zeros(3))


@pytest.mark.parametrize("degree,alpha", [(None, None), (10, 1e-4)])
def test_stats_route_equals_in_memory(sample, degree, alpha):
    m, v, y = sample
    ref = socal.calibration_functions(m, v, y, h=1 / 16, degree=degree, ridge=alpha, rng=4)
    chunks = _random_chunks(m, v, y, np.random.default_rng(2), 9)
    st = SufficientStats(max_degree=44, rng=4)
    for c in chunks:
        st.update(*c)
    got = socal.calibration_functions(st, chunks=chunks, h=1 / 16, degree=degree, ridge=alpha, rng=4)
    assert (got.degree, got.ridge) == (ref.degree, ref.ridge)
    assert _rel(got.map.beta, ref.map.beta) < COEF_RTOL
    r_ref = socal.ce2(m, v, y, h=1 / 16, degree=degree, ridge=alpha, rng=4, debias=False)
    r_got = socal.ce2(st, chunks=chunks, h=1 / 16, degree=degree, ridge=alpha, rng=4, debias=False)
    r_stream = socal.ce2(chunks=chunks, h=1 / 16, degree=degree, ridge=alpha, rng=4, debias=False)
    assert abs(r_got.estimate - r_ref.estimate) < CE_ATOL
    assert abs(r_stream.estimate - r_ref.estimate) < CE_ATOL
    assert r_got.n == r_ref.n == len(m)


def test_ce1_from_1d_stats_and_from_2d_marginal(sample):
    m, v, y = sample
    chunks = [(m[i:i + 5000], v[i:i + 5000], y[i:i + 5000]) for i in range(0, len(m), 5000)]
    ref = socal.ce1(m, y, degree=8, ridge=1e-4, debias=False)
    st1 = SufficientStats(max_degree=8, ndim=1)
    for c in chunks:
        st1.update(c[0], None, c[2])
    assert abs(socal.ce1(st1, chunks=chunks, degree=8, ridge=1e-4, debias=False).estimate - ref.estimate) < CE_ATOL
    # the 2-D statistics carry the 1-D ones (T_0(w) = 1); with a fixed degree the folds do not matter
    st2 = SufficientStats(max_degree=8)
    for c in chunks:
        st2.update(*c)
    assert abs(socal.ce1(st2, chunks=chunks, degree=8, ridge=1e-4, debias=False).estimate - ref.estimate) < CE_ATOL


def test_platt_fit_from_stats_and_partial_fit(sample):
    m, v, y = sample
    ref = socal.SecondOrderPlatt(h=1 / 16, rng=0).fit(m, v, y)
    inc = socal.SecondOrderPlatt(h=1 / 16, rng=0)
    st = SufficientStats(rng=0)
    for c in _random_chunks(m, v, y, np.random.default_rng(5), 4):
        inc.partial_fit(*c)
        st.update(*c)
    from_stats = socal.SecondOrderPlatt(h=1 / 16, rng=0).fit(st)
    for got in (inc, from_stats):
        assert (got.degree_, got.ridge_, got.n_samples_fit_) == (ref.degree_, ref.ridge_, len(m))
        assert _rel(got.map_.beta, ref.map_.beta) < COEF_RTOL
    first = socal.FirstOrderPlatt(ndim=2, degree=6, ridge=1e-3).fit(st)
    direct = socal.FirstOrderPlatt(ndim=2, degree=6, ridge=1e-3).fit(m, v, y)
    assert _rel(first.map_.beta, direct.map_.beta) < COEF_RTOL


def test_partial_fit_after_fit_adds_to_the_rows_fit_read(sample):
    """scikit-learn's habit (StandardScaler): fit starts afresh, a later partial_fit continues from fit's rows.
    fit(A) then partial_fit(B) is partial_fit(A) then partial_fit(B), to rounding, for arrays and for fit(stats);
    the caller's statistics are not changed.  Negative control: the rows of B alone give another map."""
    m, v, y = sample
    a, b = slice(0, 8_000), slice(8_000, None)
    kw = dict(h=1 / 16, rng=0)
    chained = socal.SecondOrderPlatt(**kw).partial_fit(m[a], v[a], y[a]).partial_fit(m[b], v[b], y[b])
    after_fit = socal.SecondOrderPlatt(**kw).fit(m[a], v[a], y[a]).partial_fit(m[b], v[b], y[b])
    st = SufficientStats(rng=0).update(m[a], v[a], y[a])
    before = st.M.copy()
    after_stats = socal.SecondOrderPlatt(**kw).fit(st).partial_fit(m[b], v[b], y[b])
    np.testing.assert_array_equal(st.M, before)  # fit(stats) keeps a copy
    assert st.n == 8_000
    for got in (after_fit, after_stats):
        assert got.n_samples_fit_ == len(m) == got.stats_.n
        assert (got.degree_, got.ridge_) == (chained.degree_, chained.ridge_)
        assert _rel(got.map_.beta, chained.map_.beta) < COEF_RTOL
    assert after_fit.fit_rows_ == chained.fit_rows_  # the fingerprint holds both chunks' rows
    assert after_stats.fit_rows_ is None  # fit(stats) saw no rows to fingerprint
    alone = socal.SecondOrderPlatt(**kw).partial_fit(m[b], v[b], y[b])
    assert alone.n_samples_fit_ == len(m) - 8_000
    assert alone.degree_ != chained.degree_ or _rel(alone.map_.beta, chained.map_.beta) > 1e-3


def test_partial_fit_after_fit_on_few_rows_warns_where_fits_cap_binds(sample):
    """fit on 60 rows keeps statistics up to degree 5 (the cap its rows allow); after partial_fit with the other
    11,940 rows cross-validation chooses that cap, where the same rows from partial_fit alone choose 6: a warning
    says the cap binds.  After fit on 600 rows (cap 20, degree 6 chosen) nothing is said."""
    m, v, y = sample
    few = socal.SecondOrderPlatt(h=1 / 16, rng=0).fit(m[:60], v[:60], y[:60])
    with pytest.warns(UserWarning, match="the largest the statistics kept by fit reach"):
        few.partial_fit(m[60:], v[60:], y[60:])
    chained = socal.SecondOrderPlatt(h=1 / 16, rng=0).partial_fit(m[:60], v[:60], y[:60]).partial_fit(
        m[60:], v[60:], y[60:])
    assert few.degree_ == few.stats_.max_degree < chained.degree_
    more = socal.SecondOrderPlatt(h=1 / 16, rng=0).fit(m[:600], v[:600], y[:600])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        more.partial_fit(m[600:], v[600:], y[600:])
    assert more.degree_ < more.stats_.max_degree


def test_partial_fit_after_load_warns_that_it_starts_afresh(sample):
    """A saved map holds no statistics: partial_fit on a loaded recalibrator refits on its own chunk, and says so."""
    m, v, y = sample
    fitted = socal.FirstOrderPlatt(ndim=2, degree=4, ridge=1e-3).fit(m[:6000], v[:6000], y[:6000])
    loaded = socal.FirstOrderPlatt.from_dict(fitted.to_dict())
    with pytest.warns(UserWarning, match="without the 6000 rows it was fitted on"):
        loaded.partial_fit(m[6000:], v[6000:], y[6000:])
    assert loaded.n_samples_fit_ == len(m) - 6000
    fresh = socal.FirstOrderPlatt(ndim=2, degree=4, ridge=1e-3).partial_fit(m[6000:], v[6000:], y[6000:])
    np.testing.assert_array_equal(loaded.map_.beta, fresh.map_.beta)
    with warnings.catch_warnings():  # a continued fit does not warn
        warnings.simplefilter("error")
        fitted.partial_fit(m[6000:], v[6000:], y[6000:])
    assert fitted.n_samples_fit_ == len(m)


def test_save_load_round_trip_and_schema(tmp_path, sample):
    m, v, y = sample
    st = SufficientStats(max_degree=6, holdout=0.3, rng=8).update(m, v, y)
    path = tmp_path / "s.npz"
    st.save(path)
    back = SufficientStats.load(path)
    assert back._config() == st._config()
    for key in ("M", "Z", "zz", "count"):
        np.testing.assert_array_equal(getattr(back, key), getattr(st, key))
    assert SufficientStats.from_bytes(st.to_bytes())._config() == st._config()
    # negative controls: a cut, a tampered and a foreign file are refused, naming the field
    good = dict(np.load(path))
    for field, bad in (("M", good["M"][:, :-1]), ("count", -good["count"]), ("zz", good["zz"] * np.nan),
                       ("header", np.array("{}")), ("Z", None)):
        d = dict(good)
        if bad is None:
            d.pop(field)
        else:
            d[field] = bad
        buf = io.BytesIO()
        np.savez(buf, **d)
        buf.seek(0)
        with pytest.raises(ValueError, match=f"'{field}'|field '{field}'|header|count"):
            SufficientStats.load(buf)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a SufficientStats file"):
        SufficientStats.load(tmp_path / "junk.npz")


def _saved_with_header(st, **change):
    """``st`` saved with its header's fields changed (a value of None removes the field)."""
    d = dict(np.load(io.BytesIO(st.to_bytes())))
    head = json.loads(str(d["header"]))
    for key, value in change.items():
        if value is None:
            head.pop(key, None)
        else:
            head[key] = value
    d["header"] = np.array(json.dumps(head))
    buf = io.BytesIO()
    np.savez(buf, **d)
    buf.seek(0)
    return buf


def test_statistics_saved_under_the_exact_bit_keys_fit_but_take_no_rows(sample):
    """A file saved before keys rounded their values (no key_bits) loads with a warning and fits as saved; adding
    rows or merging is refused, since its folds were drawn by the former rule."""
    m, v, y = sample
    st = SufficientStats(max_degree=6, rng=8).update(m[:6000], v[:6000], y[:6000])
    fresh = SufficientStats(max_degree=6, rng=8).update(m[6000:], v[6000:], y[6000:])
    assert st.key_bits == socal.rowkeys.KEY_BITS
    with pytest.warns(UserWarning, match="exact bits"):
        old = SufficientStats.load(_saved_with_header(st, key_bits=None))
    assert old.key_bits is None
    for key in ("M", "Z", "zz", "count"):
        np.testing.assert_array_equal(getattr(old, key), getattr(st, key))
    got, ref = socal.calibration_functions(old, h=1 / 16), socal.calibration_functions(st, h=1 / 16)
    assert got.degree == ref.degree and _rel(got.map.beta, ref.map.beta) < COEF_RTOL
    for call in (lambda: old.update(m[6000:], v[6000:], y[6000:]), lambda: old + fresh, lambda: fresh + old):
        with pytest.raises(ValueError, match="another rule than today's"):
            call()
    with pytest.warns(UserWarning, match="key_bits=52"):  # another rule named by its bits
        assert SufficientStats.load(_saved_with_header(st, key_bits=52)).key_bits == 52
    for bad in (53, -1, True, 2.5, "26"):
        with pytest.raises(ValueError, match="field 'key_bits'"):
            SufficientStats.load(_saved_with_header(st, key_bits=bad))
    # pickled before the rule was recorded: marked as a legacy file is
    pickled = pickle.dumps(st)
    state = {k: v for k, v in st.__dict__.items() if k != "key_bits"}
    legacy_obj = object.__new__(SufficientStats)
    with pytest.warns(UserWarning, match="as pickled"):
        legacy_obj.__setstate__(state)
    assert legacy_obj.key_bits is None
    with pytest.raises(ValueError, match="another rule than today's"):
        legacy_obj.update(m[6000:], v[6000:], y[6000:])
    # negative control: today's rule loads and unpickles silently and takes rows and merges
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pickle.loads(pickled).key_bits == socal.rowkeys.KEY_BITS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = SufficientStats.load(_saved_with_header(st))
    assert (back.copy().update(m[6000:], v[6000:], y[6000:])).n == (back + fresh).n == 12_000


def test_one_shot_iterator_is_refused(sample):
    m, v, y = sample
    with pytest.raises(TypeError, match="re-iterable"):
        socal.ce2(chunks=iter([(m, v, y)]), debias=False)
    with pytest.raises(ValueError, match="second pass"):
        socal.ce2(SufficientStats().update(m, v, y), debias=False)


def test_streaming_interval_is_a_working_interval(sample):
    m, v, y = sample
    ref = socal.ce2(m, v, y, h=1 / 16, degree=6, ridge=1e-3, ci=0.9, n_boot=100, rng=1)
    got = socal.ce2(chunks=_random_chunks(m, v, y, np.random.default_rng(1), 5), h=1 / 16, degree=6, ridge=1e-3,
                    ci=0.9, n_boot=100, rng=1)
    w_ref, w_got = ref.ci.high - ref.ci.low, got.ci.high - got.ci.low
    assert 0.5 < w_got / w_ref < 2.0  # the same bootstrap, other random draws per chunk
    assert abs(got.bias - ref.bias) < 0.5 * w_ref


def _write_csv(path, m, v, y, *, bom=False, blank_cells=()):
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8") as fh:
        fh.write("id,mean,var,y1,y2\n")
        for i in range(len(m)):
            y1 = "" if i in blank_cells else str(int(y[i, 0]))
            fh.write(f"{i},{float(m[i])!r},{float(v[i])!r},{y1},{int(y[i, 1])}\n")


def test_csv_and_parquet_chunks_equal_in_memory(tmp_path, sample):
    m, v, y = sample
    ref = socal.calibration_functions(m, v, y, h=1 / 16, rng=0)
    ref_ce = socal.ce2(m, v, y, h=1 / 16, rng=0, debias=False).estimate
    _write_csv(tmp_path / "d.csv", m, v, y, bom=True)
    readers = [CSVChunks(tmp_path / "d.csv", mean="mean", var="var", labels=["y1", "y2"], chunk_rows=2500)]
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"mean": m, "var": v, "y1": y[:, 0], "y2": y[:, 1]}), tmp_path / "d.parquet",
                   row_group_size=3000)
    readers.append(read_chunks(tmp_path / "d.parquet", mean="mean", var="var", labels=["y1", "y2"],
                               chunk_rows=4000))
    assert isinstance(readers[1], ParquetChunks)
    for rd in readers:
        got = socal.calibration_functions(chunks=rd, h=1 / 16, rng=0)
        assert got.degree == ref.degree and _rel(got.map.beta, ref.map.beta) < COEF_RTOL
        assert abs(socal.ce2(chunks=rd, h=1 / 16, rng=0, debias=False).estimate - ref_ce) < CE_ATOL


def test_csv_errors_name_file_line_and_column(tmp_path, sample):
    m, v, y = sample
    p = tmp_path / "bad.csv"
    _write_csv(p, m[:50], v[:50], y[:50])
    text = p.read_text().splitlines()
    cases = {
        "cut": "\n".join(text[:-1] + [text[-1].rsplit(",", 2)[0]]),  # last row cut in the middle
        "word": "\n".join(text[:10] + [text[10].replace(text[10].split(",")[1], "abc")] + text[11:]),
        "blank": "\n".join(text[:5] + [""] + text[5:]),
    }
    for name, body in cases.items():
        p.write_text(body + "\n")
        with pytest.raises(ValueError, match=r"bad\.csv, line \d+"):
            socal.ce2(chunks=CSVChunks(p, mean="mean", var="var", labels=["y1", "y2"]), debias=False)
    p.write_text("mean,var,y1,y1\n0.5,0.1,0,1\n")
    with pytest.raises(ValueError, match="more than once"):
        CSVChunks(p, mean="mean", var="var", labels=["y1"])
    p.write_text("mean,var,y1,y2\n0.5,0.1,0,1\n")
    with pytest.raises(ValueError, match="not found"):
        CSVChunks(p, mean="mean", var="nope", labels=["y1"])
    with pytest.raises(ValueError, match="existing file"):
        CSVChunks(tmp_path, mean="mean", var="var", labels=["y1"])


def test_empty_label_cells_are_missing_votes(tmp_path, sample):
    m, v, y = sample
    n = 3000
    y3 = np.column_stack([y[:n], y[:n, :1]])
    blank = set(range(0, n, 7))
    p = tmp_path / "ragged.csv"
    with open(p, "w") as fh:
        fh.write("mean,var,a,b,c\n")
        for i in range(n):
            c = "" if i in blank else str(int(y3[i, 2]))
            fh.write(f"{float(m[i])!r},{float(v[i])!r},{int(y3[i, 0])},{int(y3[i, 1])},{c}\n")
    pos = y3.sum(1) - np.array([y3[i, 2] if i in blank else 0 for i in range(n)])
    trials = np.where(np.isin(np.arange(n), list(blank)), 2.0, 3.0)
    ref = socal.ce2(m[:n], v[:n], counts=(pos, trials), degree=6, ridge=1e-3, debias=False)
    with pytest.warns(MissingVotesWarning, match=f"{len(blank)} empty label cell"):
        got = socal.ce2(chunks=CSVChunks(p, mean="mean", var="var", labels=["a", "b", "c"], chunk_rows=1000),
                        degree=6, ridge=1e-3, debias=False)
    assert abs(got.estimate - ref.estimate) < CE_ATOL


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=None)
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_arrays_and_dataframe_equal_in_memory(dask_client, sample):
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    m, v, y = sample
    ref = socal.ce2(m, v, y, h=1 / 16, rng=0, debias=False)
    ref_map = socal.calibration_functions(m, v, y, h=1 / 16, rng=0)
    dm, dv = da.from_array(m, chunks=2500), da.from_array(v, chunks=4000)  # misaligned: rechunked to mean's
    dy = da.from_array(y, chunks=(3000, 1))
    got = socal.ce2(dm, dv, dy, h=1 / 16, rng=0, debias=False)
    assert abs(got.estimate - ref.estimate) < CE_ATOL and got.degree == ref.degree
    got_map = socal.calibration_functions(dm, dv, dy, h=1 / 16, rng=0)
    assert _rel(got_map.map.beta, ref_map.map.beta) < COEF_RTOL
    df = dd.from_pandas(pd.DataFrame({"m": m, "v": v, "y1": y[:, 0], "y2": y[:, 1]}), npartitions=5)
    got_df = socal.ce2(df["m"], df["v"], df[["y1", "y2"]], h=1 / 16, rng=0, debias=False)
    assert abs(got_df.estimate - ref.estimate) < CE_ATOL
    got_counts = socal.ce2(df["m"], df["v"], counts=(df["y1"] + df["y2"], df["y1"] * 0 + 2), h=1 / 16, rng=0,
                           debias=False)
    assert abs(got_counts.estimate - ref.estimate) < CE_ATOL
    r1 = socal.ce1(dm, dy, rng=0, debias=False)
    assert abs(r1.estimate - socal.ce1(m, y, rng=0, debias=False).estimate) < CE_ATOL
    bad = da.from_array(np.r_[m[:-1], 1.5], chunks=2500)
    with pytest.raises(ValueError, match="'mean' parameter of ce2 \\(partition 4\\)"):
        socal.ce2(bad, dv, dy, debias=False)


def _replicate(seed_seq):
    rng = np.random.default_rng(seed_seq)
    pop = socal.synthetic.toy_population()
    m, v, y = pop.sample(800, h=1 / 16, rng=rng)
    return socal.ce2(m, v, y, degree=4, ridge=1e-3, rng=rng, debias=False).estimate


def test_replicate_runner_loky_and_dask_identical(dask_client):
    pytest.importorskip("joblib")
    from joblib import parallel_config

    from socal.parallel import run_jobs

    jobs = [(np.random.SeedSequence([7, r]),) for r in range(6)]
    serial = run_jobs(_replicate, jobs, n_jobs=1)
    with parallel_config(backend="loky"):
        loky = run_jobs(_replicate, jobs, n_jobs=2)
    with parallel_config(backend="dask"):
        on_dask = run_jobs(_replicate, jobs, n_jobs=2)
    assert serial == loky == on_dask
    assert len(set(serial)) == len(serial)  # the replicates do differ


def test_reproduce_runners_same_numbers_on_dask(dask_client):
    """`socal reproduce decision --backend dask` computes what the serial run computes (per-repeat seeds)."""
    from joblib import parallel_config

    from socal.experiments.decision import run_decision

    serial = run_decision(repeats=4, n_cal=600, n_eval=800, rng=3)
    with parallel_config(backend="dask"):
        on_dask = run_decision(repeats=4, n_cal=600, n_eval=800, rng=3, n_jobs=2)
    np.testing.assert_array_equal(serial.gain, on_dask.gain)


def test_ill_conditioned_candidate_agrees_within_its_conditioning(sample):
    """At l = 44, alpha = 1e-6 (the worst-conditioned default candidate) the coefficients are determined only to
    about eps / rcond; chunked and in-memory agree within that (measured: 1.6e-10 relative at n = 5e4, rcond 8.5e-9),
    and the fitted values, what every estimate uses, far more closely."""
    from socal.fitting import fit_calibration

    m, v, y = sample
    chunks = _random_chunks(m, v, y, np.random.default_rng(3), 11)
    ref = socal.calibration_functions(m, v, y, degree=44, ridge=1e-6)
    got = socal.calibration_functions(chunks=chunks, degree=44, ridge=1e-6)
    zs = np.column_stack(socal.snapshots.targets(y.sum(1), np.full(len(m), 2.0)))
    rcond = fit_calibration(m, v, zs, degrees=(44,), alphas=(1e-6,), folds=5, holdout=None, rng=None,
                            select=False).factor.rcond
    assert _rel(got.map.beta, ref.map.beta) < 10 * np.finfo(float).eps / rcond
    assert np.abs(got.map.raw(m, v) - ref.map.raw(m, v)).max() < 1e-9


@pytest.mark.parametrize("J", [1, 3, 8, 9])
def test_response_moments_paths_agree(J):
    """Without the NUFFT (small n), a few columns take the product of the axes' tables per column and many the
    tensor-feature product: both equal the direct sum over rows of Z T_p(u) T_q(w), over several row chunks."""
    from socal.chebyshev import cheb_rows
    from socal.sufficient import response_moments

    rng = np.random.default_rng(J)
    n, du, dw = 3000, 7, 4
    u, w, Z = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.random((n, J))
    direct = np.einsum("ij,pi,qi->jpq", Z, cheb_rows(u, du), cheb_rows(w, dw))
    got = response_moments(u, w, Z, du, dw, floats=4096)  # several chunks of rows
    np.testing.assert_allclose(got, direct, rtol=1e-12, atol=1e-9)
    assert not np.allclose(response_moments(u, w, Z[::-1], du, dw), direct)  # control: the weights on other rows


def test_rows_of_one_content_are_spread_over_the_folds_as_separate_items():
    """A constant mean with 3 distinct rows (its label counts): with the census of the whole data ('here', or the
    counts of a FoldCensusPass over chunks) each content's c items go to the 5 folds as c rows of their own would
    (a multinomial; here every fold gets 17-23% of the rows), and the chunks' statistics add up to the array's to
    1e-12.  Negative control: added chunk by chunk without the census (update), each content follows its one hash
    into one fold, so at least two of the 5 folds are empty."""
    from socal.pipeline import FoldCensusPass, StatsPass
    from socal.sources import ChunkSource, check_rows

    n = 6000
    rng = np.random.default_rng(5)
    m, y = np.full(n, 0.3), (rng.random((n, 2)) < 0.5).astype(float)
    template = SufficientStats(max_degree=4, ndim=1, folds=5, responses=1)
    whole = template.empty_like().add_validated(*check_rows("test", 1, m, None, y), repeats="here")
    share = whole.count / n
    assert np.all((share > 0.17) & (share < 0.23)), share
    chunks = [{"mean": m[c], "labels": y[c]} for c in np.array_split(rng.permutation(n), 7)]
    source = ChunkSource(chunks, "test", 1)
    repeats = source.map_reduce(FoldCensusPass(template)).duplicated()
    assert repeats[0].size == 3 and repeats[1].sum() == n
    merged = source.map_reduce(StatsPass(template, repeats))
    for name in ("M", "Z", "zz", "count"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), rtol=1e-12, atol=1e-9)
    plain = SufficientStats(max_degree=4, ndim=1, folds=5, responses=1).update(m, labels=y)
    assert np.sum(plain.count == 0) >= 2, plain.count


def test_a_rounded_predictors_finer_degrees_agree_with_the_truth(monkeypatch):
    """A mean on a 0.1 grid (11 distinct means, labels of rate p ~ Beta(2, 2); CE1 0.0541 exactly, from Beta
    integrals, as benchmarks/duplicates.py computes it): with its rows spread over the folds, every Lepski
    candidate's ridge is cross-validated on held-out items like the training ones, and every candidate's estimate is
    within 0.006 of the truth, the interval covering it (20,000 items, 3 samples).  Negative control: with the folds
    keyed by content alone (each content in one fold), the finer candidates' held-out errors favoured the largest
    ridge and their plug-ins strayed to 0.10-0.15."""
    from scipy import stats

    truth = 0.0  # sum over the means m_j = j / 10 of |E[p 1(cell j)] - m_j P(cell j)|, p in cell j when
    for j in range(11):  # 1.3 p - 0.15 rounds to m_j (clipped at 0 and 1); p Beta(2, 2) = 1/2 Beta(3, 2)
        lo = 0.0 if j == 0 else (j / 10 + 0.1) / 1.3
        hi = 1.0 if j == 10 else (j / 10 + 0.2) / 1.3
        prob = stats.beta.cdf(hi, 2, 2) - stats.beta.cdf(lo, 2, 2)
        truth += abs(0.5 * (stats.beta.cdf(hi, 3, 2) - stats.beta.cdf(lo, 3, 2)) - j / 10 * prob)
    assert abs(truth - 0.0541) < 1e-4
    for seed in range(3):
        rng = np.random.default_rng([20_000, seed])
        p = rng.beta(2, 2, 20_000)
        m, y = np.clip(np.round(p * 1.3 - 0.15, 1), 0, 1), (rng.random((20_000, 2)) < p[:, None]).astype(float)
        res = socal.ce1(m, y, ci=0.9)
        assert all(abs(c.estimate - truth) < 0.006 for c in res.candidates), res.candidates
        assert res.ci.low <= truth <= res.ci.high
    import socal.pipeline as pl

    original = pl.StatsPass.__init__
    monkeypatch.setattr(pl.StatsPass, "__init__", lambda self, template, repeats=None: original(self, template, None))
    grouped = socal.ce1(m, y, ci=0.9)
    assert max(abs(c.plugin - truth) for c in grouped.candidates) > 0.03, grouped.candidates


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


def test_statistics_from_bytes_names_a_wrong_type(small):
    with pytest.raises(TypeError, match="'data' parameter of SufficientStats.from_bytes must be bytes"):
        socal.SufficientStats.from_bytes("not bytes")


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
