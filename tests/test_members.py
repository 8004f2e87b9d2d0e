"""socal.members: class probabilities of an ensemble's members to a mean and covariance, with the shapes named."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import socal


def test_from_members_names_class_probabilities_and_warns_on_a_transposed_array():
    """(n, M, 2) class probabilities were refused as "must be a 2-dimensional array" with no hint, and an (M, n)
    stack of members (np.stack(member_predictions)) was read silently as M items of n members each."""
    p = np.random.default_rng(0).random((50, 4))
    with pytest.raises(ValueError, match="pass probabilities\\[\\.\\.\\., 1\\]"):
        socal.from_members(np.stack([1 - p, p], axis=-1))
    with pytest.warns(UserWarning, match="4 item rows.*pass probabilities.T"):
        m, _ = socal.from_members(p.T)
    assert m.shape == (4,)  # read as given
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        socal.from_members(p)  # items as rows: no warning
        socal.from_members(p[:4])  # as many members as items: no warning


def test_from_members_of_many_classes_gives_the_mean_vector_and_covariance():
    """An (n, M, C) multi-class stack with C > 2 was refused with the one-vs-rest recipe; it is now the multiclass
    input (issue 59): the mean vector and the members' covariance.  One class's slice is the binary input, as
    before, and other shapes are refused as before."""
    probs = np.random.default_rng(0).dirichlet(np.ones(10), (100, 5))
    m, cov = socal.from_members(probs)
    assert m.shape == (100, 10) and cov.shape == (100, 10, 10)
    m, v = socal.from_members(probs[:, :, 3])  # one class, one-vs-rest
    assert m.shape == v.shape == (100,)
    with pytest.raises(ValueError, match="must be a 2-dimensional array"):  # other shapes as before
        socal.from_members(probs[:, :, :, None])


def test_signed_scores_are_named_as_possible_logits():
    """Members' logits passed as probabilities were refused with no hint (percentages get one): a signed array is
    now named as possible log-odds, and an array of one sign is not."""
    logits = np.random.default_rng(0).normal(size=(100, 3))
    with pytest.raises(ValueError, match=r"\(logits\? map them to probabilities with scipy\.special\.expit\)$"):
        socal.from_members(logits)
    with pytest.raises(ValueError, match="'mean' parameter of ce2 must be in \\[0, 1\\]") as err:
        socal.ce2(np.full(100, -0.1), np.full(100, 0.1), np.zeros((100, 2)))
    assert "logits" not in str(err.value)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), M=st.integers(2, 6), C=st.integers(3, 12), conc=st.floats(0.05, 5.0),
       seed=st.integers(0, 2**32 - 1))
def test_class_variances_alone_follow_their_stated_rule(n, M, C, conc, seed):
    """``diagonal=True`` (O(n M C): what C = 1,000 needs) is the class variances by ``ddof``, scaled per item by the
    largest s in [(M - 1) / M, 1] keeping each at most m_c (1 - m_c).  It equals the full covariance's diagonal at
    ddof=0; at ddof=1 it is at least that diagonal (the full path also keeps every pair law >= 0), equal where no
    pair binds, and never below ddof=0's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more members than items, on purpose
        P = np.random.default_rng(seed).dirichlet(np.full(C, conc), (n, M))
        m0, d0 = socal.from_members(P, ddof=0, diagonal=True)
        _, S0 = socal.from_members(P, ddof=0)
        m1, d1 = socal.from_members(P, ddof=1, diagonal=True)
        _, S1 = socal.from_members(P, ddof=1)
    np.testing.assert_allclose(d0, np.diagonal(S0, axis1=1, axis2=2), rtol=1e-12, atol=1e-300)
    full1 = np.diagonal(S1, axis1=1, axis2=2)
    assert np.all(d1 >= full1 * (1 - 1e-12)) and np.all(d1 >= d0 * (1 - 1e-12))
    assert np.all(d1 <= m1 * (1 - m1) * (1 + 1e-12))
    pair = m1[:, :, None] * m1[:, None, :]  # with the unscaled ddof=1 covariance: the pair law
    raw = S0 * M / (M - 1)
    free = ((pair + raw) >= -1e-12 * (pair - raw) - 1e-300).all(axis=(1, 2))
    free &= (np.diagonal(raw, axis1=1, axis2=2) <= m1 * (1 - m1)).all(axis=1)
    np.testing.assert_allclose(d1[free], full1[free], rtol=1e-12, atol=1e-300)
    v1 = np.diagonal(raw, axis1=1, axis2=2)  # the rule from first principles
    cap = m1 * (1 - m1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.clip(np.where(v1 > cap, cap / v1, 1.0).min(axis=1), (M - 1) / M, 1.0)
    np.testing.assert_allclose(d1, v1 * s[:, None], rtol=1e-10, atol=1e-300)
