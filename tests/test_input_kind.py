"""One function decides what kind of data a public call was given (socal.sources.input_kind, issue 74): the binary
estimators, the binary test and the multiclass test and evaluation refuse the same mixtures with the same words."""

import numpy as np
import pytest

import socal
from socal.sources import KINDS, Rows, input_kind


def test_each_kind_is_told_apart():
    m = np.full(4, 0.5)
    assert input_kind("f", (Rows(m, m, m, m), None, None, None), None) == "validated"
    stats = socal.SufficientStats(ndim=2)
    assert input_kind("f", (stats, None, None, None), None, prebuilt=(socal.SufficientStats,)) == "prebuilt"
    assert input_kind("f", (None, None, None, None), [{}]) == "chunks"
    assert input_kind("f", (m, m, None, (m, m)), None) == "arrays"
    da = pytest.importorskip("dask.array", reason="the dask kind needs dask")
    assert input_kind("f", (m, m, None, (m, da.from_array(m))), None) == "dask"  # a counts pair by its parts
    assert set(KINDS) == {"validated", "prebuilt", "chunks", "dask", "arrays"}


def _calls():
    m, v, _, y = socal.synthetic.toy_population().sample_raw(300, rng=0)
    P, S, Y = socal.synthetic.DirichletEnsemble(C=3).sample(300, rng=0, diagonal=True)
    chunks = [dict(mean=m, var=v, labels=y)]
    return {
        "ce2": lambda **kw: socal.ce2(**{"mean": m, "var": v, "labels": y, **kw}),
        "calibration_test": lambda **kw: socal.calibration_test(**{"mean": m, "var": v, "labels": y, **kw}),
        "multiclass_test": lambda **kw: socal.multiclass.multiclass_test(**{"mean": P, "cov": S, "labels": Y, **kw}),
        "evaluate_multiclass": lambda **kw: socal.multiclass.evaluate_multiclass(**{"mean": P, "cov": S, "labels": Y,
                                                                                   **kw}),
    }, chunks


@pytest.mark.parametrize("name", ["ce2", "calibration_test", "multiclass_test", "evaluate_multiclass"])
def test_every_call_refuses_arrays_with_chunks_and_nothing_at_all_in_the_same_words(name):
    calls, chunks = _calls()
    with pytest.raises(ValueError, match=f"Pass either arrays or 'chunks' to {name}, not both"):
        calls[name](chunks=chunks)
    with pytest.raises(ValueError, match=f"The 'mean' parameter of {name} must be an array"):
        calls[name](mean=None, chunks=None)


def _call_path():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "call_path.py"
    spec = importlib.util.spec_from_file_location("call_path", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_evaluate_validates_its_rows_once_binary_and_multiclass():
    """The multiclass evaluation validated its rows C + 2 times (once as a whole, again in each class's and the top
    label's evaluation); now once, handed on as Rows.  Control: two calls count two."""
    trace = _call_path().trace
    m, v, _, y = socal.synthetic.toy_population().sample_raw(400, rng=0)
    P, S, Y = socal.synthetic.DirichletEnsemble(C=3).sample(300, rng=0, diagonal=True)
    kw = dict(h=1 / 16, n_boot=20, rng=0)
    assert trace(lambda: socal.evaluate(m, v, y, **kw))[2] == 1
    assert trace(lambda: socal.evaluate(P, S, Y, **kw))[2] == 1
    assert trace(lambda: (socal.calibration_test(m, v, y), socal.calibration_test(m, v, y)))[2] == 2


BAD_SETTINGS = [dict(degree="Paper"), dict(degree=[]), dict(degree="paper"), dict(degree=[3, "x"]), dict(degree=4.5),
                dict(degree=True), dict(ci=2.0), dict(ridge=-1.0), dict(search="x"), dict(folds=1), dict(h=0.0),
                dict(n_boot=5, ci=0.9), dict(max_degree=-1)]


@pytest.mark.parametrize("call, bad", [
    pytest.param(call, bad, id=f"{call}-" + ",".join(f"{k}={v!r}" for k, v in bad.items()))
    for call in ("ce2", "ce1", "calibration_functions") for bad in BAD_SETTINGS
    if not (call == "calibration_functions" and ("ci" in bad or "n_boot" in bad))])  # it has no interval
def test_every_setting_is_refused_before_a_chunk_is_read(call, bad):
    """Issue 74: with chunks, a bad degree ("Paper", [], 'paper' without h) was refused only after the statistics
    pass had read every chunk.  Control: valid settings read them."""
    m, v, y = socal.synthetic.toy_population().sample(1200, h=1 / 16, rng=0)
    reads = [0]

    def chunks():
        for i in range(0, 1200, 400):
            reads[0] += 1
            yield dict(mean=m[i:i + 400], var=v[i:i + 400], labels=y[i:i + 400])

    fn = getattr(socal, call)
    with pytest.raises(ValueError, match="parameter of"):
        fn(chunks=chunks, **bad)
    assert reads[0] == 0
    fn(chunks=chunks, degree=3, debias=False) if call != "calibration_functions" else fn(chunks=chunks, degree=3)
    assert reads[0] > 0


def test_hints_follow_the_rule_broken_not_the_messages_text():
    """check_labels adds its hints from the error's kind (socal._validation.InputError), once read from its text."""
    from socal._validation import InputError, check_array, check_labels

    with pytest.raises(InputError) as e:
        check_array(np.zeros((2, 2)), "x", "f")
    assert e.value.kind == "ndim"
    with pytest.raises(InputError) as e:
        check_array([1.0, np.nan], "x", "f")
    assert e.value.kind == "finite"
    with pytest.raises(InputError) as e:
        check_array([2.0], "x", "f", lo=0, hi=1)
    assert e.value.kind is None
    with pytest.raises(ValueError, match="only the first-order error can be measured"):
        check_labels(np.zeros(3), 3, "f")
    with pytest.raises(ValueError, match="missing votes"):
        check_labels(np.array([[0.0, np.nan]] * 3), 3, "f")
    with pytest.raises(ValueError) as e:  # the control: another broken rule gets neither hint
        check_labels(np.full((3, 2), 2.0), 3, "f")
    assert "missing votes" not in str(e.value) and "first-order" not in str(e.value)
