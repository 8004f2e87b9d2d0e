"""Second- and first-order Platt scaling: estimator conventions, persistence, and exact CE2 after recalibration."""

import json

import numpy as np
import pytest

import socal
from socal import synthetic
import math
import re
import warnings

H = 1 / 16


@pytest.fixture(scope="module")
def sample():
    return synthetic.toy_population().sample(4000, h=H, rng=0)


def test_fit_returns_self_and_learned_attributes(sample):
    m, v, y = sample
    p = socal.SecondOrderPlatt(h=H, rng=0)
    assert p.fit(m, v, y) is p
    assert p.degree_ >= 0 and p.ridge_ > 0 and p.n_samples_fit_ == len(m)


def test_not_fitted_error_is_value_and_attribute_error(sample):
    m, v, _ = sample
    with pytest.raises(socal.NotFittedError, match="not fitted"):
        socal.SecondOrderPlatt().transform(m, v)
    assert issubclass(socal.NotFittedError, ValueError) and issubclass(socal.NotFittedError, AttributeError)


def test_get_set_params_round_trip():
    p = socal.SecondOrderPlatt(degree=8, ridge=1e-3)
    q = socal.SecondOrderPlatt().set_params(**p.get_params())
    assert q.get_params() == p.get_params()
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        p.set_params(bogus=1)


def test_json_round_trip_is_bit_identical(sample):
    m, v, y = sample
    p = socal.SecondOrderPlatt(h=H, rng=0).fit(m, v, y)
    q = socal.SecondOrderPlatt.from_dict(json.loads(json.dumps(p.to_dict())))
    for a, b in zip(p.transform(m, v), q.transform(m, v)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="'class' of FirstOrderPlatt.from_dict must be 'FirstOrderPlatt'"):
        socal.FirstOrderPlatt.from_dict(p.to_dict())


def test_fit_transform_and_feasible_output(sample):
    m, v, y = sample
    a = socal.SecondOrderPlatt(degree=8, ridge=1e-3).fit_transform(m, v, y)
    b = socal.SecondOrderPlatt(degree=8, ridge=1e-3).fit(m, v, y).transform(m, v)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])  # the variances too (only the means were compared)
    m2, v2 = a
    assert np.all((0 <= m2) & (m2 <= 1) & (v2 >= 0) & (v2 <= m2 * (1 - m2) + 1e-15))


def test_first_order_platt_asserts_no_variance(sample):
    m, v, y = sample
    f1 = socal.FirstOrderPlatt(degree=6, ridge=1e-4).fit(m, None, y[:, :1])
    m2, v2 = f1.transform(m)
    assert np.all(v2 == 0) and f1.map_.ndim == 1
    f2 = socal.FirstOrderPlatt(ndim=2, degree=4, ridge=1e-4).fit(m, v, y)
    assert f2.map_.ndim == 2


def test_bad_input(sample):
    m, v, y = sample
    with pytest.raises(ValueError, match="'var'"):
        socal.SecondOrderPlatt(degree=3).fit(m, v + 0.3, y)
    with pytest.raises(ValueError, match="'ndim'"):
        socal.SecondOrderPlatt(ndim=3).fit(m, v, y)
    p = socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(m, v, y)
    with pytest.raises(ValueError, match="'mean'"):
        p.transform(m + 2, v)


def test_exact_ce2_after_recalibration_falls_with_calibration_size():
    """CE2 of T-hat computed exactly (socal.truth), not estimated: below the raw CE2 and falling with n."""
    pop = synthetic.toy_population()
    raw = pop.ce2(H).value
    ce = {}
    for n in (2000, 40000):
        m, v, y = pop.sample(n, h=H, rng=n)
        p = socal.SecondOrderPlatt(h=H, rng=0).fit(m, v, y)
        ce[n] = pop.recalibrated_ce2(H, p.predict_moments).value
    assert ce[40000] < ce[2000] and ce[40000] < raw / 2, (raw, ce)


def test_identity_and_exact_recalibration_are_exact():
    """Controls for the truth computation: claiming the raw scores reproduces CE2^pert; the true eta gives 0."""
    pop = synthetic.overconfident_population()
    assert pop.recalibrated_ce2(H, lambda a, b: (a, a * a + b)).value == pytest.approx(pop.ce2(H).value, abs=1e-7)
    assert pop.recalibrated_ce2(H, lambda a, b: pop.calibration_functions(H, a, b)).value < 1e-9


def test_calibrated_predictor_not_made_worse_beyond_estimation_error():
    """Recalibrating the exactly calibrated T costs no more than recalibrating the raw predictor at the same n."""
    pop = synthetic.overconfident_population()
    n = 20000
    m, v, y = pop.sample(n, h=H, rng=3)
    e1, e2 = pop.calibration_functions(H, m, v)
    tm, tv = e1, np.clip(e2 - e1**2, 0, 0.25)  # T(S): exactly second-order calibrated (CE2 = 0)
    p_t = socal.SecondOrderPlatt(h=H, rng=0).fit(tm, tv, y)

    def composite(a, b):
        c1, c2 = pop.calibration_functions(H, a, b)
        return p_t.predict_moments(c1, np.clip(c2 - c1**2, 0, 0.25))

    after = pop.recalibrated_ce2(H, composite).value
    p_raw = socal.SecondOrderPlatt(h=H, rng=0).fit(m, v, y)
    estimation_error = pop.recalibrated_ce2(H, p_raw.predict_moments).value
    assert after <= 1.5 * estimation_error, (after, estimation_error)


def test_fit_with_the_labels_by_keyword_is_told_where_they_go():
    """fit(X, labels=y) was told that y is missing ("requires y to be passed"), not that the labels go in y."""
    m, v, _, y = socal.synthetic.calibrated_population().sample_raw(200, rng=0)
    for cls in (socal.SecondOrderPlatt, socal.FirstOrderPlatt):
        X = np.column_stack([m, v]) if cls is socal.SecondOrderPlatt else m[:, None]
        with pytest.raises(ValueError, match="the labels are the second argument y .* 'labels' must be None"):
            cls(rng=0).fit(X, labels=y)


@pytest.mark.parametrize("cls", [socal.SecondOrderPlatt, socal.FirstOrderPlatt])
def test_a_cap_of_degree_0_is_refused_with_socals_message(sample, cls):
    """SecondOrderPlatt(max_degree=0) fitted a constant map and reported degree None (issue 61): a search with one
    candidate, the constant, is refused by name.  Negative controls: max_degree=1 fits, and degree=0 asked for by
    name (a grid search's baseline) is taken."""
    m, v, y = sample
    args = (m, v, y) if cls is socal.SecondOrderPlatt else (m, None, y)
    with pytest.raises(ValueError, match=f"'max_degree' parameter of {cls.__name__} must be at least 1. Got 0"):
        cls(max_degree=0).fit(*args)
    assert cls(max_degree=1).fit(*args).degree_ <= 1
    assert cls(degree=0, ridge=1e-3).fit(*args).degree_ == 0


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


def test_a_partial_overlap_with_the_fit_rows_is_estimated_and_said():
    """evaluate_recalibrated on items half of which the map was fitted on printed "held-out items" (only the very
    fit rows were detected).  The fingerprint's bottom-256 sketch of the fit rows' keys estimates the share that
    match; it survives to_dict/from_dict and partial_fit, and fresh items read 0."""
    m, v, y = socal.synthetic.toy_population().sample(8000, h=1 / 16, rng=1)
    fit, fresh = np.arange(4000), np.arange(4000, 8000)
    platt = socal.SecondOrderPlatt(degree=3, ridge=1e-3, rng=0).fit(m[fit], v[fit], y[fit])
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
    stream = socal.SecondOrderPlatt(degree=3, ridge=1e-3, rng=0)
    for i in range(4):
        stream.partial_fit(m[fit][i::4], v[fit][i::4], y[fit][i::4])
    assert stream.fit_rows_.sketch == platt.fit_rows_.sketch
    with pytest.raises(ValueError, match="'fit_sketch' of SecondOrderPlatt.from_dict must be null or up to 256"):
        socal.SecondOrderPlatt.from_dict({**platt.to_dict(), "fit_sketch": "zz"})


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
