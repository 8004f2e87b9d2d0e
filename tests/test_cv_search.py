"""Cross-validation from the statistics: the greedy search against the exhaustive grid, and the mixed-precision fold
solves against float64 ones."""

import numpy as np
import pytest

import socal
from socal import fitting
from socal.degrees import DEFAULT_ALPHAS, degree_schedule
from socal.fitting import _FoldErrors, select_and_fit
from socal.chebyshev import MomentOperator, TensorBasis, assemble_gram, cheb_rows, tensor_features, tensor_gram
from socal.sufficient import SufficientStats


def _stats(pop, n, h, max_degree, seed=0):
    m, v, y = getattr(socal.synthetic, pop + "_population")().sample(n, h=h, rng=seed)
    return SufficientStats(max_degree=max_degree, rng=seed).update(m, v, y)


@pytest.mark.parametrize("degree,deg_w", [(0, 0), (3, 3), (6, 2), (7, 0), (20, 20)])
def test_tensor_gram_and_moment_operator_equal_the_design_gram(degree, deg_w):
    rng = np.random.default_rng(degree)
    u, w = rng.uniform(-1, 1, 400), rng.uniform(-1, 1, 400)
    M = cheb_rows(u, 2 * degree) @ cheb_rows(w, 2 * deg_w).T
    Phi = np.polynomial.chebyshev.chebvander2d(u, w, [degree, deg_w]).T  # numpy's own: the tensor layout
    np.testing.assert_allclose(tensor_features(u, w, degree, deg_w), Phi, rtol=1e-13, atol=1e-13)
    G = tensor_gram(M, degree, deg_w)
    np.testing.assert_allclose(G, Phi @ Phi.T, rtol=0, atol=1e-11 * np.abs(G).max())
    x = rng.standard_normal((G.shape[0], 3))
    np.testing.assert_allclose(MomentOperator(M, degree, deg_w)(x), G @ x, rtol=0, atol=1e-12 * np.abs(G @ x).max())
    if deg_w == degree:
        ti = TensorBasis(degree).tensor_index
        np.testing.assert_array_equal(assemble_gram(M, TensorBasis(degree)), G[np.ix_(ti, ti)])


def test_tensor_gram_fills_a_float32_buffer():
    M = cheb_rows(np.linspace(-1, 1, 50), 8) @ cheb_rows(np.linspace(-1, 1, 50)[::-1], 8).T
    out = np.empty((25, 25), dtype=np.float32)
    assert tensor_gram(M, 4, 4, out=out) is out
    np.testing.assert_allclose(out, tensor_gram(M, 4, 4), rtol=1e-6)


@pytest.mark.parametrize("alpha", [1e-6, 1e-3, 1.0])
def test_mixed_precision_fold_solves_equal_float64(alpha, monkeypatch):
    """d = 1089 >= _MIXED_MIN_SIZE: float32 factor + CG refinement against the float64 Cholesky of each fold.

    The CG stops at a relative residual of _REFINE_TOL, so the two differ by the residual times the system's
    conditioning: at alpha = 1e-6 by 1.7e-9 relative on these folds (1.1e-10 on the folds of exact-bit keys; float64
    Cholesky refined 5 times against the exact operator moves by 6e-12), by 3e-14 at alpha = 1e-3."""
    st = _stats("toy", 6000, 1 / 16, 32)
    mixed = _FoldErrors(st, list(st.splits)).mean_sse(32, alpha)
    monkeypatch.setattr(fitting, "_MIXED_MIN_SIZE", 10**9)
    double = _FoldErrors(st, list(st.splits)).mean_sse(32, alpha)
    assert mixed == pytest.approx(double, rel=5e-9 if alpha < 1e-4 else 1e-12)


def test_shared_preconditioner_solves_every_fold_and_equals_float64(monkeypatch):
    """At a large degree the fold systems are solved together by CG against one factor of the full-data system:
    no fold is factorised on its own where CG converges, and the CV error is float64 Cholesky's."""
    st = _stats("toy", 40000, 1 / 16, 32)
    own = []
    real = _FoldErrors._fold_sse
    monkeypatch.setattr(_FoldErrors, "_fold_sse", lambda self, *a: own.append(a) or real(self, *a))
    errors = _FoldErrors(st, list(st.splits))
    shared = [errors.mean_sse(32, a) for a in (1.0, 0.1)]
    assert own == [] and errors._shared_failed == -np.inf
    monkeypatch.setattr(fitting, "_MIXED_MIN_SIZE", 10**9)
    double = [_FoldErrors(st, list(st.splits)).mean_sse(32, a) for a in (1.0, 0.1)]
    np.testing.assert_allclose(shared, double, rtol=1e-10)


def test_shared_preconditioner_gives_up_and_folds_are_solved_on_their_own(monkeypatch):
    """Negative control: with one CG step allowed the shared solve cannot converge; every fold is then solved on its
    own (same CV error), and smaller ridge values at that degree do not try the shared factor again."""
    st = _stats("toy", 40000, 1 / 16, 32)
    exact = _FoldErrors(st, list(st.splits)).mean_sse(32, 0.1)
    monkeypatch.setattr(fitting, "_SHARED_STEPS", 1)
    tries = []
    real = _FoldErrors._shared_sse
    monkeypatch.setattr(_FoldErrors, "_shared_sse", lambda self, *a: tries.append(a) or real(self, *a))
    errors = _FoldErrors(st, list(st.splits))
    assert errors.mean_sse(32, 0.1) == pytest.approx(exact, rel=1e-10) and errors._shared_failed == 0.1
    errors.mean_sse(32, 0.01)
    assert tries == [(32, 0.1)]
    errors.mean_sse(32, 1.0)  # a larger ridge may converge: it tries
    assert tries == [(32, 0.1), (32, 1.0)]


def test_mixed_precision_falls_back_when_float32_cannot_factorise(monkeypatch):
    st = _stats("calibrated", 3000, 1 / 16, 32)
    exact = _FoldErrors(st, list(st.splits)).mean_sse(32, 1e-4)
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        return None  # as when spotrf reports a non-positive pivot or CG does not converge

    monkeypatch.setattr(fitting, "_solve_mixed", failing)
    assert _FoldErrors(st, list(st.splits)).mean_sse(32, 1e-4) == pytest.approx(exact, rel=1e-9) and calls


def test_final_fit_mixed_precision_equals_float64(monkeypatch):
    """Above _MIXED_FINAL_MIN_SIZE the final fit solves in mixed precision and builds the float64 factor only when
    asked (lowered here to d = 1089 to keep the test fast)."""
    st = _stats("toy", 6000, 1 / 16, 32)
    monkeypatch.setattr(fitting, "_MIXED_FINAL_MIN_SIZE", 1000)
    fit = select_and_fit(st, degrees=(32,), alphas=(1e-4,), select=False)
    assert fit.factor.factor._factor is None  # not built yet
    monkeypatch.setattr(fitting, "_MIXED_FINAL_MIN_SIZE", 10**9)
    ref = select_and_fit(st, degrees=(32,), alphas=(1e-4,), select=False)
    np.testing.assert_allclose(fit.calmap.beta, ref.calmap.beta, rtol=0, atol=1e-9 * np.abs(ref.calmap.beta).max())
    b = np.random.default_rng(0).standard_normal((fit.calmap.beta.shape[0], 3))
    np.testing.assert_allclose(fit.factor.solve(b), ref.factor.solve(b), rtol=1e-12)  # the bootstrap's refits
    # LAPACK's condition estimate (dpocon, a diagnostic) of one factor varied in its last digit between calls when the
    # factor came from numpy's Cholesky (the solves and every estimate did not: tests/test_bootstrap.py)
    assert fit.factor.rcond == pytest.approx(ref.factor.rcond, rel=1e-12)


@pytest.mark.parametrize("pop,n,h", [("toy", 20000, 1 / 16), ("calibrated", 20000, 1 / 64),
                                     ("overconfident", 50000, 1 / 64)])
def test_greedy_search_chooses_what_the_exhaustive_grid_chooses(pop, n, h):
    st = _stats(pop, n, h, 44)
    degs = degree_schedule(44)
    g = select_and_fit(st, degrees=degs, alphas=DEFAULT_ALPHAS, select=True)
    e = select_and_fit(st, degrees=degs, alphas=DEFAULT_ALPHAS, select=True, search="exhaustive")
    assert (g.calmap.degree, g.calmap.alpha) == (e.calmap.degree, e.calmap.alpha)
    np.testing.assert_array_equal(g.calmap.beta, e.calmap.beta)
    tried = np.isfinite(g.selection.cv_error)
    assert 0 < tried.sum() < tried.size  # it skipped candidates ...
    np.testing.assert_allclose(g.selection.cv_error[tried], e.selection.cv_error[tried], rtol=1e-12)
    assert np.isfinite(e.selection.cv_error).all()  # ... which the grid tried


def test_greedy_search_stops_below_the_top_degree_on_a_smooth_population():
    """The point of the search: on a population a low degree fits, the top degree's folds are never factorised."""
    rng = np.random.default_rng(0)
    n = 20000
    m, v = rng.random(n), rng.random(n) / 4
    y = (rng.random((n, 2)) < np.clip(m + 0.3 * (v - 0.125), 0, 1)[:, None]).astype(float)
    res = socal.ce2(m, v, y, rng=0, debias=False)
    assert res.selection.degrees[0] == 44 and np.isnan(res.selection.cv_error[0]).all()


def test_a_near_tie_goes_to_the_smaller_degree_and_larger_ridge():
    cv = np.array([[1.0, 1.0 + 1e-12], [1.0 + 5e-10, 2.0]])
    assert fitting._choose(cv, (8, 4), (1e-3, 1e-1)) == (4, 1e-3)
    assert fitting._choose(np.array([[1.0, 1.0 + 1e-12], [1.1, 2.0]]), (8, 4), (1e-3, 1e-1)) == (8, 1e-1)


def test_search_is_validated():
    m, v, y = socal.synthetic.toy_population().sample(200, h=1 / 16, rng=0)
    with pytest.raises(ValueError, match="'search' parameter of ce2"):
        socal.ce2(m, v, y, search="fast", debias=False)
    with pytest.raises(ValueError, match="'search' parameter of SecondOrderPlatt"):
        socal.SecondOrderPlatt(search=None).fit(m, v, y)


def test_lepskis_finer_fits_reuse_the_errors_cross_validation_computed(monkeypatch):
    """Lepski's finer candidate at the degree where cross-validation's search stopped walks the ridge from the same
    alpha, so with cross-validation's errors passed as ``known`` it solves nothing and fits what a fresh search
    fits; without them (control) the same walk solves its fold systems again."""
    from socal.degrees import DEFAULT_ALPHAS

    st = _stats("toy", 20_000, 1 / 16, 22)
    degs = tuple(d for d in degree_schedule(22) if d <= 22)
    cv = select_and_fit(st, degrees=degs, alphas=DEFAULT_ALPHAS, select=True)
    above = min(d for d in degs if d > cv.calmap.degree)
    assert not np.isnan(cv.selection.cv_error[degs.index(above)]).all()  # the search walked the degree above
    calls = []
    original = _FoldErrors.mean_sse
    monkeypatch.setattr(_FoldErrors, "mean_sse", lambda self, l, a: calls.append((l, a)) or original(self, l, a))
    kw = dict(degrees=(above,), alphas=DEFAULT_ALPHAS, select=True, start_alpha=cv.calmap.alpha)
    reused = select_and_fit(st, known=cv.selection.errors(), **kw)
    assert calls == []
    fresh = select_and_fit(st, **kw)
    assert len(calls) >= 2  # control: the walk solves again without them
    assert (reused.calmap.degree, reused.calmap.alpha) == (fresh.calmap.degree, fresh.calmap.alpha)
    np.testing.assert_array_equal(reused.calmap.beta, fresh.calmap.beta)
    np.testing.assert_array_equal(reused.selection.cv_error, fresh.selection.cv_error)


@pytest.mark.parametrize("below", [10**6, 0])  # numpy's LAPACK, then scipy's
def test_cholesky_lower_factorises_by_either_library_and_reports_failure(below, monkeypatch):
    """Both routes of cholesky_lower return a Fortran-ordered lower factor of the matrix whose lower triangle they
    are given (the upper one is not read), and report an indefinite matrix as info > 0 with no factor."""
    from socal import chebyshev

    monkeypatch.setattr(chebyshev, "NUMPY_CHOLESKY_BELOW", below)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 40))
    A = X.T @ X
    L, info = chebyshev.cholesky_lower(np.asfortranarray(np.tril(A)))
    assert info == 0 and L.flags.f_contiguous
    np.testing.assert_allclose(np.tril(L) @ np.tril(L).T, A, rtol=1e-12, atol=1e-12 * np.abs(A).max())
    B = A.copy()
    B[5, 5] = -1.0  # indefinite
    L, info = chebyshev.cholesky_lower(np.asfortranarray(B))
    assert L is None and info > 0
