"""The bootstrap's interval, bound and bias corrections (socal.bootstrap): the bracket rule, the shrunken worlds,
the fused passes, rows of one content, and the options it refuses."""

import functools
import warnings

import numpy as np
import pytest

import socal
from socal import bootstrap, refits, world
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options
from tests._bootstrap_helpers import _determinism_data, _headline, _world_pmf


def test_estimates_are_clipped_to_the_functionals_exact_range():
    """socal clips the estimate, interval and bound to CE_RANGE: 1 for CE1, and for CE2 the sup of
    |eta1 - m| + |eta2 - (m^2 + var)| over [0, 1]-valued eta and perturbed scores, computed exactly by the audit
    (9/4: var may reach 1/4 at m = 1, so m^2 + var reaches 5/4).  It once clipped CE2 at 2."""
    from fractions import Fraction

    from socal.deviations import CE_RANGE
    from socal.verify.claims_steps import CLIPPED, _g_range

    assert Fraction(CE_RANGE[2]) == _g_range(CLIPPED)[0]
    assert CE_RANGE[1] == 1.0
    # a population at the corner: m = 1, var = 1/4 reported, labels all 0 (eta = 0): CE2 near 1 + 5/4
    n = 4000
    m, v = np.ones(n), np.full(n, 0.25)
    y = np.zeros((n, 2))
    res = socal.ce2(m, v, y, h=1 / 16, degree=2, ridge=1e-6, ci=0.9, upper=0.95, rng=0)
    assert res.plugin > 2.0
    assert res.estimate <= CE_RANGE[2] and res.ci.high <= CE_RANGE[2] and res.upper.value <= CE_RANGE[2]
    assert res.ci.high > 2.0


def _spy_candidates(monkeypatch):
    """A dict whose 'cands' becomes the candidates Lepski's rule compared in the next estimator call."""
    import socal.pipeline

    seen = {}
    choose = socal.pipeline.choose_degree

    def spy(cands):
        seen["cands"] = cands
        return choose(cands)

    monkeypatch.setattr(socal.pipeline, "choose_degree", spy)
    return seen


@pytest.mark.parametrize("lepski", [False, True])
def test_the_interval_and_bound_are_the_bracket_rule(monkeypatch, lepski):
    """ci and upper are the bracket interval of socal.bootstrap.bootstrap, recomputed here from each candidate's
    bootstrap (its plug-in, the two corrections and the deltas): from est - b_hi - q_95 to est - b_lo - q_05, the
    bound est - b_lo - q_05, each clipped to [estimate, range], and with finer candidates the union over them.  A
    widened rule (the former default, one SD plus half the gap) does not reproduce them."""
    from socal.deviations import CE_RANGE

    seen = _spy_candidates(monkeypatch)
    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(1000, h=1 / 64, rng=3)
    kw = {} if lepski else dict(degree=4, ridge=1e-3)
    res = socal.ce2(m, v, y, h=1 / 64, ci=0.9, upper=0.95, n_boot=100, rng=1, **kw)
    cands = seen["cands"]
    assert (len(cands) > 1) == lepski

    def rule(c, widen):
        one = c.boot.deltas.mean()
        b_lo, b_hi = sorted((one, 2 * c.boot.bias - one))
        noise = c.boot.deltas - one
        q05, q95 = np.quantile(noise, [0.05, 0.95])
        m_ = widen * (noise.std() + (b_hi - b_lo) / 2)
        deb = c.boot.debiased
        top = CE_RANGE[2]
        return (min(max(c.plugin - b_hi - q95 - m_, 0.0), deb), min(max(c.plugin - b_lo - q05 + m_, deb), top),
                min(max(c.plugin - b_lo - q05 + m_, deb), top))

    for widen, same in ((0.0, True), (1.0, False)):
        ends = [rule(c, widen) for c in cands]
        got = (min(e[0] for e in ends), max(e[1] for e in ends), max(e[2] for e in ends))
        assert np.allclose(got, (res.ci.low, res.ci.high, res.upper.value), rtol=0, atol=1e-12) == same


def test_bootstrap_result_carries_the_shrunken_worlds_curve(monkeypatch):
    """Each candidate's BootstrapResult holds the shrunken worlds' truth and mean plug-in per threshold: the truth
    falls to 0 as the threshold grows (soft-thresholding shrinks every |g|), and the shrunken-world correction the
    estimate used is that curve read at the observed plug-in."""
    from socal.bootstrap import shrunk_estimate
    from socal.refits import THRESHOLDS

    got = _spy_candidates(monkeypatch)
    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    socal.ce2(m, v, y, h=1 / 16, ci=0.9, n_boot=40)
    for c in got["cands"]:
        truth, plug = c.boot.shrunk_truth, c.boot.shrunk_plugin
        assert truth.shape == plug.shape == (len(THRESHOLDS),)
        assert truth[-1] == 0.0 and np.all(np.diff(truth) <= 1e-12) and truth[0] > 0
        assert plug[-1] > 0  # the pure-noise world's plug-in: the mean |noise| of the refits
        one_step = float(c.boot.deltas.mean())
        shrunk_bias = c.plugin - shrunk_estimate(c.plugin, truth, plug)
        assert c.boot.bias == pytest.approx(0.5 * (one_step + shrunk_bias), rel=1e-12)


def _world_apart(calmap, m, v, k, world_sums):
    """The world's sums in a pass of their own, as the former WorldPass computed them (the map evaluated again)."""
    raw = calmap.raw(m, v)
    return world_sums(calmap, raw, socal.fitting.feasible(raw.copy(), project=True), m, v, k)


def test_the_fused_pass_is_the_deviation_and_world_passes():
    """DeviationWorldPass evaluates the map once per row and gives what the two passes give apart, bit for bit, in
    2-D and 1-D, merged over chunks; a map with other coefficients gives other sums (control)."""
    from socal import pipeline
    from socal.world import DeviationWorldPass, world_sums
    from socal.deviations import DeviationPass

    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(3000, h=1 / 16, rng=4)
    a, k = y.sum(axis=1).astype(float), np.full(m.size, 2.0)
    maps = {2: socal.calibration_functions(m, v, y, degree=5, ridge=1e-3).map}
    opts = pipeline.estimator_settings("ce1", ndim=1, h=None, degree=6, ridge=1e-3, folds=5, max_degree=200, rng=None,
                                        n_boot=200)
    maps[1] = pipeline.fit_from(pipeline.data_source("ce1", 1, m, None, y, None, None)[0], None, opts, 1,
                                "ce1")[0].calmap  # a first-order fit
    for ndim, fit in maps.items():
        vv = v if ndim == 2 else None
        parts = [DeviationWorldPass(fit)(i, m[c], vv if vv is None else vv[c], a[c], k[c])
                 for i, c in enumerate(np.array_split(np.arange(m.size), 3))]
        both = parts[0].merge(parts[1]).merge(parts[2])
        dev = DeviationPass(fit)(0, m, vv, a, k)
        world = _world_apart(fit, m, vv, k, world_sums)
        np.testing.assert_allclose(both.dev.sums, dev.sums, rtol=1e-13)
        for merged, apart in zip(both.world.arrays, world.arrays):
            np.testing.assert_allclose(merged, apart, rtol=1e-12, atol=1e-12)
        whole = DeviationWorldPass(fit)(0, m, vv, a, k)  # one chunk: the very same numbers
        assert np.array_equal(whole.dev.sums, dev.sums)
        assert all(np.array_equal(once, apart) for once, apart in zip(whole.world.arrays, world.arrays))
        other = socal.fitting.CalibrationMap(fit.degree, fit.ndim, fit.beta * 0.9, fit.alpha)
        changed = DeviationWorldPass(other)(0, m, vv, a, k).world.arrays
        assert not np.allclose(changed[1], world.arrays[1]) and not np.allclose(changed[3], world.arrays[3])


def test_same_numbers_at_a_degree_where_the_draws_rounding_would_show(monkeypatch):
    """At n = 60,000 and degree 32 the bootstrap world's moments differ between chunkings in their last bits (float
    summation order).  The draws are computed in float64, so the estimate, interval and bound still agree to 1e-12.
    Control: the Gram blocks rounded to float32 before the factorisation (as the draws once were) round a few of
    their 1.2 million entries the other way, and the interval moves by far more than 1e-12."""
    bs = world
    m, v, y = socal.synthetic.validation_zoo()["toy"].population.sample(60_000, h=1 / 16, rng=2)
    kw = dict(degree=32, ridge=1e-3, ci=0.9, upper=0.95, n_boot=60)
    cuts = np.array_split(np.random.default_rng(3).permutation(m.size), 7)

    def both():
        whole = _headline(socal.ce2(m, v, y, **kw))
        chunked = _headline(socal.ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw))
        return whole, chunked

    whole, chunked = both()
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-14)
    try:
        import finufft  # noqa: F401
    except ImportError:
        pytest.skip("the float32 control was measured with finufft's moments (the 'fast' extra); without it the "
                    "numpy moments' chunkings agree closer than the control's 1e-11 (the main check above ran)")
    real = bs.tensor_gram

    def rounded(*args, **kw):  # the Gram as float32 holds it, written back in place
        gram = real(*args, **kw)
        gram[...] = gram.astype(np.float32)
        return gram

    monkeypatch.setattr(bs, "tensor_gram", rounded)
    whole32, chunked32 = both()
    assert np.abs(chunked32 - whole32).max() > 1e-11  # 8e-11 here, against 2.5e-14 in float64


def test_draws_of_a_world_without_label_noise_are_its_mean():
    """Rows whose target covariance is 0 (a world whose truth is 0 or 1 everywhere): every coordinate has variance 0,
    gets a unit diagonal for the factorisation and no noise, so every replicate's right-hand side is the world's
    mean; with label noise of one covariance on every row (control) the replicates differ."""
    from socal.world import gaussian_right_hand_sides
    from socal.chebyshev import TensorBasis, cheb_rows

    basis = TensorBasis(4, 2)
    u, w = np.linspace(-0.9, 0.9, 30), np.linspace(0.8, -0.7, 30)
    W = np.stack([cheb_rows(u, 4) @ cheb_rows(w, 4).T] * 2)  # the mean right-hand sides of the truth 1
    quiet = gaussian_right_hand_sides(W, np.zeros((3, 9, 9)), basis, 40, seed=1)
    assert np.all(np.isfinite(quiet))
    np.testing.assert_array_equal(quiet, np.broadcast_to(quiet[:, :1, :], quiet.shape))
    S = np.stack([c * (cheb_rows(u, 8) @ cheb_rows(w, 8).T) for c in (0.125, 0.1, 0.2)])
    noisy = gaussian_right_hand_sides(W, S, basis, 40, seed=1)
    assert np.ptp(noisy, axis=1).min() > 0


def test_statistics_of_other_rows_than_the_chunks_are_refused():
    """The bootstrap world's mean right-hand sides come from the statistics' moments (G beta): statistics built from
    other rows than ``chunks`` would give a wrong world, so the call stops with a ValueError naming both counts
    (the same rows, in other chunks, are accepted: control)."""
    from socal.sufficient import SufficientStats

    m, v, y = _determinism_data()
    half = m.size // 2
    chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in (slice(None, half), slice(half, None))]
    kw = dict(degree=4, ridge=1e-3, ci=0.9, n_boot=40)
    same = SufficientStats(max_degree=4).update(m, v, y)
    assert socal.ce2(same, chunks=chunks, **kw).ci is not None
    other = SufficientStats(max_degree=4).update(m[:half], v[:half], y[:half])
    with pytest.raises(ValueError, match="hold 1500 rows and 'chunks' gave 3000"):  # counted before the world
        socal.ce2(other, chunks=chunks, **kw)
    shifted = SufficientStats(max_degree=4).update(np.clip(m + 0.01, 0, 1), v, y)  # as many rows, other scores
    with pytest.raises(ValueError, match="do not hold the rows"):
        socal.ce2(shifted, chunks=chunks, **kw)


def test_first_order_target_variance_has_the_spread_of_f_star():
    """In 1-D, Var z1 of the world with E f*^2 = p2 is the exact variance of a/k under the world's law of f*
    (enumeration, k = 1..6); without p2 it is the Binomial one, p1 (1 - p1)/k, which misses (1 - 1/k) Var f*
    (control)."""
    from socal.snapshots import target_covariances

    for p1, p2 in [(0.3, 0.3**2 + 0.01), (0.5, 0.3), (0.2, 0.2**2), (0.7, 0.7)]:
        var = p2 - p1 * p1
        for k in range(1, 7):
            a = np.arange(k + 1)
            pmf = _world_pmf(p1, p2, k)
            exact = pmf @ (a / k) ** 2 - (pmf @ (a / k)) ** 2
            got = target_covariances(np.array([p1]), np.array([p2]), np.array([float(k)]), 1)[0, 0]
            assert got == pytest.approx(exact, abs=1e-12), (p1, p2, k)
            binomial = target_covariances(np.array([p1]), None, np.array([float(k)]), 1)[0, 0]
            assert binomial == pytest.approx(p1 * (1 - p1) / k, abs=1e-15)
            assert exact - binomial == pytest.approx((1 - 1 / k) * var, abs=1e-12)
            if k > 1 and var > 1e-12:
                assert exact - binomial > 4e-3  # control: the world without the spread misses it


def test_the_first_order_bootstrap_fluctuates_as_the_plugin_does_when_items_differ():
    """Items of one mean score with different f* (here f* is 0 or 1, both labels of an item agree): the CE1
    plug-in's spread over fresh labels is what the bootstrap's refits show, because the world carries the spread of
    f* fitted from the agreeing label pairs.  Control: the world with f* = p1 (second=None) fluctuates about
    1/sqrt(2) as much, and the same check rejects it."""
    from socal import pipeline
    from socal.bootstrap import bootstrap
    from socal.world import DeviationWorldPass, SecondMomentPass, second_moment_fit

    rng = np.random.default_rng(11)
    n = 4000
    m = rng.uniform(0.1, 0.9, n)
    eta = np.clip(m + 0.1 * np.sin(2 * np.pi * m), 0, 1)  # miscalibrated, CE1 about 0.06
    opts = pipeline.estimator_settings("ce1", ndim=1, h=None, degree=4, ridge=1e-3, folds=5, max_degree=200, rng=None,
                                        n_boot=200)

    def labels(r):
        f = (r.uniform(size=n) < eta).astype(float)  # f* is 0 or 1: the item's two labels agree
        return np.column_stack([f, f])

    def plugin(y):
        source = pipeline.data_source("ce1", 1, m, None, y, None, None)[0]
        fit = pipeline.fit_from(source, None, opts, 1, "ce1")[0]
        dev = source.map_reduce(socal.deviations.DeviationPass(fit.calmap))
        return source, fit, dev.mean_term + dev.moment_term

    spread = np.std([plugin(labels(rng))[2] for _ in range(300)])
    source, fit, est = plugin(labels(rng))
    sums = source.map_reduce(SecondMomentPass(4))
    second = second_moment_fit(sums, 4, fit.calmap.alpha)
    sd = {}
    for name, sec in (("spread", second), ("point", None)):
        both = source.map_reduce(DeviationWorldPass(fit.calmap, sec, census_seed=2, seed=2))
        boot = bootstrap(source, fit, est, n_boot=300, seed=2, level=0.9, second=sec, world=both.world,
                         duplicates=both.census.duplicated())
        sd[name] = float(np.std(boot.deltas))
    assert 0.8 < sd["spread"] / spread < 1.25, (sd, spread)
    assert not 0.8 < sd["point"] / spread < 1.25, (sd, spread)  # control


def test_inner_one_step_is_recorded_without_moving_the_default(monkeypatch):
    """With BootstrapOptions(inner=True) the bootstrap also returns each refit's one-step-corrected delta and the analytic one-step;
    the estimate, interval and bound do not move (the option only adds sums).  The analytic one-step is within 30% of
    the Monte Carlo one (mean of the deltas) at a fixed, moderate degree, and the corrected deltas differ from the
    plain ones (control: they are not a copy)."""
    pop = socal.synthetic.toy_population()
    m, v, y = pop.sample(4000, h=1 / 16, rng=3)
    got = []
    spy = socal.pipeline.bootstrap

    def keep(*args, **kw):
        got.append(spy(*args, **kw))
        return got[-1]

    monkeypatch.setattr(socal.pipeline, "bootstrap", keep)
    plain = socal.ce2(m, v, y, degree=4, ridge=1e-3, ci=0.9, upper=0.95)
    assert got[-1].inner is None
    inner = ce_with_options("ce2", BootstrapOptions(inner=True), m, v, y, degree=4, ridge=1e-3, ci=0.9, upper=0.95)
    boot = got[-1]
    assert (inner.estimate, inner.ci.low, inner.ci.high, inner.upper.value) == (
        plain.estimate, plain.ci.low, plain.ci.high, plain.upper.value)
    corrected, analytic = boot.inner
    assert corrected.shape == boot.deltas.shape and np.all(np.isfinite(corrected))
    assert analytic == pytest.approx(float(boot.deltas.mean()), rel=0.3)
    assert not np.allclose(corrected, boot.deltas)


def test_a_constant_predictors_interval_has_the_plugins_spread(monkeypatch):
    """A constant mean 0.3 against labels of rate 0.5 (CE1 = 0.2): 3 distinct rows for 20,000 items.  Its plug-in is
    |mean(a/k) - 0.3|, of SD sqrt(0.25 / (2 n)) exactly; the bootstrap finds it (within 25%) and the interval
    covers 0.2 within 6 SDs.  Negative control: keyed by content alone, the refit subset (a quarter of the rows)
    keeps each of the 3 distinct rows with all its items or none, and here it kept none (the interval had width 0
    before the census)."""
    import socal.rowkeys as bs

    n = 20_000
    rng = np.random.default_rng(0)
    m, y = np.full(n, 0.3), (rng.random((n, 2)) < 0.5).astype(float)
    sd = np.sqrt(0.25 / (2 * n))
    res = socal.ce1(m, y, ci=0.9, n_boot=200)
    chosen = next(c for c in res.candidates if c.chosen)
    assert 0.75 * sd <= chosen.noise_sd <= 1.25 * sd, (chosen.noise_sd, sd)
    assert res.ci.low <= 0.2 <= res.ci.high and res.ci.high - res.ci.low <= 6 * sd
    monkeypatch.setattr(bs.KeyCensus, "duplicated", lambda self: (np.empty(0, np.uint64), np.empty(0, np.int64)))
    with pytest.raises(RuntimeError, match="kept 0 of 20000 rows"):
        socal.ce1(m, y, ci=0.9, n_boot=200)


def test_rows_of_one_content_give_the_same_numbers_in_any_order_or_chunking(monkeypatch):
    """The censuses count a content's rows over every chunk (the folds' and the refit pass's), and each chunk's rows
    carry their share of its items, so a predictor with few distinct scores gives the same estimate, interval and
    bound as arrays, permuted, in 7 chunks, on the keyed subset (REFIT_ROWS = 800) and as dask partitions, and so
    does the fallback when the censuses overflow their cap (a later chunk then skips its census).  The tolerance is
    1e-9, not 1e-12: with 11 distinct score pairs the covariance of the right-hand sides has rank 22 of 50, so its
    Cholesky factor needs the jitter, and the jittered factor carries the moments' last-bit differences between
    orders up to 1e-10 (the same before the census; continuous scores keep 1e-12, the test above).  Negative control:
    counting each chunk's rows alone (a chunk-local census) moves the numbers by far more than that."""
    import socal.rowkeys as bs

    rng = np.random.default_rng(3)
    n = 3000
    m = np.round(rng.beta(2, 2, n), 1)  # 11 distinct means: ~33 distinct rows with their label counts
    v = np.round(m * (1 - m) / 6, 2)
    y = (rng.random((n, 2)) < np.clip(m * 1.2 - 0.05, 0, 1)[:, None]).astype(float)
    kw = dict(ci=0.9, upper=0.95, n_boot=40)
    perm = rng.permutation(n)
    cuts = np.array_split(perm, 7)
    for rows in (10**9, 800):
        opts = BootstrapOptions(refit_rows=rows)
        ce2 = functools.partial(ce_with_options, "ce2", opts)
        ref = ce2(m, v, y, **kw)
        permuted = ce2(m[perm], v[perm], y[perm], **kw)
        chunked = ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)
        for other in (permuted, chunked):
            np.testing.assert_allclose(_headline(other), _headline(ref), rtol=1e-9, atol=1e-12)
        r1 = ce_with_options("ce1", opts, m, y, **kw)
        r1c = ce_with_options("ce1", opts, chunks=[{"mean": m[c], "labels": y[c]} for c in cuts], **kw)
        np.testing.assert_allclose(_headline(r1c), _headline(r1), rtol=1e-9, atol=1e-12)
    da = pytest.importorskip("dask.array", reason="the dask partitions case needs dask")
    on_dask = ce2(da.from_array(m, chunks=500), da.from_array(v, chunks=500), da.from_array(y, chunks=(500, 2)),
                        **kw)
    np.testing.assert_allclose(_headline(on_dask), _headline(ref), rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(socal.rowkeys, "CENSUS_CAP", 20)  # every census overflows (about 33 distinct rows)
    over = ce2(m, v, y, **kw)
    over_chunked = ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)
    np.testing.assert_allclose(_headline(over_chunked), _headline(over), rtol=1e-9, atol=1e-12)
    assert not np.allclose(_headline(over), _headline(ref), rtol=1e-4, atol=0)
    monkeypatch.setattr(socal.rowkeys, "CENSUS_CAP", 2**22)
    local = bs.KeyCensus.merge
    def first_chunks_only(self, other):  # a merge that keeps one side's keys (and counts both sides' rows)
        kept = self if self.keys.size else other
        return bs.KeyCensus(kept.keys, kept.counts, kept.overflow, self.rows + other.rows)

    monkeypatch.setattr(bs.KeyCensus, "merge", first_chunks_only)
    moved = socal.ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)
    monkeypatch.setattr(bs.KeyCensus, "merge", local)
    assert not np.allclose(_headline(moved), _headline(ref), rtol=1e-4, atol=0)


def test_rows_all_alike_give_their_exact_value():
    """Every row the same (mean 0, var 0, both labels 1): CE2 is 2 and CE1 is 1 exactly, with nothing random in the
    data's world (no label noise, one kind of item), so the estimate, interval and bound are that value.  The
    previous code returned 2.25 (above the largest CE2 these scores allow): in 37% of the replicates the one shared
    item weight was 0, and those replicates' empty resamples entered the bias as -truth."""
    n = 400
    r2 = socal.ce2(np.zeros(n), np.zeros(n), np.ones((n, 2)), h=1 / 16, ci=0.9, upper=0.95)
    assert np.allclose([r2.estimate, r2.ci.low, r2.ci.high, r2.upper.value], 2.0, atol=1e-12)
    r1 = socal.ce1(np.zeros(n), np.ones((n, 2)), ci=0.9, upper=0.95)
    assert np.allclose([r1.estimate, r1.ci.low, r1.ci.high, r1.upper.value], 1.0, atol=1e-12)


def test_exact_label_draws_treat_rows_of_one_content_as_separate_items(monkeypatch):
    """The 'exact' comparison mode (every label set drawn) keyed each draw by row content alone, so on a predictor
    with 6 distinct raw scores the ~500 items of one content drew the same labels: their summed targets moved
    c times too far, and the bias correction took the estimate to 0 with the interval [0, 0.149] (the default
    Gaussian draws: 0.109 [0.089, 0.126]).  Now each is an item of its own: the two modes agree, and permuted and
    chunked rows give the same numbers."""
    pop = socal.synthetic.toy_population()
    m, v, _, y = pop.sample_raw(3000, rng=0)
    kw = dict(degree=4, ridge=1e-3, ci=0.9, rng=0)
    gauss = socal.ce2(m, v, y, **kw)
    exact_draws = functools.partial(ce_with_options, "ce2", BootstrapOptions(label_draws="exact"))
    exact = exact_draws(m, v, y, **kw)
    assert abs(exact.estimate - gauss.estimate) < 0.01 and exact.ci.low > 0.05
    assert abs((exact.ci.high - exact.ci.low) - (gauss.ci.high - gauss.ci.low)) < 0.01
    perm = np.random.default_rng(1).permutation(m.size)
    chunks = [{"mean": m[c], "var": v[c], "labels": y[c]} for c in np.array_split(perm, 7)]
    for other in (exact_draws(m[perm], v[perm], y[perm], **kw), exact_draws(chunks=chunks, **kw)):
        assert abs(other.estimate - exact.estimate) < 1e-12 and abs(other.ci.high - exact.ci.high) < 1e-12
    # the control: the label sets drawn without the shared keys (rows of one content alike) collapse as before
    init = world.LabelSetsPass.__init__
    monkeypatch.setattr(world.LabelSetsPass, "__init__",
                        lambda self, *a, duplicates=None, **k: init(self, *a[:4], **k))
    assert exact_draws(m, v, y, **kw).estimate < 0.05


def test_scores_packed_into_a_sliver_get_an_interval(monkeypatch):
    """A predictor whose outputs barely vary (means 0.5 + 1e-6 U, variances 0.1 + 1e-7 U) made the bootstrap world's
    covariance unfactorable at every jitter (its coordinates' variances fall below the moments' rounding), and ce2
    raised RuntimeError.  The label sets are then drawn (the exact parametric bootstrap, which needs no
    factorisation); the interval holds the truth (CE2 = 0.05: f* ~ Beta(2, 2) whatever the score, E f*^2 = 0.30
    against m^2 + v = 0.35), as it does where the covariance factors (scores spread over 1e-3)."""
    rng = np.random.default_rng(0)
    n = 5000
    m, v = 0.5 + 1e-6 * rng.uniform(size=n), 0.1 + 1e-7 * rng.uniform(size=n)
    y = rng.binomial(1, rng.beta(2, 2, size=n)[:, None].repeat(2, 1))
    drawn = []
    real = bootstrap.LabelSetsPass
    monkeypatch.setattr(bootstrap, "LabelSetsPass", lambda *a: drawn.append(None) or real(*a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", socal.ConditioningWarning)
        res = socal.ce2(m, v, y, ci=0.9, n_boot=40)
    assert drawn and res.ci.low <= 0.05 <= res.ci.high and abs(res.estimate - 0.05) < 0.02
    drawn.clear()
    m, v = 0.5 + 1e-3 * rng.uniform(size=n), 0.1 + 1e-4 * rng.uniform(size=n)
    res = socal.ce2(m, v, y, ci=0.9, n_boot=40)
    assert not drawn and res.ci.low <= 0.05 <= res.ci.high  # the covariance factors: Gaussian draws


@pytest.mark.parametrize("kw,match", [(dict(label_draws="gauss"), "'label_draws' parameter of BootstrapOptions"),
                                      (dict(refit_rows=0), "'refit_rows' parameter"),
                                      (dict(world_rows=True), "'world_rows' parameter"),
                                      (dict(inner=1), "'inner' parameter")])
def test_bootstrap_options_refuse_what_they_cannot_mean(kw, match):
    """BootstrapOptions names a bad knob before any work; the defaults are the library's (a control: they give the
    default call's numbers, test_the_refit_subset_is_keyed_by_row_content)."""
    with pytest.raises(ValueError, match=match):
        BootstrapOptions(**kw)
    assert BootstrapOptions() == BootstrapOptions(label_draws="gaussian", refit_rows=refits.REFIT_ROWS,
                                                  world_rows=world.WORLD_ROWS, inner=False)
