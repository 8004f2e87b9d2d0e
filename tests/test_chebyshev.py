"""The moments route against a slow, obviously correct reference: design matrix, normal equations, refits."""

import numpy as np
import pytest
from numpy.polynomial import chebyshev as C

from socal import sufficient
from socal.sufficient import SufficientStats
from socal.fitting import fit_calibration
from socal.snapshots import targets
from socal.chebyshev import (TensorBasis, assemble_gram, cheb_rows, evaluate_series, grouped_moments, ridge_factor,
                             to_unit)


def reference_design(mean, var, degree):
    """V[i, (l+1) a + b] = T_a(2 m_i - 1) T_b(8 v_i - 1): numpy's chebvander2d layout."""
    if var is None:
        return C.chebvander(2 * mean - 1, degree)
    return C.chebvander2d(2 * mean - 1, 8 * var - 1, [degree, degree])


def reference_ridge(V, z, alpha):
    """Ridge with an unpenalised constant column (column 0 in numpy's layout as in ours)."""
    G = V.T @ V
    lam = alpha * np.trace(G) / G.shape[0]
    P = np.eye(G.shape[0])
    P[0, 0] = 0.0
    return np.linalg.solve(G + lam * P, V.T @ z)


def _data(n, seed=0, k=2):
    rng = np.random.default_rng(seed)
    m, v = rng.random(n), rng.random(n) / 4
    f = np.clip(m + 0.2 * (v - 0.125), 0, 1)
    a = rng.binomial(k, f).astype(float)
    z1, z2 = targets(a, np.full(n, float(k)))
    return m, v, np.column_stack([z1, z2])


def test_cheb_rows_matches_numpy():
    x = np.linspace(-1, 1, 101)
    np.testing.assert_allclose(cheb_rows(x, 30), C.chebvander(x, 30).T, atol=1e-13)


@pytest.mark.parametrize("ndim,degree", [(2, 0), (2, 3), (2, 9), (1, 12)])
def test_gram_from_moments_equals_design_gram(ndim, degree):
    m, v, _ = _data(2000)
    basis = TensorBasis(degree, ndim)
    u, w = to_unit(m, v if ndim == 2 else None)
    M = grouped_moments(u, w, np.zeros(len(u), np.intp), 1, 2 * degree, 2 * basis.deg_w)[0]
    V = reference_design(m, v if ndim == 2 else None, degree)[:, basis.tensor_index]
    G = assemble_gram(M, basis)
    np.testing.assert_allclose(G, V.T @ V, rtol=0, atol=1e-10 * np.abs(G).max())


def test_max_ordering_makes_lower_degrees_leading_blocks():
    b = TensorBasis(7)
    for l in range(8):
        lead = b.pairs[: b.size_at(l)]
        assert lead.max() == l and len({tuple(p) for p in lead}) == (l + 1) ** 2


@pytest.mark.parametrize("force_weighted", [False, True])
@pytest.mark.parametrize("ndim", [1, 2])
def test_fixed_fit_matches_reference(monkeypatch, force_weighted, ndim):
    """Both routes to the right-hand side (target classes, weighted moments) agree with normal equations."""
    if force_weighted:
        monkeypatch.setattr(sufficient, "_MAX_CLASSES", 0)
    m, v, zs = _data(3000, seed=1, k=5)
    var = v if ndim == 2 else None
    zs = zs if ndim == 2 else zs[:, :1]
    degree, alpha = 6, 1e-4
    fit = fit_calibration(m, var, zs, degrees=(degree,), alphas=(alpha,), folds=5, holdout=None,
                          rng=np.random.default_rng(0), select=False)
    V = reference_design(m, var, degree)
    beta_ref = reference_ridge(V, zs, alpha)
    np.testing.assert_allclose(fit.calmap.raw(m, var), V @ beta_ref, atol=1e-9)


def test_cv_error_from_statistics_equals_explicit_refits():
    m, v, zs = _data(2500, seed=2)
    degrees, alphas, folds = (6, 3), (1e-5, 1e-2), 5
    fit = fit_calibration(m, v, zs, degrees=degrees, alphas=alphas, folds=folds, holdout=None,
                          rng=np.random.default_rng(7), select=True, search="exhaustive")
    # the folds are the statistics' seeded row hash: rebuild them from the same seed
    fold = SufficientStats(max_degree=6, folds=folds, rng=np.random.default_rng(7)).fold_of(m, v, zs)
    assert np.bincount(fold).min() > 0.15 * len(m)  # five folds of about n/5 each
    ref = np.zeros((len(degrees), len(alphas)))
    for i, l in enumerate(degrees):
        V = reference_design(m, v, l)
        for j, a in enumerate(alphas):
            for f in range(folds):
                tr, va = fold != f, fold == f
                beta = reference_ridge(V[tr], zs[tr], a)
                ref[i, j] += ((V[va] @ beta - zs[va]) ** 2).sum()
    np.testing.assert_allclose(fit.selection.cv_error, ref / len(m), rtol=1e-8)
    i, j = np.unravel_index(np.argmin(ref), ref.shape)
    assert (fit.calmap.degree, fit.calmap.alpha) == (degrees[i], alphas[j])


def test_evaluate_matches_chebval2d_on_new_points():
    rng = np.random.default_rng(3)
    basis = TensorBasis(10)
    beta = rng.normal(size=(basis.size, 2))
    m, v = rng.random(500), rng.random(500) / 4
    coef = basis.to_tensor(beta)
    ref = np.stack([C.chebval2d(2 * m - 1, 8 * v - 1, coef[r]) for r in range(2)], axis=1)
    np.testing.assert_allclose(evaluate_series(basis, beta, m, v), ref, atol=1e-11)


def test_ridge_floor_rescues_singular_gram_with_warning():
    from socal.chebyshev import ConditioningWarning

    G = np.ones((4, 4))  # rank one
    with pytest.warns(ConditioningWarning):
        f = ridge_factor(G, 0.0)
    assert f.lam > 0 and np.all(np.isfinite(f.solve(np.ones(4))))


@pytest.mark.parametrize("varying_k", [False, True])
def test_target_classes_route_equals_generic_route(varying_k):
    rng = np.random.default_rng(8)
    n = 2000
    m, v = rng.random(n), rng.random(n) / 4
    k = rng.integers(2, 9, n).astype(float) if varying_k else np.full(n, 4.0)
    a = rng.binomial(k.astype(int), m).astype(float)
    zs = np.column_stack(targets(a, k))
    kw = dict(degrees=(5,), alphas=(1e-3,), folds=5, holdout=None, select=False)
    generic = fit_calibration(m, v, zs, rng=np.random.default_rng(0), **kw)
    classed = fit_calibration(m, v, zs, rng=np.random.default_rng(0), classes=sufficient.target_classes(a, k, 2), **kw)
    np.testing.assert_allclose(classed.calmap.beta, generic.calmap.beta, rtol=1e-10, atol=1e-12)
