"""socal.simplex: the multiclass recalibrators (issue 69): valid output by construction, never a probability 0,
the trace fitted where the truth is known, the anchor, the class-wise maps kept for comparison, and files a
hostile user can hand them."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socal
from socal.multiclass import evaluate_multiclass, multiclass_test
from socal.simplex import (ClasswisePlatt, MulticlassPlatt, TemperatureScaling, _cov, evaluate_recalibrated_multiclass,
                           log_loss, pair_spread, project_simplex_covariance, trace_by_thirds)
from socal.synthetic import DirichletEnsemble


@pytest.fixture(scope="module")
def tempered():
    """A 4-class ensemble whose truth is sharper than its means (T = 1.5) and whose covariance is 0.3x the truth's
    spread: both steps of the map have work to do.  5 votes per item; halves for fit and check."""
    pop = DirichletEnsemble(C=4, kind="tempered", temperature=1.5)
    m, S, A = pop.sample(8000, k=5, counts=True, rng=3)
    return m, 0.3 * S, A


def _valid(m2, S2):
    assert np.all(m2 > 0) and np.abs(m2.sum(axis=1) - 1).max() < 1e-12
    assert np.abs(S2.sum(axis=2)).max() < 1e-12
    assert np.linalg.eigvalsh(S2).min() > -1e-12
    pair = m2[:, :, None] * m2[:, None, :] + S2
    assert pair.min() > 0  # every pair law, the diagonal included
    assert np.all(np.diagonal(S2, axis1=1, axis2=2) <= m2 * (1 - m2) + 1e-15)


@pytest.mark.parametrize("cls", [MulticlassPlatt, TemperatureScaling])
def test_the_output_is_a_positive_probability_vector_and_a_valid_covariance(tempered, cls):
    m, S, A = tempered
    fit = cls().fit(m[:4000], S[:4000], counts=A[:4000])
    m2, S2 = fit.transform(m[4000:], S[4000:])
    _valid(m2, S2)
    m3, v3 = fit.transform(m[4000:], S[4000:], diagonal=True)
    assert np.array_equal(m3, m2) and np.allclose(v3, np.diagonal(S2, axis1=1, axis2=2), rtol=1e-12, atol=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-9, 1.0), min_size=3, max_size=7), st.data())
def test_the_covariance_rule_is_valid_for_any_weights_and_scale(raw, data):
    """The family k sum_{c<d} m_c m_d g_c g_d (e_c - e_d)(e_c - e_d)^T of :func:`_cov`, for any weights in the fit's
    range and any scale S in [0, 1], is PSD, rows summing to 0, every pair law > 0, each variance <= m (1 - m), and
    its trace is S (1 - |m|^2) wherever the pair-law cap does not bind."""
    m = np.array([raw]) / np.sum(raw)
    C = m.shape[1]
    g = np.array(data.draw(st.lists(st.floats(np.exp(-5), np.exp(5)), min_size=C, max_size=C)))
    S = np.array([data.draw(st.floats(0.0, 1.0 - 1e-6))])
    cov = _cov(m, g, S, diagonal=False)
    assert np.abs(cov.sum(axis=2)).max() < 1e-12 * max(1.0, np.abs(cov).max())
    assert np.linalg.eigvalsh(cov[0]).min() > -1e-12
    pair = m[0][:, None] * m[0][None, :] + cov[0]
    assert pair.min() >= -1e-15
    assert np.all(np.diagonal(cov[0]) <= m[0] * (1 - m[0]) + 1e-12)
    assert np.allclose(_cov(m, g, S, diagonal=True)[0], np.diagonal(cov[0]), rtol=1e-12, atol=1e-300)
    mg = m[0] * g
    T = np.outer(mg, mg)[~np.eye(C, dtype=bool)].sum()  # sum over c != d of positive terms: no cancellation
    top = np.sort(g)[-2:]
    D = (m[0] * (1 - m[0])).sum()  # 1 - |m|^2, summed without cancellation near a vertex
    if T > 0 and S[0] * D / T <= (1 - 1e-6) / (top[0] * top[1]):
        assert np.isclose(np.trace(cov[0]), S[0] * D, rtol=1e-9, atol=1e-300)


def test_the_family_without_its_cap_breaks_the_pair_law():
    """Negative control of the cap: the same family at k = 2 / (g_(1) g_(2)) (what the trace would ask for here,
    uncapped) has a negative pair law; _cov caps it."""
    m = np.array([0.5, 0.3, 0.2])
    g = np.array([1.0, 2.0, 0.5])
    mg = m * g
    k = 2.0 / 2.0
    uncapped = k * (np.diag(mg * mg.sum()) - np.outer(mg, mg))
    assert (np.outer(m, m) + uncapped).min() < 0
    capped = _cov(m[None], g, np.array([0.999]), diagonal=False)[0]
    assert (np.outer(m, m) + capped).min() > 0


def test_the_recalibrated_predictor_is_calibrated_where_the_truth_is_known(tempered):
    """On held-out items: the raw predictor rejected, the recalibrated not; the trace within x1.5 overall and x2 in
    each third of tr Sigma'; the log loss per vote lower; the anchor's temperature above 1 (the truth is the
    members' softened by T = 1.5) and its trace within x1.5."""
    m, S, A = tempered
    before = multiclass_test(m[4000:], S[4000:], counts=A[4000:], rng=0)
    assert before.pvalue < 1e-4
    fit = MulticlassPlatt().fit(m[:4000], S[:4000], counts=A[:4000])
    ev = evaluate_recalibrated_multiclass(fit, m[4000:], S[4000:], counts=A[4000:], rng=0)
    assert ev.verdict == "not rejected", ev.summary()
    assert 1 / 1.5 < ev.trace.factor < 1.5 and all(0.5 < x < 2 for x in ev.trace_thirds)
    assert ev.log_loss_after < ev.log_loss_before
    anchor = TemperatureScaling().fit(m[:4000], S[:4000], counts=A[:4000])
    assert anchor.temperature_ > 1.2  # the truth is flatter than the means (T = 1.5): the means are softened
    ratio, _ = trace_by_thirds(*anchor.transform(m[4000:], S[4000:], diagonal=True), A[4000:])
    assert 1 / 1.5 < ratio < 1.5


def test_a_tampered_map_is_rejected(tempered):
    """Negative control: the fitted map with its covariance scale raised (theta_0 + 2) is rejected on the same
    held-out items, by its trace part."""
    m, S, A = tempered
    fit = MulticlassPlatt().fit(m[:4000], S[:4000], counts=A[:4000])
    fit.theta_ = fit.theta_ + np.array([2.0, 0.0])
    ev = evaluate_recalibrated_multiclass(fit, m[4000:], S[4000:], counts=A[4000:], rng=0)
    assert ev.verdict == "rejected" and ev.test.trace_adjusted < 1e-6 and ev.trace.factor < 1 / 1.5


def test_a_calibrated_predictor_stays_calibrated_and_its_log_loss_barely_moves():
    m, S, A = DirichletEnsemble(C=3).sample(6000, k=4, counts=True, rng=5)
    fit = MulticlassPlatt().fit(m[:3000], S[:3000], counts=A[:3000])
    ev = evaluate_recalibrated_multiclass(fit, m[3000:], S[3000:], counts=A[3000:], rng=0)
    assert ev.verdict == "not rejected"
    assert ev.log_loss_after < ev.log_loss_before + 2e-3


def test_a_class_the_members_give_zero_keeps_a_probability():
    """Members that give a class exactly 0 where the crowd votes for it: the map's floor keeps it > 0, the log
    loss finite (the class-wise maps' projection kept such zeros: issue 69's 329 items)."""
    rng = np.random.default_rng(0)
    n = 3000
    probs = rng.dirichlet([5, 3, 1], size=(n, 4))
    probs[:, :, 2] = 0.0
    probs /= probs.sum(axis=2, keepdims=True)
    truth = np.column_stack([np.full(n, 0.6), np.full(n, 0.35), np.full(n, 0.05)])
    A = np.stack([rng.multinomial(5, f) for f in truth]).astype(float)
    m, cov = socal.from_members(probs)
    assert np.isinf(log_loss(m, counts=A))
    fit = MulticlassPlatt().fit(m[:1500], cov[:1500], counts=A[:1500])
    m2, S2 = fit.transform(m[1500:], cov[1500:])
    _valid(m2, S2)
    assert np.isfinite(log_loss(m2, counts=A[1500:])) and m2[:, 2].min() > 0.01


def test_pair_spread_is_the_votes_unbiased_distance():
    """E pair_spread = |f* - m|^2 (every pair of votes), checked by simulation against the exact value."""
    rng = np.random.default_rng(1)
    f = np.array([0.5, 0.3, 0.2])
    m = np.array([0.4, 0.4, 0.2])
    A = rng.multinomial(4, f, size=200_000).astype(float)
    est = pair_spread(np.broadcast_to(m, A.shape), A).mean()
    assert abs(est - ((f - m) ** 2).sum()) < 4 * pair_spread(np.broadcast_to(m, A.shape), A).std() / np.sqrt(2e5)


def test_save_and_load_give_bit_identical_output(tempered, tmp_path):
    m, S, A = tempered
    for cls in (MulticlassPlatt, TemperatureScaling):
        fit = cls().fit(m[:4000], S[:4000], counts=A[:4000])
        fit.save(tmp_path / "map.json")
        again = cls.load(tmp_path / "map.json")
        for x, y in zip(fit.transform(m[4000:], S[4000:]), again.transform(m[4000:], S[4000:])):
            assert np.array_equal(x, y)


@pytest.fixture(scope="module")
def saved(tempered, tmp_path_factory):
    m, S, A = tempered
    path = tmp_path_factory.mktemp("saved") / "map.json"
    MulticlassPlatt().fit(m[:2000], S[:2000], counts=A[:2000]).save(path)
    return path


@pytest.mark.parametrize("edit, match", [
    (lambda t: t[: len(t) // 2], "not JSON"),
    (lambda t: t.replace('"version": 2', '"version": 99'), "version"),
    (lambda t: t.replace('"class": "MulticlassPlatt"', '"class": "TemperatureScaling"'), "class"),
    (lambda t: t.replace('"format": "socal.multiclass-recalibrator"', '"format": "x"'), "format"),
    (lambda t: t.replace('"eps": ', '"eps": 7, "x": '), "eps"),
    (lambda t: t.replace('"degree": 1', '"degree": 0'), "degree"),
    (lambda t: t.replace('"n_classes": 4', '"n_classes": 5'), "'beta'"),
])
def test_a_hostile_file_is_refused_with_socal_s_message(saved, tmp_path, edit, match):
    text = saved.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(edit(text))
    assert bad.read_text() != text  # the edit took
    with pytest.raises(ValueError, match=match):
        MulticlassPlatt.load(bad)


def test_a_binary_file_and_a_missing_one_are_refused(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(range(256)))
    for path in (bad, tmp_path / "absent.json"):
        with pytest.raises(ValueError, match="cannot be read"):
            MulticlassPlatt.load(path)
        with pytest.raises(ValueError, match="cannot be read"):
            ClasswisePlatt.load(path)


def test_a_nan_in_a_saved_field_is_refused(saved, tmp_path):
    d = json.loads(saved.read_text())
    d["theta"][0] = float("nan")
    with pytest.raises(ValueError, match="theta"):
        MulticlassPlatt.from_dict(d)
    d = json.loads(saved.read_text())
    assert isinstance(MulticlassPlatt.from_dict(d), MulticlassPlatt)  # the unedited dict loads (control)


@pytest.mark.parametrize("kw, match", [({"degree": 0}, "degree"), ({"degree": 2.5}, "degree"),
                                       ({"ridge": -1}, "ridge"), ({"ridge": float("nan")}, "ridge")])
def test_bad_parameters_are_refused(tempered, kw, match):
    m, S, A = tempered
    with pytest.raises(ValueError, match=match):
        MulticlassPlatt(**kw).fit(m[:100], S[:100], counts=A[:100])


def test_bad_input_is_refused(tempered):
    m, S, A = tempered
    fit = MulticlassPlatt().fit(m[:1000], S[:1000], counts=A[:1000])
    m3, S3, _ = DirichletEnsemble(C=3).sample(50, rng=0)
    with pytest.raises(ValueError, match="4 classes"):
        fit.transform(m3, S3)
    with pytest.raises(ValueError, match="'mean'"):
        fit.transform(m[:10, 0], S[:10, 0, 0])
    with pytest.raises(socal.NotFittedError):
        MulticlassPlatt().transform(m, S)
    with pytest.raises(ValueError, match="sum"):
        MulticlassPlatt().fit(m * 1.1, S, counts=A)
    with pytest.raises(ValueError, match="recalibrator"):
        evaluate_recalibrated_multiclass(object(), m, S, counts=A)
    with pytest.raises(ValueError, match="names"):
        evaluate_recalibrated_multiclass(fit, m[:200], S[:200], counts=A[:200], names=["a"])


def test_members_input_is_read_as_the_multiclass_functions_read_it():
    probs = np.random.default_rng(2).dirichlet([3, 2, 1], size=(600, 5))
    A = np.random.default_rng(3).multinomial(3, [0.5, 0.3, 0.2], size=600).astype(float)
    a = MulticlassPlatt().fit(probs, counts=A).transform(probs, diagonal=True)
    b = MulticlassPlatt().fit(*socal.from_members(probs, diagonal=True), counts=A).transform(
        *socal.from_members(probs, diagonal=True), diagonal=True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_classwise_maps_load_files_of_the_old_format(tmp_path):
    """ClasswisePlatt reads format version 1 (socal.multiclass.MulticlassPlatt before 2026-12-06) and its own."""
    m, S, y = DirichletEnsemble(C=3, kind="tempered").sample(4000, rng=2)
    ev = evaluate_multiclass(m, S, y, h=1 / 16, n_boot=20)
    fit = ClasswisePlatt(h=1 / 16).fit(ev.mean[:2000], ev.var[:2000], y[:2000])
    m2, S2 = fit.transform(ev.mean[2000:], ev.var[2000:])
    assert np.abs(m2.sum(1) - 1).max() < 1e-12 and np.linalg.eigvalsh(S2).min() > -1e-12
    d = fit.to_dict()
    old = {"format": d["format"], "version": 1, "classes": d["classes"]}
    (tmp_path / "old.json").write_text(json.dumps(old))
    again = ClasswisePlatt.load(tmp_path / "old.json").transform(ev.mean[2000:], ev.var[2000:])
    assert np.array_equal(again[0], m2) and np.array_equal(again[1], S2)
    with pytest.raises(ValueError, match="ClasswisePlatt"):
        MulticlassPlatt.load(tmp_path / "old.json")


@given(st.lists(st.floats(0, 1), min_size=3, max_size=6), st.floats(0, 0.3))
def test_the_projection_is_a_probability_vector_and_a_covariance(raw, var):
    m, cov = project_simplex_covariance(np.array([raw]), np.full((1, len(raw)), var))
    assert abs(m.sum() - 1) < 1e-12 and np.all(m >= 0)
    assert np.abs(cov.sum(axis=2)).max() < 1e-12 and np.linalg.eigvalsh(cov[0]).min() > -1e-12
    assert np.all(np.diagonal(cov[0]) <= m[0] * (1 - m[0]) + 1e-12)


def test_the_class_weights_split_the_trace_and_leave_it_as_the_scale_set_it():
    """The covariance's trace is S(rho) (1 - |m'|^2) whatever the class weights (they only split it across classes,
    fitted with the trace held) wherever the pair-law cap does not bind; on a rare 50-class population its ratio to
    the votes' |f* - m'|^2 stays within x2 in every third of tr Sigma' (the raw ensemble's lowest third: x2.55)."""
    from socal.simplex import _scores

    m, v, A = DirichletEnsemble(C=50, base="rare", kind="tempered").sample(8000, k=5, counts=True, diagonal=True,
                                                                            rng=1)
    fit = MulticlassPlatt().fit(m[:4000], v[:4000], counts=A[:4000])
    assert not np.allclose(fit.g_, 1.0)  # some weights were fitted
    m2, v2 = fit.transform(m[4000:], v[4000:], diagonal=True)
    rho = _scores(m[4000:], v[4000:], "test")[2]
    held = fit.scale(rho) * (m2 * (1 - m2)).sum(axis=1)
    exact = np.isclose(v2.sum(axis=1), held, rtol=1e-9, atol=0)  # the rest: the cap bound, the trace below
    assert exact.mean() > 0.9 and np.all(v2.sum(axis=1)[~exact] < held[~exact])
    _, thirds = trace_by_thirds(m2, v2, A[4000:])
    assert all(0.5 < x < 2 for x in thirds), thirds
    assert trace_by_thirds(m[4000:], v[4000:], A[4000:])[1][0] > 2  # the raw lowest third was off (control)


def test_the_trace_near_a_vertex_has_no_cancellation():
    """1 - |m|^2 near a vertex is summed as sum_c m_c (1 - m_c): written 1 - |m|^2 it lost 7e-9 of its relative
    accuracy at m = (8e-9, 1 - 1.6e-8, 8e-9) (CI found it through the property above)."""
    m = np.array([[8e-9, 1 - 1.6e-8, 8e-9]])
    cov = _cov(m, np.ones(3), np.array([0.5]), diagonal=False)
    m1 = m[0, 1]
    exact = 0.5 * (2 * 8e-9 * (1 - 8e-9) + m1 * (1 - m1))  # 1 - m1 is exact in floating point (Sterbenz)
    assert np.isclose(np.trace(cov[0]), exact, rtol=1e-12, atol=0)


def test_a_class_whose_ce2_is_refused_says_why(monkeypatch):
    """A class CE2 that socal.ce2 refuses is 'not estimated' with the refusal's words, in the summary, the table rows
    and the dict (it was a bare None); the other classes are estimated as before (control)."""
    import socal.estimators as est

    m, S, A = DirichletEnsemble(C=3).sample(3100, k=4, counts=True, rng=5)
    fit = MulticlassPlatt().fit(m[:3000], S[:3000], counts=A[:3000])
    real = est.ce2

    def refuse_second(mean, var, *a, **kw):
        if np.allclose(mean, fit.transform(m[3000:], S[3000:], diagonal=True)[0][:, 1]):
            raise ValueError("The 'mean' parameter of ce2 is refused here (a planted refusal).")
        return real(mean, var, *a, **kw)

    monkeypatch.setattr(est, "ce2", refuse_second)
    ev = evaluate_recalibrated_multiclass(fit, m[3000:], S[3000:], counts=A[3000:], rng=0)
    assert ev.ce2[1] is None and ev.ce2[0] is not None and ev.ce2[2] is not None
    assert "not estimated: The 'mean' parameter of ce2 is refused here" in ev.summary()
    assert ev._rows()[1]["ce2_note"].startswith("The 'mean'") and ev._rows()[0]["ce2_note"] == ""
    assert ev.to_dict()["ce2_notes"][1].startswith("The 'mean'")
