"""socal.sources: where the rows come from, and the rule every row passes (issue 61: a test file per module)."""

import numpy as np
import pytest

import socal
from socal.sources import ChunkSource, check_rows, iter_chunks, validate_chunk


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
