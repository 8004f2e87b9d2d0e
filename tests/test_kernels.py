"""The truncated sech kernel against a 50-digit mpmath closed form, and the sampler against its CDF by KS tests."""

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from socal import SechKernel, perturb, perturb_mean
from socal.kernels import gd_diff

from .conftest import family_alpha, rel_tol
import socal

H_GRID = [1.0, 0.25, 1 / 16, 1 / 64, 1 / 256, 1 / 1024]


def _ref_cdf(t, s, h, lo, hi, upper=False):
    """Reference: CDF (or SF, ``upper``) as a ratio of Gudermannian differences in 600-digit arithmetic (enough
    that the differences of numbers near +-pi/2 keep 50 digits even at h = 1/1024)."""
    with mp.workdps(600):
        gd = lambda x: 2 * mp.atan(mp.exp(x)) - mp.pi / 2  # noqa: E731 - antiderivative of sech
        t, s, h, lo, hi = (mp.mpf(x) for x in (t, s, h, lo, hi))
        num = gd((hi - s) / h) - gd((t - s) / h) if upper else gd((t - s) / h) - gd((lo - s) / h)
        return num / (gd((hi - s) / h) - gd((lo - s) / h))


def _ref_pdf(t, s, h, lo, hi):
    with mp.workdps(50):
        t, s, h, lo, hi = (mp.mpf(x) for x in (t, s, h, lo, hi))
        z = mp.quad(lambda u: mp.sech((u - s) / h), [lo, s, hi] if lo < s < hi else [lo, hi])
        return mp.sech((t - s) / h) / z


@pytest.mark.parametrize("h", H_GRID)
@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (0.0, 0.25)])
def test_cdf_sf_match_mpmath_in_both_tails(h, lo, hi):
    k = SechKernel(h, lo, hi)
    for s in (lo, lo + 0.3 * (hi - lo), hi):
        for frac in (0.0, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0):
            t = lo + frac * (hi - lo)
            ref, ref_sf = _ref_cdf(t, s, h, lo, hi), _ref_cdf(t, s, h, lo, hi, upper=True)
            c, sf = float(k.cdf(t, s)), float(k.sf(t, s))
            if ref > 1e-300:
                assert abs(c - float(ref)) <= 1e-11 * float(ref), (h, s, t)
            if ref_sf > 1e-300:
                assert abs(sf - float(ref_sf)) <= 1e-11 * float(ref_sf), (h, s, t)


@pytest.mark.parametrize("h", [1.0, 1 / 16, 1 / 64])
def test_pdf_and_normaliser_match_quadrature(h):
    k = SechKernel(h, 0.0, 0.25)
    for s in (0.0, 0.1, 0.25):
        for t in (0.0, 0.05, 0.2, 0.25):
            assert float(k.pdf(t, s)) == pytest.approx(float(_ref_pdf(t, s, h, 0.0, 0.25)), rel=1e-10)


def test_pdf_integrates_to_one_and_zero_outside():
    k = SechKernel(1 / 64)
    t = np.linspace(0, 1, 200001)
    for s in (0.0, 0.4, 1.0):
        assert np.trapezoid(k.pdf(t, s), t) == pytest.approx(1.0, abs=1e-6)
    assert k.pdf(-0.1, 0.5) == 0.0 and k.pdf(1.1, 0.5) == 0.0


@pytest.mark.parametrize("h", H_GRID)
def test_ppf_inverts_cdf_with_relative_accuracy_in_tails(h):
    k = SechKernel(h)
    for s in (0.0, 0.5, 1.0):
        t = np.linspace(0, 1, 41)
        q = k.cdf(t, s)
        ok = (q > 1e-280) & (q < 1 - 1e-12)
        back = k.ppf(q[ok], s)
        assert np.allclose(back, t[ok], atol=1e-9 + 1e-6 * h), (h, s)


def test_no_warnings_or_nans_at_extreme_bandwidth():
    k = SechKernel(1 / 1024)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is benign
        vals = [k.cdf([0, 0.5, 1], 1.0), k.sf([0, 0.5, 1], 0.0), k.pdf([0, 1], 0.0), k.ppf([0, 0.5, 1], 0.0)]
    assert all(np.all(np.isfinite(v)) for v in vals)


def test_broadcasting():
    k = SechKernel(0.1)
    out = k.cdf(np.linspace(0, 1, 5)[:, None], np.array([0.0, 0.5, 1.0])[None, :])
    assert out.shape == (5, 3)
    assert k.rvs(np.zeros((2, 3)), rng=0).shape == (2, 3)


def test_gd_diff_matches_naive_where_naive_is_safe():
    x, y = np.array([-3.0, -1.0, 0.5]), np.array([-2.0, 2.0, 4.0])
    gd = lambda v: 2 * np.arctan(np.tanh(v / 2))  # noqa: E731
    np.testing.assert_allclose(gd_diff(x, y), gd(y) - gd(x), rtol=rel_tol())


KS_CASES = [(h, s, lo, hi) for h in (1 / 4, 1 / 16, 1 / 64, 1 / 256) for (lo, hi) in ((0.0, 1.0), (0.0, 0.25))
            for s in (lo, (lo + hi) / 3, hi)]


@pytest.mark.parametrize("seed", [0, 1])
def test_sampler_passes_ks_against_closed_form_cdf(seed):
    """Every case at family false-alarm rate 1e-3 (Bonferroni over cases and seeds)."""
    rng = np.random.default_rng(seed)
    alpha = family_alpha(2 * len(KS_CASES))
    for h, s, lo, hi in KS_CASES:
        k = SechKernel(h, lo, hi)
        x = k.rvs(np.full(4000, s), rng=rng)
        p = stats.kstest(x, lambda t: k.cdf(t, s)).pvalue
        assert p > alpha, (h, s, lo, hi, p)


def test_ks_negative_control_detects_wrong_bandwidth():
    """The same KS check rejects a sampler drawn with h doubled (so the positive test is not vacuous)."""
    rng = np.random.default_rng(0)
    for h, s in ((1 / 16, 0.5), (1 / 64, 0.0)):
        wrong = SechKernel(2 * h).rvs(np.full(4000, s), rng=rng)
        p = stats.kstest(wrong, lambda t: SechKernel(h).cdf(t, s)).pvalue
        assert p < family_alpha(2 * len(KS_CASES))


def test_perturb_stays_in_rectangle_and_is_seeded():
    m = np.array([0.0, 0.5, 1.0, 0.3])
    v = np.array([0.0, 0.25, 0.0, 0.21])
    a = perturb(m, v, h=1 / 16, rng=3)
    b = perturb(m, v, h=1 / 16, rng=3)
    np.testing.assert_array_equal(a[0], b[0])
    assert np.all((a[0] >= 0) & (a[0] <= 1) & (a[1] >= 0) & (a[1] <= 0.25))
    assert perturb_mean(m, h=0.1, rng=0).shape == (4,)


@pytest.mark.parametrize("bad,match", [
    (dict(mean=[0.5, 1.2], var=[0, 0]), "'mean'.*in \\[0, 1\\]"),
    (dict(mean=[0.5, 0.9], var=[0.1, 0.2]), "'var'.*mean\\*\\(1-mean\\)"),
    (dict(mean=[0.5, np.nan], var=[0.1, 0.0]), "'mean'.*finite"),
    (dict(mean=[0.5, 0.5], var=[0.1]), "'var'.*same shape"),
])
def test_perturb_rejects_bad_scores(bad, match):
    with pytest.raises(ValueError, match=match):
        perturb(bad["mean"], bad["var"], h=0.1)


@pytest.mark.parametrize("h", [0.0, -1.0, float("nan"), "0.1"])
def test_bad_bandwidth(h):
    with pytest.raises(ValueError, match="'h' parameter"):
        SechKernel(h)


def _toy_raw(n):
    """n raw items of the toy population (6 distinct raw scores): (mean, var, f*, labels)."""
    from socal import synthetic

    return synthetic.toy_population().sample_raw(n, rng=0)


def _multiset(*cols):
    """The rows of ``cols`` as a sorted array (a multiset of rows)."""
    x = np.column_stack(cols)
    return x[np.lexsort(x.T[::-1])]


def test_perturb_gives_the_same_draws_to_the_same_rows_in_any_order():
    """A row's perturbation is keyed by its content (and ``key``), so a permutation of the rows permutes the
    perturbed scores with them: the same multiset of (score, label, perturbed score) rows.  Rows of one content get
    independent draws (a predictor with 6 distinct scores here).  Control: the positional draws of the simulations'
    stream version are other draws for the same rows in another order."""
    from socal.perturb import perturb_from_stream

    m, v, _, y = _toy_raw(3000)
    p = np.random.default_rng(4).permutation(m.size)
    a = perturb(m, v, h=1 / 16, rng=3, key=y)
    b = perturb(m[p], v[p], h=1 / 16, rng=3, key=y[p])
    np.testing.assert_array_equal(_multiset(m, v, y, *a), _multiset(m[p], v[p], y[p], *b))
    assert np.unique(a[0]).size == m.size  # 6 distinct raw scores, 3000 distinct draws
    am, bm = perturb_mean(m, h=0.1, rng=1, key=y), perturb_mean(m[p], h=0.1, rng=1, key=y[p])
    np.testing.assert_array_equal(_multiset(m, y, am), _multiset(m[p], y[p], bm))
    # without the labels in the key, equal scores with other labels may trade draws: the scores' multiset alone holds
    c, d = perturb(m, v, h=1 / 16, rng=3), perturb(m[p], v[p], h=1 / 16, rng=3)
    np.testing.assert_array_equal(_multiset(m, v, *c), _multiset(m[p], v[p], *d))
    s, t = perturb_from_stream(m, v, h=1 / 16, rng=3), perturb_from_stream(m[p], v[p], h=1 / 16, rng=3)
    assert not np.array_equal(_multiset(m, v, *s), _multiset(m[p], v[p], *t))


def test_rows_of_one_content_get_independent_draws_from_the_kernel(monkeypatch):
    """4,000 copies of one score: their keyed draws must pass a KS test against the kernel's CDF.  Control: with
    the occurrence left out of the keys (every copy the same key) they are one draw repeated, which fails."""
    import importlib

    sp = importlib.import_module("socal.perturb")  # the module (the package's attribute is the function)
    m, v = np.full(4000, 0.3), np.full(4000, 0.02)
    mt, vt = perturb(m, v, h=1 / 16, rng=0)
    assert stats.kstest(mt, lambda t: SechKernel(1 / 16).cdf(t, 0.3)).pvalue > family_alpha(2)
    assert stats.kstest(vt, lambda t: SechKernel(1 / 16, 0.0, 0.25).cdf(t, 0.02)).pvalue > family_alpha(2)
    monkeypatch.setattr(sp, "distinct_keys", lambda keys, exact=None: np.asarray(keys, dtype=np.uint64))
    bad, _ = perturb(m, v, h=1 / 16, rng=0)
    assert np.unique(bad).size == 1
    assert stats.kstest(bad, lambda t: SechKernel(1 / 16).cdf(t, 0.3)).pvalue < 1e-10


def test_perturb_key_is_checked():
    m, v = np.array([0.2, 0.4]), np.array([0.01, 0.02])
    with pytest.raises(ValueError, match="'key'.*one row per score"):
        perturb(m, v, h=0.1, rng=0, key=np.zeros(3))
    with pytest.raises(ValueError, match="'key'.*finite"):
        perturb(m, v, h=0.1, rng=0, key=np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="'key'"):
        perturb_mean(m, h=0.1, rng=0, key=np.zeros((2, 2, 2)))


def test_density_on_a_grid_of_centres_and_points_is_the_density_of_each_pair():
    """pdf and logpdf take the normaliser per centre before broadcasting (it was computed per grid cell): an
    (atoms, points) grid must give, cell by cell, the value of that single pair."""
    rng = np.random.default_rng(3)
    k = SechKernel(1 / 64, 0.0, 0.25)
    t, s = rng.uniform(0, 0.25, 7), rng.uniform(0, 0.25, 5)
    grid, loggrid = k.pdf(t[None, :], s[:, None]), k.logpdf(t[None, :], s[:, None])
    single = np.array([[k.pdf(ti, sj) for ti in t] for sj in s])
    assert grid.shape == (5, 7) and np.array_equal(grid, single)
    np.testing.assert_allclose(loggrid, np.log(single), rtol=1e-12)
    assert np.array_equal(k.pdf(t, s[0]), single[0])  # a scalar centre against many points


def test_sech_kernel_centre_outside_support():
    k = socal.SechKernel(1 / 1024)
    for fn in (lambda: k.ppf(0.5, 2.0), lambda: k.pdf(0.5, -0.1), lambda: k.cdf(0.5, 1.5), lambda: k.sf(0.2, 9.0),
               lambda: k.normalizer(np.nan), lambda: k.rvs(1.2, rng=0)):
        with pytest.raises(ValueError, match="'s' parameter of SechKernel"):
            fn()
    with pytest.raises(ValueError, match="'t' parameter of SechKernel.pdf must be finite"):
        k.pdf(np.nan, 0.5)
    assert k.ppf(0.5, 1.0) <= 1.0 and k.cdf(1.0, 1.0) == 1.0


def test_kernel_draws_check_their_shape():
    """SechKernel.rvs passed size on to numpy: -1 was numpy's "negative dimensions are not allowed", 2.5 a
    TypeError."""
    k = socal.SechKernel(0.1)
    for bad in (-1, 2.5, (2, -1), True, "3"):
        with pytest.raises(ValueError, match="'size' parameter of SechKernel.rvs must be an int >= 0"):
            k.rvs(0.5, rng=0, size=bad)
    for size, shape in ((3, (3,)), ((2, 3), (2, 3)), ([2, 3], (2, 3)), (0, (0,)), (np.int64(4), (4,))):
        assert k.rvs(0.5, rng=0, size=size).shape == shape
