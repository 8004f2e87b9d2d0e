"""socal.members: class probabilities of an ensemble's members to a mean and covariance, with the shapes named."""

import warnings

import numpy as np
import pytest

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
