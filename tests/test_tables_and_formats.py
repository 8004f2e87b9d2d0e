"""Results as tables (frame(), _repr_html_), label formats (long and wide tables), members first, polars input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socal
from socal.votes import votes_from_long, votes_from_wide


def _col(frame, name):
    return list(frame[name]) if isinstance(frame, dict) else frame[name].tolist()


def test_multiclass_evaluation_frame_has_a_row_per_class_and_the_top_label():
    from socal.multiclass import evaluate_multiclass

    m, S, y = socal.synthetic.DirichletEnsemble(C=3).sample(2000, rng=1)
    ev = evaluate_multiclass(m, S, y, n_boot=20, h=1 / 16, names=["cat", "dog", "bird"])
    f = ev.frame()
    assert _col(f, "class") == ["cat", "dog", "bird", "top label"]
    assert _col(f, "test_p")[:3] == [e.test.pvalue for e in ev.classes]
    assert _col(f, "ce2")[1] == ev.classes[1].ce2.estimate
    html = ev._repr_html_()
    assert "<table" in html and "bird" in html
    t = ev.test.frame()
    assert _col(t, "part")[:2] == ["trace", "top label"] and _col(t, "adjusted")[2:5] == ev.test.holm.tolist()
    assert _col(f, "adjusted_p")[:3] == ev.test.holm.tolist()


def test_calibration_test_frame_lists_parts_then_regions_with_their_words():
    m, v, c = socal.synthetic.bimodal_twin()
    r = socal.calibration_test(m, v, counts=c)
    f = r.frame()
    assert _col(f, "part")[:3] == ["joint (the verdict)", "means", "variances"]
    assert _col(f, "pvalue")[0] == r.pvalue
    regions = [i for i, k in enumerate(_col(f, "kind")) if k == "region"]
    assert len(regions) == len(r.regions)
    assert _col(f, "direction")[regions[0]] == r.regions[0].direction
    assert _col(f, "factor")[regions[0]] == pytest.approx(r.regions[0].factor)


def test_frame_without_pandas_is_a_dict_of_columns(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *a, **k):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    s = socal.pair_score(np.array([0.2, 0.7]), np.array([0.01, 0.05]), np.array([[0, 1], [1, 1]]))
    f = s.frame()
    assert isinstance(f, dict) and f["n"] == [2]
    assert "<td>log</td>" in s._repr_html_()


def test_evaluate_and_ce_frames():
    m, v, _, y = socal.synthetic.EnsembleLikePopulation(0.01).sample_raw(2000, rng=1)
    e = socal.evaluate(m, v, y, n_boot=20, rng=0)
    f = e.frame()
    assert _col(f, "quantity") == ["test p-value (raw scores)", "CE2 (perturbed)", "CE1 (perturbed)"]
    assert _col(f, "value")[1] == e.ce2.estimate and _col(f, "reference")[2] == e.reference.ce1.value
    assert _col(e.ce2.frame(), "estimate") == [e.ce2.estimate]


def test_long_table_counts_and_refusals():
    item = ["a", "a", "b", "b", "b", "c", "c"]
    worker = [1, 2, 1, 2, 3, 1, 3]
    label = ["cat", "dog", "dog", "dog", None, "cat", "cat"]
    v = votes_from_long(item, label, worker)
    assert v.classes == ("cat", "dog") and v.counts.tolist() == [[1, 1], [0, 2], [2, 0]]
    assert v.report["dropped_empty_labels"] == 1
    with pytest.raises(ValueError, match="annotator 2 labelled item 'a' more than once"):
        votes_from_long(["a", "a"], [0, 1], [2, 2])
    with pytest.raises(ValueError, match="1 item\\(s\\) have no label, e.g. item 'b'"):
        votes_from_long(["a", "a", "b"], [0, 1, None])
    with pytest.raises(ValueError, match="must list every label"):
        votes_from_long(["a", "a"], [0, 2], classes=[0, 1])
    with pytest.raises(ValueError, match="one value per row"):
        votes_from_long(["a"], [0, 1])


def test_wide_table_with_missing_cells_is_the_long_table():
    pd = pytest.importorskip("pandas")
    w = pd.DataFrame({"ann1": [1, None, 0], "ann2": [0, 1, 0], "ann3": [None, 1, 0]}, index=["x", "y", "z"],
                     dtype="Int64")
    v = votes_from_wide(w)
    assert list(v.items) == ["x", "y", "z"] and v.classes == (0, 1)
    assert v.counts.tolist() == [[1, 1], [0, 2], [3, 0]]
    pos, k = v.binarise(1)
    assert pos.tolist() == [1, 2, 0] and k.tolist() == [2, 2, 3]
    with pytest.raises(ValueError, match="row 0 \\(item 0\\) has no label in any column"):
        votes_from_wide(np.array([[np.nan, np.nan], [1, 0]]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), J=st.integers(2, 6), C=st.integers(2, 5))
def test_wide_and_long_and_row_order_agree(seed, n, J, C):
    """The same votes as a wide table, as its long table in any row order: the same counts per item."""
    g = np.random.default_rng(seed)
    w = g.integers(0, C, (n, J)).astype(float)
    w[g.random((n, J)) < 0.3] = np.nan
    w[:, 0] = g.integers(0, C, n)  # every item keeps a label
    v = votes_from_wide(w, classes=list(range(C)))
    rows = [(i, j, w[i, j]) for i in range(n) for j in range(J) if not np.isnan(w[i, j])]
    perm = g.permutation(len(rows))
    it, an, lab = zip(*[rows[p] for p in perm])
    u = votes_from_long(np.array(it), np.array(lab), np.array(an), classes=list(range(C)), items=list(range(n)))
    assert np.array_equal(u.counts, v.counts)
    assert np.array_equal(v.counts.sum(axis=1), (~np.isnan(w)).sum(axis=1))


def test_members_first_gives_the_same_scores():
    g = np.random.default_rng(0)
    P = g.dirichlet([1, 1, 1], (40, 4))
    a, b = socal.from_members(P), socal.from_members(np.swapaxes(P, 0, 1), member_axis=0)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    p = g.uniform(size=(40, 3))
    assert np.array_equal(socal.from_members(p)[1], socal.from_members(p.T, member_axis=0)[1])
    with pytest.raises(ValueError, match="'member_axis' parameter"):
        socal.from_members(p, member_axis=2)


def test_polars_input_is_read_as_the_arrays():
    pl = pytest.importorskip("polars")
    g = np.random.default_rng(0)
    n = 400
    m = g.uniform(0.1, 0.9, n)
    v = 0.1 * m * (1 - m)
    y = g.binomial(1, m[:, None], (n, 2))
    df = pl.DataFrame({"m": m, "v": v, "y1": y[:, 0], "y2": y[:, 1]})
    assert socal.calibration_test(df["m"], df["v"], df.select(["y1", "y2"])).pvalue == \
        socal.calibration_test(m, v, y).pvalue
    assert socal.pair_score(df["m"], df["v"], df.select(["y1", "y2"])).score == socal.pair_score(m, v, y).score
    with pytest.raises(ValueError, match="array of real numbers"):
        socal.calibration_test(pl.Series(["a"] * n), df["v"], y)
    with pytest.raises(ValueError, match="must be finite"):
        socal.calibration_test(pl.Series(list(m[:-1]) + [None]), df["v"], y)
