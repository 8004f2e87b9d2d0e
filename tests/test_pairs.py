"""socal.pair_score: the exact pair law's log and Brier scores (propriety, the U-statistic over k votes, the
decomposition and its relation to CE2, hostile input)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socal
from socal.pairs import BRIER_EIGENVALUES, pair_score, pair_score_terms


def _brute_binary(m, v, votes, form):
    """Average over ordered pairs of distinct votes, pair by pair."""
    law = {(1, 1): m * m + v, (1, 0): m * (1 - m) - v, (0, 1): m * (1 - m) - v, (0, 0): (1 - m) ** 2 + v}
    tot, K = 0.0, 0
    for i, j in itertools.permutations(range(len(votes)), 2):
        o = (int(votes[i]), int(votes[j]))
        if form == "log":
            tot += -math.log(max(law[o], 1e-9))
        else:
            tot += sum((p - (1.0 if key == o else 0.0)) ** 2 for key, p in law.items())
        K += 1
    return tot / K


@pytest.mark.parametrize("form", ["log", "brier"])
def test_binary_scores_equal_the_pair_by_pair_average(form):
    g = np.random.default_rng(0)
    n, k = 40, 5
    m = g.uniform(0.05, 0.95, n)
    v = g.uniform(0, 1, n) * m * (1 - m)
    y = g.integers(0, 2, (n, k)).astype(float)
    s = pair_score(m, v, y, form=form)
    want = [_brute_binary(m[i], v[i], y[i], form) for i in range(n)]
    np.testing.assert_allclose(s.per_item, want, rtol=1e-12)
    assert s.score == pytest.approx(np.mean(want))


@pytest.mark.parametrize("form", ["log", "brier"])
def test_multiclass_scores_equal_the_pair_by_pair_average(form):
    g = np.random.default_rng(1)
    n, M, C, k = 30, 4, 4, 6
    probs = g.dirichlet(np.ones(C) * 2, (n, M))
    m, cov = socal.from_members(probs, ddof=0)
    y = g.integers(0, C, (n, k))
    s = pair_score(m, labels=y, cov=cov, form=form)
    for i in range(n):
        P = np.outer(m[i], m[i]) + cov[i]
        tot = []
        for a, b in itertools.permutations(range(k), 2):
            c, d = y[i, a], y[i, b]
            if form == "log":
                tot.append(-math.log(max(P[c, d], 1e-9)))
            else:
                e = np.zeros((C, C))
                e[c, d] = 1
                tot.append(((P - e) ** 2).sum())
        assert s.per_item[i] == pytest.approx(np.mean(tot), rel=1e-10)


def test_a_two_class_multiclass_law_is_the_binary_one():
    """C classes reduce to the binary law: class 1 of a 2-class problem with its variance (checked through the
    binary path on the same votes, since the multiclass path takes C >= 3: a third class that never occurs)."""
    g = np.random.default_rng(2)
    n = 50
    m = g.uniform(0.1, 0.9, n)
    v = g.uniform(0, 0.5, n) * m * (1 - m)
    a = g.integers(0, 6, n).astype(float)
    k = np.full(n, 5.0)
    b = pair_score(m, v, counts=(a, k), form="brier")
    eps = 0.0
    M = np.stack([m, 1 - m, np.full(n, eps)], axis=1)
    cov = np.zeros((n, 3, 3))
    cov[:, 0, 0] = cov[:, 1, 1] = v
    cov[:, 0, 1] = cov[:, 1, 0] = -v
    A = np.stack([a, k - a, np.zeros(n)], axis=1)
    mc = pair_score(M, counts=A, cov=cov, form="brier")
    np.testing.assert_allclose(mc.per_item, b.per_item, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(m=st.floats(0.001, 0.999), t=st.floats(0, 1), m2=st.floats(0.001, 0.999), t2=st.floats(0, 1),
       form=st.sampled_from(["log", "brier"]))
def test_strictly_proper_item_by_item(m, t, m2, t2, form):
    """The expected score under the true pair law is lowest at the truth: the calibration term is >= 0, and > 0
    where the reported pair law differs from the truth's."""
    v, v2 = t * m * (1 - m), t2 * m2 * (1 - m2)
    score_true, cal_true, _ = pair_score_terms([m], [v], [m], [m * m + v], form)
    score_other, cal_other, _ = pair_score_terms([m2], [v2], [m], [m * m + v], form)
    assert abs(cal_true) < 1e-12
    assert cal_other >= -1e-12
    gap = abs(m2 - m) + abs((m2 * m2 + v2) - (m * m + v))
    if gap > 1e-4:
        assert score_other > score_true


def _population(g, n):
    """Reported (m, v) and truths (eta1, eta2) off by random errors."""
    eta1 = g.uniform(0.02, 0.98, n)
    evar = g.uniform(0, 0.9, n) * eta1 * (1 - eta1)
    m = np.clip(eta1 + g.normal(0, g.uniform(0, 0.2), n), 0.001, 0.999)
    v = g.uniform(0, 1, n) * m * (1 - m)
    return m, v, eta1, eta1 * eta1 + evar


def _ce2(m, v, eta1, eta2):
    return float(np.mean(np.abs(eta1 - m)) + np.mean(np.abs(eta2 - (m * m + v))))


def _bounds_hold(m, v, eta1, eta2, brier_const=math.sqrt(2 / BRIER_EIGENVALUES[0]), log_const=3 / math.sqrt(2)):
    ce2 = _ce2(m, v, eta1, eta2)
    _, cal_b, _ = pair_score_terms(m, v, eta1, eta2, "brier")
    _, cal_l, _ = pair_score_terms(m, v, eta1, eta2, "log")
    return (cal_b <= BRIER_EIGENVALUES[1] * ce2 + 1e-12 and ce2 <= brier_const * math.sqrt(cal_b) + 1e-12
            and ce2 <= log_const * math.sqrt(cal_l) + 1e-12)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 300))
def test_the_calibration_terms_bound_ce2_and_the_reverse(seed, n):
    """CAL_brier <= (5 + sqrt 17) CE2, CE2 <= 1.51 sqrt(CAL_brier), CE2 <= 2.12 sqrt(CAL_log) (module notes)."""
    assert _bounds_hold(*_population(np.random.default_rng(seed), n))


def test_the_bound_check_fails_with_a_wrong_constant():
    """Negative control: with 1/4 of the Brier constant the check finds a population where it FAILS."""
    g = np.random.default_rng(3)
    assert any(not _bounds_hold(*_population(g, 50), brier_const=0.25 * math.sqrt(2 / BRIER_EIGENVALUES[0]))
               for _ in range(50))


def test_the_brier_calibration_term_is_the_quadratic_form():
    g = np.random.default_rng(4)
    m, v, eta1, eta2 = _population(g, 500)
    e1, e2 = eta1 - m, eta2 - (m * m + v)
    _, cal, _ = pair_score_terms(m, v, eta1, eta2, "brier")
    assert cal == pytest.approx(np.mean(6 * e1 ** 2 - 8 * e1 * e2 + 4 * e2 ** 2), rel=1e-10)


@pytest.mark.parametrize("form", ["log", "brier"])
def test_the_k_vote_average_is_unbiased_for_the_expected_pair_score(form):
    """Votes drawn from f* ~ Beta with the reported moments (calibrated), k = 5: the sampled mean score lies within
    4 standard errors of the exact expected score."""
    g = np.random.default_rng(5)
    n = 40_000
    m = g.uniform(0.05, 0.95, n)
    v = g.uniform(0.05, 0.6, n) * m * (1 - m)
    s_ = m * (1 - m) / v - 1
    f = g.beta(m * s_, (1 - m) * s_)
    a = g.binomial(5, f).astype(float)
    s = pair_score(m, v, counts=(a, np.full(n, 5.0)), form=form)
    exact, _, _ = pair_score_terms(m, v, m, m * m + v, form)
    assert abs(s.score - exact) < 4 * s.stderr


def test_an_impossible_pair_is_named_and_floored():
    m = np.array([0.0, 0.5, 0.3])
    v = np.array([0.0, 0.25, 0.01])
    y = np.array([[1, 1], [1, 0], [1, 0]], float)
    s = pair_score(m, v, y)
    assert s.impossible.tolist() == [0, 1]
    assert s.per_item[0] == pytest.approx(-math.log(1e-9))
    assert "2 item(s) have a pair the prediction gives probability 0" in s.summary()
    assert np.all(np.isfinite(pair_score(m, v, y, form="brier").per_item))


def test_paired_difference_and_its_refusals():
    g = np.random.default_rng(6)
    n = 2000
    m = g.uniform(0.1, 0.9, n)
    v = 0.1 * m * (1 - m)
    y = g.binomial(1, m[:, None], (n, 2)).astype(float)
    a, b = pair_score(m, v, y), pair_score(m, 0.5 * v, y)
    d, lo, hi = a.difference(b)
    assert lo <= d <= hi and d == pytest.approx(a.score - b.score)
    with pytest.raises(ValueError, match="same 1999 items|same 2000 items"):
        a.difference(pair_score(m[1:], v[1:], y[1:]))
    with pytest.raises(ValueError, match="'ci' parameter"):
        a.difference(b, ci=1.5)
    with pytest.raises(ValueError, match="PairScore"):
        a.difference(0.3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(form="spherical"), "'form' parameter"),
    (dict(var=np.array([0.3, 0.1])), "in \\[0, 1/4\\]"),
    (dict(mean=np.array([0.1, 0.5]), var=np.array([0.2, 0.1])), "at most mean\\*\\(1-mean\\)"),
    (dict(var=np.array([np.nan, 0.1])), "'var' parameter"),
    (dict(labels=np.array([[0, 2], [1, 1]])), "'labels' parameter"),
    (dict(labels=np.array([[0], [1]])), "k >= 2"),
])
def test_binary_input_is_refused_with_the_rule(kwargs, match):
    args = dict(mean=np.array([0.5, 0.5]), var=np.array([0.1, 0.1]), labels=np.array([[0, 1], [1, 1]]))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pair_score(**args)


def test_multiclass_input_is_refused_with_the_rule():
    m = np.array([[0.1, 0.1, 0.8]])
    u = np.array([1.0, -1.0, 0.0])
    bad = 0.05 * np.outer(u, u)[None]
    with pytest.raises(ValueError, match="m_c m_d \\+ cov_cd >= 0"):
        pair_score(m, counts=np.array([[1, 1, 0]]), cov=bad)
    with pytest.raises(ValueError, match="needs the covariances between classes"):
        pair_score(m, counts=np.array([[1, 1, 0]]), cov=np.array([[0.01, 0.01, 0.02]]))
    with pytest.raises(ValueError, match="pass the covariance as 'cov'"):
        pair_score(m, np.zeros((1, 3, 3)), counts=np.array([[1, 1, 0]]))


def test_frame_and_html():
    s = pair_score(np.array([0.2, 0.7]), np.array([0.01, 0.05]), np.array([[0, 1], [1, 1]]))
    f = s.frame()
    row = {k: (f[k][0] if isinstance(f, dict) else f[k].iloc[0]) for k in ("form", "score", "n")}
    assert row["form"] == "log" and row["n"] == 2 and row["score"] == pytest.approx(s.score)
    assert "<table" in s._repr_html_() and "pair log score" in s._repr_html_()
