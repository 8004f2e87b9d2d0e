"""The finufft backend (extra 'fast') against the matrix-product route, and backend selection."""

import numpy as np
import pytest

import socal
from socal import chebyshev
from socal.chebyshev import TensorBasis, cheb_rows, evaluate_series, grouped_moments

finufft = pytest.importorskip("finufft", reason="the finufft backend needs the 'fast' extra (pip install finufft)")


@pytest.fixture
def backend():
    previous = socal.get_backend()
    yield socal.set_backend
    socal.set_backend(previous)


@pytest.mark.parametrize("deg_u,deg_w", [(0, 0), (6, 6), (9, 0), (30, 12), (88, 88)])
def test_moments_equal_the_matrix_product_route(backend, deg_u, deg_w):
    rng = np.random.default_rng(deg_u)
    n = 3000
    u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    u[:3] = [-1.0, 1.0, 0.0]  # the ends of the angle map
    g = rng.integers(0, 4, n).astype(np.intp)
    backend("numpy")
    ref = grouped_moments(u, w, g, 4, deg_u, deg_w)
    backend("finufft")
    got = grouped_moments(u, w, g, 4, deg_u, deg_w)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * n)


def test_moments_of_an_empty_group_are_zero(backend):
    backend("finufft")
    u = np.linspace(-1, 1, 10)
    M = grouped_moments(u, u, np.zeros(10, np.intp), 3, 4, 4)
    assert np.all(M[1:] == 0) and M[0, 0, 0] == pytest.approx(10)


@pytest.mark.parametrize("J", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("deg_u,deg_w", [(0, 0), (7, 0), (6, 6), (30, 12), (88, 88)])
def test_weighted_moments_equal_the_matrix_product_route(backend, J, deg_u, deg_w):
    """Two real strength columns share one transform (their real and imaginary parts): every column, an odd last
    one included, must come out as the matrix products give it, and a sign flip of one column must show in its
    moments alone (the columns are not mixed up)."""
    from socal.sufficient import response_moments

    rng = np.random.default_rng(100 * J + deg_u)
    n = 3000
    u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    u[:3], w[:3] = [-1.0, 1.0, 0.0], [1.0, -1.0, 0.0]
    Z = rng.standard_normal((n, J)) * (10.0 ** np.arange(J))  # columns of different sizes
    backend("numpy")
    ref = response_moments(u, w, Z, deg_u, deg_w)
    backend("finufft")
    got = response_moments(u, w, Z, deg_u, deg_w)
    # the transform's error is relative to the packed pair's sum |Z|: within 10 EPS of each column's own here
    scale = np.abs(Z).sum(axis=0)[:, None, None]
    np.testing.assert_allclose(got / scale, ref / scale, rtol=0, atol=1e-12)
    Z[:, -1] *= -1
    flipped = response_moments(u, w, Z, deg_u, deg_w)
    np.testing.assert_allclose(flipped[:-1], got[:-1], rtol=0, atol=1e-12 * np.abs(Z).sum())
    np.testing.assert_allclose(flipped[-1], -got[-1], rtol=0, atol=1e-12 * np.abs(Z).sum())


@pytest.mark.parametrize("degree,ndim,R", [(5, 2, 1), (20, 2, 2), (12, 1, 1), (44, 2, 3)])
def test_evaluation_equals_the_matrix_product_route(backend, degree, ndim, R):
    rng = np.random.default_rng(degree)
    basis = TensorBasis(degree, ndim)
    beta = rng.standard_normal((basis.size, R))
    m, v = rng.random(2000), rng.random(2000) / 4
    backend("numpy")
    ref = evaluate_series(basis, beta, m, v if ndim == 2 else None)
    backend("finufft")
    got = evaluate_series(basis, beta, m, v if ndim == 2 else None)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(beta).sum())


def test_ce2_is_the_same_under_both_backends(backend):
    m, v, y = socal.synthetic.toy_population().sample(20000, h=1 / 16, rng=0)
    backend("numpy")
    a = socal.ce2(m, v, y, h=1 / 16, rng=0, degree=30, ridge=1e-4, debias=False)
    backend("finufft")
    b = socal.ce2(m, v, y, h=1 / 16, rng=0, degree=30, ridge=1e-4, debias=False)
    assert b.estimate == pytest.approx(a.estimate, rel=1e-9)


def test_auto_uses_finufft_only_where_it_gains(backend, monkeypatch):
    backend("auto")
    assert chebyshev.use_nufft(10**6, 89 * 89, moments=True)
    assert not chebyshev.use_nufft(10**4, 89 * 89, moments=True)  # too few rows: per-call overhead dominates
    assert not chebyshev.use_nufft(10**6, 13 * 13, moments=True)  # low degree: matrix products win
    # a few strength columns (the bootstrap world's moments): worth it from fewer rows and terms
    assert chebyshev.use_nufft(5 * 10**4, 45 * 45, True, weighted=True)
    assert not chebyshev.use_nufft(5 * 10**4, 13 * 13, True, weighted=True)
    assert not chebyshev.use_nufft(10**4, 89 * 89, True, weighted=True)
    backend("numpy")
    assert not chebyshev.use_nufft(10**6, 89 * 89, moments=True)
    assert not chebyshev.use_nufft(10**6, 89 * 89, True, weighted=True)


def test_set_backend_is_validated(backend, monkeypatch):
    with pytest.raises(ValueError, match="'name' parameter of set_backend must be one of"):
        backend("fftw")
    from socal import nufft

    monkeypatch.setattr(nufft, "_finufft", None)
    with pytest.raises(ValueError, match="finufft is not installed"):
        backend("finufft")
    assert backend("numpy") in chebyshev.BACKENDS  # returns the previous choice


@pytest.mark.parametrize("ndim", [2, 1])
def test_the_fused_pass_computes_each_axis_angles_once_and_the_same_numbers(backend, monkeypatch, ndim):
    """The bootstrap's deviation-and-world pass evaluates the map and sums the covariance moments by NUFFT from one
    ScoreAngles: one arccos of all rows per axis used (2 in 2-D, 1 in 1-D; 4 and 2 when each transform computes its
    own), and the same sums as with the angles computed afresh.  (The world's correction sums over the rows the
    projection moved, a few per cent in practice, take their own angles.)"""
    from socal import nufft, world
    from socal.fitting import CalibrationMap

    m, v, y = socal.synthetic.toy_population().sample(4000, h=1 / 16, rng=0)
    basis = TensorBasis(20, ndim)
    beta = np.random.default_rng(1).standard_normal((basis.size, ndim)) * 0.01
    beta[0] = 0.5  # a map inside (0, 1), so the world's covariances are not all 0
    calmap = CalibrationMap(degree=20, ndim=ndim, beta=beta, alpha=1e-3)
    a, k = y.sum(axis=1), np.full(m.size, 2.0)
    backend("finufft")
    calls = []
    from socal import unit

    original = unit.unit_angles

    def counting(x):
        calls.append(x.size)
        return original(x)

    monkeypatch.setattr(unit, "unit_angles", counting)  # ScoreAngles' module (socal.unit)
    monkeypatch.setattr(nufft, "_angles", counting)
    shared = world.DeviationWorldPass(calmap)(0, m, v, a, k)
    assert calls.count(m.size) == ndim
    monkeypatch.setattr(world, "ScoreAngles", lambda mean, var=None: None)  # each transform computes its own
    calls.clear()
    alone = world.DeviationWorldPass(calmap)(0, m, v, a, k)
    assert calls.count(m.size) == 2 * ndim
    for x, z in zip(shared.world.arrays + (shared.dev.mean_term, shared.dev.moment_term),
                    alone.world.arrays + (alone.dev.mean_term, alone.dev.moment_term)):
        np.testing.assert_array_equal(x, z)
