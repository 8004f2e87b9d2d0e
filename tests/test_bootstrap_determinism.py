"""Same data and seed, same numbers: whatever the row order, the chunking, the dask partitions or the backend;
a source that changes its rows between passes is refused."""


import numpy as np
import pytest

import socal
from socal.rowkeys import row_keys
from tests._bootstrap_helpers import _determinism_data, _headline


def test_same_data_same_numbers_in_any_order_chunking_or_partitioning():
    """Issue 24: with rng omitted, ce2 is deterministic, and the rows permuted, in 7 chunks or as dask partitions
    give the identical estimate, interval and bound (to 1e-12); so does ce1."""
    m, v, y = _determinism_data()
    kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
    ref = socal.ce2(m, v, y, **kw)
    again = socal.ce2(m, v, y, **kw)
    assert np.array_equal(_headline(ref), _headline(again))
    perm = np.random.default_rng(7).permutation(m.size)
    permuted = socal.ce2(m[perm], v[perm], y[perm], **kw)
    cuts = np.array_split(np.arange(m.size), 7)
    chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts]
    chunked = socal.ce2(chunks=chunks, **kw)
    for other in (permuted, chunked):
        np.testing.assert_allclose(_headline(other), _headline(ref), rtol=1e-12, atol=1e-14)
        assert other.selection.rule == ref.selection.rule
    da = pytest.importorskip("dask.array", reason="the dask partitions case needs dask")
    on_dask = socal.ce2(da.from_array(m, chunks=700), da.from_array(v, chunks=700),
                        da.from_array(y, chunks=(700, 2)), **kw)
    np.testing.assert_allclose(_headline(on_dask), _headline(ref), rtol=1e-12, atol=1e-14)
    r1 = socal.ce1(m, y, **kw)
    r1p = socal.ce1(m[perm], y[perm], **kw)
    r1c = socal.ce1(chunks=[{"mean": c["mean"], "labels": c["labels"]} for c in chunks], **kw)
    r1d = socal.ce1(da.from_array(m, chunks=700), da.from_array(y, chunks=(700, 2)), **kw)
    for other in (r1p, r1c, r1d):  # CE1's world reads the second-moment pass too: merged over chunks, the same
        np.testing.assert_allclose(_headline(other), _headline(r1), rtol=1e-12, atol=1e-14)


def test_same_numbers_when_the_source_reorders_its_chunks_between_passes():
    """A callable source may give its chunks in another order on each pass (a loader that lists or shuffles files):
    the weights and keys kept between passes were found by the chunk's position alone, so the second pass drew one
    chunk's weights for another's rows (CE2 0.13484 against 0.13476 on 3,000 rows).  They are now checked against
    the chunk's content; the rotated source gives the arrays' numbers (to 1e-12), for ce2 and ce1."""
    m, v, y = _determinism_data()
    cuts = np.array_split(np.arange(m.size), 4)  # four chunks of 750 rows: one size at every position
    chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts]
    passes = []

    def rotating():
        passes.append(None)
        shift = len(passes) % len(chunks)
        return iter(chunks[shift:] + chunks[:shift])

    kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
    ref, got = socal.ce2(m, v, y, **kw), socal.ce2(chunks=rotating, **kw)
    assert len(passes) >= 4
    np.testing.assert_allclose(_headline(got), _headline(ref), rtol=1e-12, atol=1e-14)
    first = [{"mean": c["mean"], "labels": c["labels"]} for c in chunks]
    passes.clear()

    def rotating_1d():
        passes.append(None)
        shift = len(passes) % len(first)
        return iter(first[shift:] + first[:shift])

    np.testing.assert_allclose(_headline(socal.ce1(chunks=rotating_1d, **kw)), _headline(socal.ce1(m, y, **kw)),
                               rtol=1e-12, atol=1e-14)


def test_a_source_that_gives_other_rows_on_another_pass_is_refused():
    """A source whose later passes drop a chunk mixed a census of 3,000 rows with statistics and averages of 2,000
    and returned a number; every pass now reads as many rows as the statistics hold, or a ValueError names the
    counts (also for caller-built SufficientStats without the bootstrap, which has its own check)."""
    from socal.sufficient import SufficientStats

    m, v, y = _determinism_data()
    chunks = [(m[c], v[c], y[c]) for c in np.array_split(np.arange(m.size), 3)]
    passes = []

    def shrinking():
        passes.append(None)
        return iter(chunks if len(passes) == 1 else chunks[:2])

    for debias in (False, True):
        passes.clear()
        with pytest.raises(ValueError, match="gave 2000 rows to the statistics pass and 3000 to the census"):
            socal.ce2(chunks=shrinking, debias=debias)
    passes.clear()
    with pytest.raises(ValueError, match="same rows on every pass"):
        socal.calibration_functions(chunks=shrinking)
    other = SufficientStats(max_degree=4).update(m[:2000], v[:2000], y[:2000])
    with pytest.raises(ValueError, match="hold 2000 rows and 'chunks' gave 3000 to the deviations at degree 4"):
        socal.ce2(other, chunks=chunks, degree=4, debias=False)
    assert socal.ce2(other, chunks=chunks[:2], degree=4, debias=False).n == 2000  # control: the same rows


def test_same_numbers_in_any_order_or_chunking_through_finufft():
    """The same promise where the moments and evaluations are non-uniform FFTs (the 'fast' extra, used at large n;
    forced here): each chunk's transform is the same linear map of its rows, two strength columns share one
    (socal.nufft.weighted_moments), and finufft's threads add in no fixed order, so the chunks' sums agree to
    rounding, not bit for bit."""
    pytest.importorskip("finufft", reason="the finufft backend needs the 'fast' extra")
    previous = socal.set_backend("finufft")
    try:
        m, v, y = _determinism_data()
        kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
        ref = socal.ce2(m, v, y, **kw)
        perm = np.random.default_rng(7).permutation(m.size)
        cuts = np.array_split(np.arange(m.size), 7)
        chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts]
        for other in (socal.ce2(m[perm], v[perm], y[perm], **kw), socal.ce2(chunks=chunks, **kw)):
            np.testing.assert_allclose(_headline(other), _headline(ref), rtol=1e-12, atol=1e-14)
            assert other.selection.rule == ref.selection.rule
        r1 = socal.ce1(m, y, **kw)
        r1c = socal.ce1(chunks=[{"mean": c["mean"], "labels": c["labels"]} for c in chunks], **kw)
        np.testing.assert_allclose(_headline(r1c), _headline(r1), rtol=1e-12, atol=1e-14)
    finally:
        socal.set_backend(previous)


def test_a_seed_changes_the_draws_and_a_row_change_moves_only_that_row():
    """Negative controls: another seed gives other bootstrap numbers (the test above could not pass by ignoring the
    randomness), and the keyed draws follow rows, not positions."""
    m, v, y = _determinism_data()
    kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
    a, b = socal.ce2(m, v, y, rng=1, **kw), socal.ce2(m, v, y, rng=2, **kw)
    assert not np.array_equal(_headline(a), _headline(b))
    keys = row_keys(m, v, y.sum(axis=1), np.full(m.size, 2.0), 0)
    moved = row_keys(np.r_[m[1:], m[:1]], np.r_[v[1:], v[:1]], np.r_[y.sum(1)[1:], y.sum(1)[:1]], np.full(m.size, 2.0),
                     0)
    assert np.array_equal(moved, np.r_[keys[1:], keys[:1]])
