"""socal.sources: where the rows come from, and the rule every row passes (issue 61: a test file per module)."""

import numpy as np
import pytest

import socal
from socal.sources import ChunkSource, check_rows, iter_chunks, validate_chunk
import re


@pytest.fixture(scope="module")
def rows():
    m, v, y = socal.synthetic.toy_population().sample(500, h=1 / 16, rng=0)
    return m, v, y


def test_a_chunk_as_mapping_tuple_or_counts_is_the_same_rows(rows):
    m, v, y = rows
    a = validate_chunk({"mean": m, "var": v, "labels": y}, "f", 2)
    b = validate_chunk((m, v, y), "f", 2)
    c = validate_chunk({"mean": m, "var": v, "counts": (y.sum(axis=1), np.full(len(m), 2.0))}, "f", 2)
    for x, z in zip(a, b):
        np.testing.assert_array_equal(x, z)
    np.testing.assert_array_equal(a[2], c[2])
    np.testing.assert_array_equal(a[3], c[3])
    empty = validate_chunk({"mean": m[:0], "var": v[:0], "labels": y[:0]}, "f", 2)
    assert all(x.shape == (0,) for x in empty)


def test_refusals_name_the_chunk_and_the_rule(rows):
    m, v, y = rows
    with pytest.raises(ValueError, match="unknown key\\(s\\) \\['means'\\]"):
        validate_chunk({"means": m, "var": v, "labels": y}, "f", 2)
    with pytest.raises(TypeError, match="the arrays of one chunk where a list of chunks belongs"):
        validate_chunk(m, "f", 2)
    with pytest.raises(TypeError, match="must be re-iterable"):
        list(iter_chunks(iter([{"mean": m, "var": v, "labels": y}]), "f"))
    with pytest.raises(TypeError, match="Got one chunk \\(a mapping"):
        list(iter_chunks({"mean": m, "var": v, "labels": y}, "f"))
    bad = y.copy()
    bad[3, 0] = 2
    with pytest.raises(ValueError, match="f \\(chunk 1\\)") as err:
        list(iter_chunks([{"mean": m, "var": v, "labels": y}, {"mean": m, "var": v, "labels": bad}], "f"))
    assert "labels" in str(err.value)


def test_a_pass_folds_chunks_and_a_failing_chunk_is_named(rows):
    """map_reduce folds the chunks' results with merge; a source that raises at chunk 2 gets a note naming the
    chunk and the rows the pass had read (issue 63)."""
    m, v, y = rows
    parts = [{"mean": m[i:i + 100], "var": v[i:i + 100], "labels": y[i:i + 100]} for i in range(0, 500, 100)]

    class Count:
        def __init__(self, n):
            self.n = n

        def merge(self, other):
            return Count(self.n + other.n)

    total = ChunkSource(parts, "f", 2).map_reduce(lambda i, m, v, a, k: Count(len(m)))
    assert total.n == 500

    def broken():
        yield from parts[:2]
        raise OSError("the disk went away")

    with pytest.raises(OSError) as err:
        ChunkSource(broken, "f", 2).map_reduce(lambda i, m, v, a, k: Count(len(m)))
    assert "f stopped at chunk 2 of its source (200 rows read in this pass before it)" in err.value.__notes__[0]


def test_check_rows_validates_once(rows):
    m, v, y = rows
    out = check_rows("f", 2, m, v, y)
    assert out[0].dtype == np.float64 and out[3].tolist() == [2.0] * len(m)
    with pytest.raises(ValueError, match="'mean' parameter of f"):
        check_rows("f", 2, m + 2, v, y)


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
