"""Properties over generated inputs (hypothesis): every call either raises a ValueError/TypeError that names the
argument, or returns a finite result that satisfies the estimators' invariances.

Inputs are drawn inside each domain, at its edges, just outside (beyond the round-off tolerance) and far outside,
in several dtypes and shapes.  Sizes stay small (n <= 300, degree <= 6) so each example runs in milliseconds.
"""

import math
import re

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import socal  # noqa: E402
from socal._validation import edge_tolerance  # noqa: E402
from socal.deviations import CE_RANGE  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)
NAMED = re.compile(r"'(mean|var|labels|counts\[[01]\] \(positives\)|counts\[[01]\] \(trials\)|counts|degree|ridge|h|"
                   r"folds|holdout|max_degree|ci|upper|debias|n_boot|rng)'")

# a value just outside [lo, hi]: beyond the edge tolerance (1e-9 for float64), so it must be refused
EDGE_VALUES = [0.0, 1.0, 1 + 1e-12, -1e-17, 1 + 1e-6, -1e-6, 2.0, -3.0, np.nan, np.inf, -np.inf]


def scores(n, *, outside=False):
    """(mean, var) arrays of length n, optionally with a few entries at or beyond the edges."""
    mean = hnp.arrays(np.float64, n, elements=st.floats(0.0, 1.0))
    var = hnp.arrays(np.float64, n, elements=st.floats(0.0, 0.25))
    if not outside:
        return st.tuples(mean, var)
    edge = st.sampled_from(EDGE_VALUES)
    return st.tuples(mean, var, st.lists(st.tuples(st.integers(0, n - 1), edge, st.booleans()), max_size=3))


def _calls_ok(fn):
    """Run fn(); a ValueError/TypeError must name an argument, a result must be finite and in the functional's range
    (socal.deviations.CE_RANGE: [0, 1] for CE1, [0, 9/4] for CE2)."""
    try:
        res = fn()
    except (ValueError, TypeError) as exc:
        named = NAMED.search(str(exc))
        assert named, f"error does not name its argument: {exc}"
        event(f"refused, naming {named.group(0)}")
        return None
    event("answered")
    top = CE_RANGE[2 if res.kind == "ce2" else 1]
    assert math.isfinite(res.estimate) and 0.0 <= res.estimate <= top
    assert math.isfinite(res.mean_term) and math.isfinite(res.moment_term) and res.plugin <= top
    return res


@SETTINGS
@given(data=st.data(), n=st.integers(10, 120), k=st.integers(1, 4))
def test_ce2_domains(data, n, k):
    m, v, edits = data.draw(scores(n, outside=True))
    for i, val, which in edits:
        (m if which else v)[i] = val
    y = data.draw(hnp.arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0]),
                             fill=st.sampled_from([0.0, 1.0])))
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64]))
    m_in = m.astype(dtype) if dtype is not np.int64 else np.round(np.nan_to_num(m, nan=0.5, posinf=1, neginf=0)).astype(np.int64)
    kw = data.draw(st.fixed_dictionaries({"degree": st.sampled_from([None, 0, 2, 4, [2, 3], "paper", -1, 300]),
                                          "ridge": st.sampled_from([None, 1e-3, 0.0, [1e-4, 1e-2], -1.0, np.nan]),
                                          "h": st.sampled_from([None, 1 / 16, 1 / 64, 0.0, 1e-17, 1e200])}))
    res = _calls_ok(lambda: socal.ce2(m_in, v, y, rng=0, **kw, debias=False))
    if res is not None:  # an answer only for valid input (up to the documented round-off at the edges)
        tm, tv = edge_tolerance(m_in.dtype), edge_tolerance(v.dtype)
        mf = m_in.astype(np.float64)
        assert k >= 2 and np.all(np.isin(y, [0.0, 1.0]))
        assert np.all(np.isfinite(mf)) and np.all(np.isfinite(v))
        assert np.all((mf >= -tm) & (mf <= 1 + tm)) and np.all((v >= -tv) & (v <= 0.25 + tv))


@SETTINGS
@given(data=st.data(), n=st.integers(10, 120))
def test_counts_domains(data, n):
    m, v = data.draw(scores(n))
    k = data.draw(hnp.arrays(np.float64, n, elements=st.sampled_from([2.0, 3.0, 10.0, 1.0, 0.0, 2.5, 4e9, 1e17])))
    a = np.floor(k * m)
    a[data.draw(st.integers(0, n - 1))] += data.draw(st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5]))
    res = _calls_ok(lambda: socal.ce2(m, v, counts=(a, k), degree=2, ridge=1e-3, debias=False))
    if res is not None:
        assert np.all(k >= 2) and np.all((a >= 0) & (a <= k)) and np.all(a == np.round(a)) and np.all(k <= 2**53)


@SETTINGS
@given(data=st.data(), n=st.integers(30, 200), k=st.integers(2, 5), select=st.booleans())
def test_row_shuffle_invariance(data, n, k, select):
    """Rows in another order give the same estimate: at a fixed degree and ridge, and with cross-validation too
    (folds hash each row's content, so they move with the rows)."""
    m, v = data.draw(scores(n))
    f = np.clip(m + data.draw(st.floats(-0.3, 0.3)) * (v - 0.125), 0, 1)
    y = (np.random.default_rng(data.draw(st.integers(0, 99))).random((n, k)) < f[:, None]).astype(float)
    perm = np.random.default_rng(1).permutation(n)
    kw = dict(degree=[1, 3], ridge=[1e-3, 1e-1]) if select else dict(degree=3, ridge=1e-2)
    a = socal.ce2(m, v, y, rng=5, **kw, debias=False)
    b = socal.ce2(m[perm], v[perm], y[perm], rng=5, **kw, debias=False)
    assert (a.degree, a.ridge) == (b.degree, b.ridge)
    assert abs(a.estimate - b.estimate) < 1e-9


@SETTINGS
@given(data=st.data(), n=st.integers(30, 200), k=st.integers(2, 5))
def test_label_column_permutation_invariance(data, n, k):
    m, v = data.draw(scores(n))
    y = data.draw(hnp.arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 1.0])))
    cols = np.random.default_rng(data.draw(st.integers(0, 99))).permutation(k)
    a = socal.ce2(m, v, y, rng=2, debias=False)
    # the targets depend on the counts only: the same rows, same folds
    b = socal.ce2(m, v, y[:, cols], rng=2, debias=False)
    assert abs(a.estimate - b.estimate) < 1e-12 and a.degree == b.degree


@SETTINGS
@given(data=st.data(), n=st.integers(30, 200), k=st.integers(1, 4), degree=st.integers(0, 6))
def test_ce1_flip_symmetry(data, n, k, degree):
    """CE1(1 - m, 1 - y) = CE1(m, y): the unpenalised constant makes the fit equivariant under the flip."""
    m = data.draw(hnp.arrays(np.float64, n, elements=st.floats(0.0, 1.0)))
    y = data.draw(hnp.arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 1.0])))
    assume((degree + 1) <= n)
    a = socal.ce1(m, y, degree=degree, ridge=1e-3, debias=False)
    b = socal.ce1(1.0 - m, 1.0 - y, degree=degree, ridge=1e-3, debias=False)
    assert abs(a.estimate - b.estimate) < 1e-9


@SETTINGS
@given(data=st.data(), n=st.integers(20, 150), pieces=st.integers(1, 6))
def test_any_chunking_same_statistics(data, n, pieces):
    m, v = data.draw(scores(n))
    y = data.draw(hnp.arrays(np.float64, (n, 2), elements=st.sampled_from([0.0, 1.0])))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=pieces))))
    bounds = [0, *cuts, n]
    whole = socal.SufficientStats(max_degree=5, rng=3).update(m, v, y)
    parts = [socal.SufficientStats(max_degree=5, rng=3).update(m[a:b], v[a:b], y[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged + p
    np.testing.assert_array_equal(merged.count, whole.count)
    np.testing.assert_allclose(merged.M, whole.M, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(merged.Z, whole.Z, rtol=1e-12, atol=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data(), n=st.integers(40, 150), ndim=st.sampled_from([1, 2]))
def test_partial_fit_after_fit_continues_from_fits_rows(data, n, ndim):
    """fit(A) then partial_fit(B) fits the rows of A and B together, as partial_fit(A) then partial_fit(B) does
    (scikit-learn's incremental habit), wherever A ends; at a fixed degree and ridge the maps agree to rounding."""
    m, v = data.draw(scores(n))
    y = data.draw(hnp.arrays(np.float64, (n, 2), elements=st.sampled_from([0.0, 1.0])))
    cut = data.draw(st.integers(20, n - 1))
    vv = v if ndim == 2 else None
    make = (lambda: socal.SecondOrderPlatt(ndim=ndim, degree=2, ridge=1e-3, rng=1))
    both = make().fit(m[:cut], None if vv is None else vv[:cut], y[:cut]).partial_fit(
        m[cut:], None if vv is None else vv[cut:], y[cut:])
    chain = make().partial_fit(m[:cut], None if vv is None else vv[:cut], y[:cut]).partial_fit(
        m[cut:], None if vv is None else vv[cut:], y[cut:])
    assert both.n_samples_fit_ == chain.n_samples_fit_ == n
    assert both.fit_rows_ == chain.fit_rows_
    np.testing.assert_allclose(both.map_.beta, chain.map_.beta, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(kw=st.fixed_dictionaries({"max_degree": st.one_of(st.integers(-5, 300), st.floats(), st.text(max_size=3)),
                                 "folds": st.one_of(st.integers(-3, 200), st.none()),
                                 "holdout": st.one_of(st.none(), st.floats(-1, 2)),
                                 "ndim": st.sampled_from([0, 1, 2, 3, True])}))
def test_sufficient_stats_parameters(kw):
    try:
        stt = socal.SufficientStats(**kw)
    except (ValueError, TypeError) as exc:
        assert re.search(r"'(max_degree|folds|holdout|ndim)'", str(exc)), str(exc)
        return
    assert 0 <= stt.max_degree <= 200 and stt.ndim in (1, 2) and stt.n == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data(), n=st.integers(20, 200), k=st.integers(2, 4))
def test_interval_and_bound_hold_the_estimate(data, n, k):
    """ci and upper at, beyond and far beyond their edges: refused naming the argument, or an interval and a bound
    that are finite, >= 0 and hold the (bias-corrected) estimate."""
    m, v = data.draw(scores(n))
    y = data.draw(hnp.arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 1.0])))
    level = data.draw(st.sampled_from([0.5, 0.9, 0.99, 1e-300, 1 - 1e-16, 0.0, 1.0, -0.1, 2.0, np.nan, np.inf]))
    upper = data.draw(st.sampled_from([0.95, 0.5, 0.999, 1 - 1e-16, 0.0, 1.0, 7.0, np.nan, None]))
    h = data.draw(st.sampled_from([None, 1 / 16, 1 / 64]))
    res = _calls_ok(lambda: socal.ce2(m, v, y, h=h, ci=level, upper=upper, n_boot=20, rng=1))
    if res is None:
        return
    assert 0.0 < level < 1.0 and (upper is None or 0.0 < upper < 1.0)
    lo, hi = res.ci
    assert math.isfinite(lo) and math.isfinite(hi) and 0.0 <= lo <= res.estimate <= hi
    assert res.plugin == pytest.approx(res.mean_term + res.moment_term)
    if upper is not None:
        assert math.isfinite(res.upper.value) and res.estimate <= res.upper.value


@SETTINGS
@given(data=st.data(), n=st.integers(0, 60), distinct=st.integers(1, 8))
def test_distinct_keys_are_a_function_of_the_rows_as_a_multiset(data, n, distinct):
    """socal.rowkeys.distinct_keys: rows of a key of their own keep it; the rows that share a key get pairwise
    different keys; and any permutation of the input permutes the output's multiset into itself (sorted outputs
    equal).  (Keys without the occurrence stream, the identity map, fail the second property whenever a key
    repeats: the strategy draws n keys from at most 8 values.)"""
    from socal.rowkeys import distinct_keys

    keys = np.asarray(data.draw(st.lists(st.integers(0, distinct - 1), min_size=n, max_size=n)), dtype=np.uint64)
    perm = np.asarray(data.draw(st.permutations(range(n))), dtype=np.intp)
    out = distinct_keys(keys)
    values, counts = np.unique(keys, return_counts=True)
    single = np.isin(keys, values[counts == 1])
    assert np.array_equal(out[single], keys[single])
    assert np.unique(out).size == n
    assert np.array_equal(np.sort(distinct_keys(keys[perm])), np.sort(out))


@SETTINGS
@given(data=st.data(), n=st.integers(1, 60), atoms=st.integers(1, 6))
def test_perturbation_is_a_function_of_the_rows_as_a_multiset(data, n, atoms):
    """socal.perturb keyed by the scores and the labels: any permutation of the rows permutes the perturbed scores
    with them (the multisets of (score, labels, perturbed score) rows are equal), on scores drawn from a few atoms
    (ties), edges included (mean 0 or 1, var 0 or mean (1 - mean)), and the draws stay in the rectangle R."""
    means = data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), min_size=atoms, max_size=atoms))
    fracs = data.draw(st.lists(st.sampled_from([0.0, 0.3, 1.0]), min_size=atoms, max_size=atoms))
    pick = np.asarray(data.draw(st.lists(st.integers(0, atoms - 1), min_size=n, max_size=n)))
    m = np.asarray(means)[pick]
    v = (np.asarray(fracs) * np.asarray(means) * (1 - np.asarray(means)))[pick]
    y = np.asarray(data.draw(st.lists(st.sampled_from([(0, 0), (0, 1), (1, 1)]), min_size=n, max_size=n)), float)
    perm = np.asarray(data.draw(st.permutations(range(n))), dtype=np.intp)
    seed = data.draw(st.integers(0, 2**32))
    a = socal.perturb(m, v, h=1 / 16, rng=seed, key=y)
    b = socal.perturb(m[perm], v[perm], h=1 / 16, rng=seed, key=y[perm])

    def rows(*cols):
        x = np.column_stack(cols)
        return x[np.lexsort(x.T[::-1])]

    assert np.array_equal(rows(m, v, y, *a), rows(m[perm], v[perm], y[perm], *b))
    assert np.all((a[0] >= 0) & (a[0] <= 1) & (a[1] >= 0) & (a[1] <= 0.25))


@SETTINGS
@given(values=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60), repeats=st.integers(1, 40),
       size=st.integers(1, 70))
def test_the_fingerprint_sketch_is_the_smallest_distinct_keys(values, repeats, size):
    """The bottom-k sketch (a partition, widened while repeats crowd the smallest keys) equals the definition, the
    ``size`` smallest distinct keys, whatever the repeats."""
    from socal.rowkeys import _bottom

    keys = np.repeat(np.array(values, dtype=np.uint64), repeats)
    np.random.default_rng(0).shuffle(keys)
    assert _bottom(keys, size) == tuple(int(x) for x in np.unique(keys)[:size])


@SETTINGS
@given(ids=st.lists(st.text(st.characters(blacklist_characters="\x00"), max_size=12), min_size=1, max_size=40,
                    unique=True), data=st.data())
def test_string_item_ids_key_the_perturbation_by_their_text(ids, data):
    """Item ids as ``key`` (any unicode text, the empty string included): the draws follow the ids in any order,
    list, str array and object array give the same draws, and rows of equal scores get draws of their own.  (A
    trailing NUL character is dropped, as numpy's string arrays drop it.)"""
    n = len(ids)
    m, v = np.full(n, 0.3), np.full(n, 0.01)  # equal scores: the ids alone tell the rows apart
    perm = np.asarray(data.draw(st.permutations(range(n))), dtype=np.intp)
    arr = np.array(ids, dtype=str)
    a = socal.perturb(m, v, h=1 / 16, rng=4, key=arr)
    b = socal.perturb(m, v, h=1 / 16, rng=4, key=arr[perm])
    assert np.array_equal(a[0][perm], b[0]) and np.array_equal(a[1][perm], b[1])
    for other in (list(ids), arr.astype(object)):
        c = socal.perturb(m, v, h=1 / 16, rng=4, key=other)
        assert np.array_equal(a[0], c[0])
    assert np.unique(a[0]).size == n


@SETTINGS
@given(data=st.data(), n=st.integers(1, 2300), newline=st.sampled_from(["\n", "\r\n"]),
       trailing=st.integers(0, 3), hole=st.booleans())
def test_a_csv_file_reads_back_as_written_or_names_its_line(tmp_path_factory, data, n, newline, trailing, hole):
    """Any table of scores and 0/1/empty labels, with either line ending and 0-3 empty lines at its end, reads back
    as written in chunks of 1,000 rows (empty label cells as missing votes); an empty line with data after it is
    refused with its line number."""
    from socal.io import read_all, read_chunks

    m = data.draw(hnp.arrays(np.float64, n, elements=st.floats(0.0, 1.0)))
    v = data.draw(hnp.arrays(np.float64, n, elements=st.floats(0.0, 0.25)))
    y = data.draw(hnp.arrays(np.int8, (n, 3), elements=st.sampled_from([0, 1, -1])))  # -1: an empty cell
    rows = [f"{float(a)!r},{float(b)!r}," + ",".join("" if c < 0 else str(c) for c in r) for a, b, r in zip(m, v, y)]
    gap = data.draw(st.integers(1, n)) if hole and n > 1 else None  # an empty line before data row `gap` + 1
    if gap is not None and gap < n:
        rows = rows[:gap] + [""] + rows[gap:]
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes((newline.join(["m,v,y1,y2,y3"] + rows) + newline * (1 + trailing)).encode())
    reader = read_chunks(path, mean="m", var="v", labels=["y1", "y2", "y3"], chunk_rows=1000)
    if gap is not None and gap < n:
        with pytest.raises(ValueError, match=f"line {gap + 2}: an empty line inside the data"):
            read_all(reader)
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_m, got_v, labels, counts = read_all(reader)
    assert np.array_equal(got_m, m) and np.array_equal(got_v, v)
    if counts is None:
        assert np.array_equal(labels, y)
    else:
        assert np.array_equal(counts[0], np.where(y < 0, 0, y).sum(axis=1))
        assert np.array_equal(counts[1], (y >= 0).sum(axis=1))
