"""Hypothesis properties of the mathematical objects (issue 14): the pointwise sandwich over feasible moments, the
sech kernel's CDF/PPF pair and monotonicity, the unbiasedness of the targets (exact expectation over the binomial),
the fast Chebyshev moments against a direct evaluation, the Gram assembly against the design matrix, and exact
truth against Monte Carlo.

Each property runs ``max_examples`` generated examples (derandomized: the same examples every run); the counts and
what they found are in docs/audit.md "Property-based tests".
"""

import math

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from socal import SechKernel, synthetic, truth  # noqa: E402
from socal.chebyshev import (MomentOperator, TensorBasis, assemble_gram, cheb_rows, grouped_moments,  # noqa: E402
                             tensor_gram)
from socal.snapshots import targets  # noqa: E402
from socal.verify.transport import snapshot_dists, w1_lp  # noqa: E402

FAST = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
SLOWER = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

unit = st.floats(0.0, 1.0)


@st.composite
def feasible(draw):
    """A moment pair (x, y) with x^2 <= y <= x (a distribution on [0, 1] has these first two moments)."""
    x = draw(unit)
    t = draw(unit)
    return x, x * x + t * (x - x * x)


@FAST
@given(truth_m=feasible(), pred=feasible())
def test_pointwise_sandwich(truth_m, pred):
    """Lemma 'Pointwise sandwich': delta1 + delta2 <= (3/2) W1 <= 3 (delta1 + delta2), W1 by exact optimal transport
    of the 2-snapshot laws on {0, 1/2, 1}, and W1 = |Delta_0| + |Delta_1|."""
    (mu1, mu2), (m, v) = truth_m, pred
    p, q = snapshot_dists(mu1, mu2, m, v)
    # on three points of a line, W1 is the integral of |F_p - F_q| (two gaps of 1/2, in the metric of Delta Y: 1)
    w1 = abs(p[0] - q[0]) + abs((p[0] + p[1]) - (q[0] + q[1]))
    assert w1 == pytest.approx(abs(p[0] - q[0]) + abs(p[2] - q[2]), abs=1e-12)  # the lemma's formula
    # the audit's LP agrees to the solver's tolerance (HiGHS: 1e-7 absolute; found by this test, see docs/audit.md)
    assert w1_lp(p, q) == pytest.approx(w1, abs=1e-6)
    delta = abs(mu1 - m) + abs(mu2 - v)
    assert delta <= 1.5 * w1 + 1e-9
    assert 1.5 * w1 <= 3 * delta + 1e-9
    if w1 > 1e-9:
        ratio = delta / w1
        event("ratio at the upper end (3/2)" if ratio > 1.5 - 1e-6 else
              "ratio at the lower end (1/2)" if ratio < 0.5 + 1e-6 else "ratio inside")


@FAST
@given(h=st.floats(1 / 1024, 10.0), s=unit, q=st.floats(1e-12, 1 - 1e-12), q2=st.floats(1e-12, 1 - 1e-12),
       lo_hi=st.sampled_from([(0.0, 1.0), (0.0, 0.25)]))
def test_kernel_cdf_ppf_inverse_and_monotone(h, s, q, q2, lo_hi):
    lo, hi = lo_hi
    s = lo + s * (hi - lo)
    k = SechKernel(h, lo, hi)
    t = float(k.ppf(q, s))
    assert lo <= t <= hi
    back = float(k.cdf(t, s))
    # the inverse pair is exact to round-off in t; in probability that is pdf(t) * eps(t)
    assert abs(back - q) <= 1e-9 + 1e-9 * float(k.pdf(t, s)) * max(1.0, abs(t)), (h, s, q, t, back)
    t2 = float(k.ppf(q2, s))
    assert (t <= t2) if q <= q2 else (t >= t2)  # the quantile function is monotone
    a, b = sorted((t, t2))
    assert float(k.cdf(a, s)) <= float(k.cdf(b, s)) + 1e-15
    assert float(k.cdf(lo, s)) == 0.0 and float(k.cdf(hi, s)) == pytest.approx(1.0, abs=1e-15)
    assert float(k.pdf(t, s)) >= 0.0


@FAST
@given(k=st.integers(2, 40), f=unit)
def test_targets_unbiased_exactly(k, f):
    """E[a/k] = f and E[a(a-1)/(k(k-1))] = f^2 for a ~ Binomial(k, f): the exact expectation over the binomial."""
    from fractions import Fraction

    F = Fraction(f)  # exact rational arithmetic: scipy's binom.pmf overflows at f ~ 1e-307 (found by this test)
    w = [math.comb(k, a) * F**a * (1 - F) ** (k - a) for a in range(k + 1)]
    assert sum(w) == 1
    z1, z2 = targets(np.arange(k + 1, dtype=float), np.full(k + 1, float(k)))
    e1 = sum(wa * Fraction(z) for wa, z in zip(w, z1.tolist()))
    e2 = sum(wa * Fraction(z) for wa, z in zip(w, z2.tolist()))
    # exact up to the rounding of the float targets themselves (relative 2^-52 each)
    assert abs(e1 - F) <= 4 * 2.0**-52 * F + Fraction(1, 10**300)
    assert abs(e2 - F * F) <= 8 * 2.0**-52 * F * F + Fraction(1, 10**300)


def _points(n, seed, edge):
    """(rng, u, w): n points in [-1, 1]^2; with ``edge`` half of each axis at an end, where recurrences are exposed."""
    rng = np.random.default_rng(seed)
    u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    if edge:
        u[: n // 2], w[-(n // 2):] = 1.0, -1.0
    return rng, u, w


@FAST
@given(n=st.integers(1, 300), du=st.integers(0, 12), dw=st.integers(0, 12), groups=st.integers(1, 5),
       seed=st.integers(0, 2**32 - 1), edge=st.booleans())
def test_fast_chebyshev_moments_match_direct_evaluation(n, du, dw, groups, seed, edge):
    rng, u, w = _points(n, seed, edge)
    g = rng.integers(0, groups, n)
    M = grouped_moments(u, w, g, groups, du, dw, chunk=7)
    Tu = np.polynomial.chebyshev.chebvander(u, du)  # numpy's own evaluation
    Tw = np.polynomial.chebyshev.chebvander(w, dw)
    for j in range(groups):
        ref = Tu[g == j].T @ Tw[g == j]
        np.testing.assert_allclose(M[j], ref, rtol=1e-12, atol=1e-10 * max(1, (g == j).sum()))
    np.testing.assert_allclose(cheb_rows(u, du), Tu.T, rtol=1e-13, atol=1e-13)


@FAST
@given(n=st.integers(1, 200), degree=st.integers(0, 8), seed=st.integers(0, 2**32 - 1))
def test_gram_from_moments_equals_design_gram(n, degree, seed):
    """The Gram assembled from the moments up to degree 2l (product formula) equals X^T X of the tensor design."""
    rng = np.random.default_rng(seed)
    u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    basis = TensorBasis(degree)
    M = grouped_moments(u, w, np.zeros(n, int), 1, 2 * degree, 2 * degree)[0]
    G = assemble_gram(M, basis)
    Tu, Tw = cheb_rows(u, degree), cheb_rows(w, degree)
    X = np.stack([Tu[p] * Tw[q] for p, q in basis.pairs], axis=1)
    np.testing.assert_allclose(G, X.T @ X, rtol=1e-10, atol=1e-9 * n)


@FAST
@given(n=st.integers(1, 200), du=st.integers(0, 10), dw=st.integers(0, 10), cols=st.integers(1, 3),
       seed=st.integers(0, 2**32 - 1), edge=st.booleans())
def test_tensor_gram_and_fft_operator_equal_the_design(n, du, dw, cols, seed, edge):
    """The strided Gram (any degree per axis) and its FFT matrix-vector product against the tensor design matrix."""
    rng = np.random.default_rng(seed)
    u, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    if edge:
        u[: n // 2], w[-(n // 2):] = 1.0, -1.0
    M = cheb_rows(u, 2 * du) @ cheb_rows(w, 2 * dw).T
    X = np.polynomial.chebyshev.chebvander2d(u, w, [du, dw])  # numpy's own, in the tensor layout
    G = tensor_gram(M, du, dw)
    np.testing.assert_allclose(G, X.T @ X, rtol=0, atol=1e-11 * n)
    x = rng.standard_normal((G.shape[0], cols))
    np.testing.assert_allclose(MomentOperator(M, du, dw)(x), X.T @ (X @ x), rtol=0,
                               atol=1e-11 * n * np.abs(x).sum(axis=0).max())


@st.composite
def populations(draw):
    """A small DiscretePopulation: 1-5 raw atoms in the feasible region, 1-3 values of f* each."""
    J = draw(st.integers(1, 5))
    means = np.array([draw(st.floats(0.02, 0.98)) for _ in range(J)])
    vars_ = np.array([draw(unit) * m * (1 - m) for m in means])
    weights = np.array([draw(st.floats(0.05, 1.0)) for _ in range(J)])
    R = draw(st.integers(1, 3))
    fstar = np.array([[draw(unit) for _ in range(R)] for _ in range(J)])
    fprobs = np.array([[draw(st.floats(0.05, 1.0)) for _ in range(R)] for _ in range(J)])
    return synthetic.DiscretePopulation(means=means, vars=vars_, weights=weights / weights.sum(), fstar=fstar,
                                        fprobs=fprobs / fprobs.sum(axis=1, keepdims=True))


@SLOWER
@given(pop=populations(), h=st.sampled_from([1 / 4, 1 / 16, 1 / 64]), seed=st.integers(0, 2**32 - 1))
def test_exact_truth_against_monte_carlo(pop, h, seed):
    """CE2^pert and CE1^pert by quadrature (socal.truth) against the Monte Carlo mean of the exact deviations at
    sampled perturbed scores (the exact calibration functions evaluated there), within 5 standard errors."""
    n = 20_000
    m, v, _ = pop.sample(n, h=h, rng=seed)
    e1, e2 = pop.calibration_functions(h, m, v)
    dev2 = np.abs(e1 - m) + np.abs(e2 - m * m - v)
    exact2 = pop.ce2(h)
    se2 = dev2.std(ddof=1) / math.sqrt(n)
    assert abs(dev2.mean() - exact2.value) <= 5 * se2 + 10 * exact2.error + 1e-6, (dev2.mean(), exact2, se2)
    # first order: eta1 as a function of the perturbed mean alone
    t1, w1 = truth._gl_panels(0.0, 1.0, 64)
    e1_1d_nodes = _eta1_1d(pop, h, t1)
    e1_1d = np.interp(m, t1, e1_1d_nodes)
    dev1 = np.abs(e1_1d - m)
    exact1 = pop.ce1(h)
    se1 = dev1.std(ddof=1) / math.sqrt(n)
    assert abs(dev1.mean() - exact1.value) <= 5 * se1 + 10 * exact1.error + 2e-4, (dev1.mean(), exact1, se1)
    event(f"h = {h}")


def _eta1_1d(pop, h, t):
    e1, _ = pop.eta_orig
    k = SechKernel(h, 0.0, 1.0).pdf(t[None, :], pop.means[:, None]) * pop.weights[:, None]
    return (e1 @ k) / k.sum(axis=0)
