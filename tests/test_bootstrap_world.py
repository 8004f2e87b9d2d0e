"""The bootstrap world (socal.world, socal.refits): its targets' exact moments, the subsets keyed by row content,
and the world passes at full size."""

import functools

import numpy as np
import pytest

import socal
from socal import world
from socal.bootstrap import BootstrapOptions
from socal.estimators import ce_with_options
from tests._bootstrap_helpers import _determinism_data, _headline, _world_pmf


def test_target_covariances_are_the_exact_moments_of_the_world():
    """Var z1, Cov(z1, z2), Var z2 from the factorial moments equal exact enumeration of a ~ Binomial(k, f*), f* of
    the world's law (Beta with mean p1 and second moment p2; a point mass; Bernoulli), for k = 1..6."""
    from socal.snapshots import target_covariances

    cases = [(0.3, 0.3**2 + 0.01), (0.5, 0.3), (0.2, 0.2**2), (0.7, 0.7)]  # Beta, Beta, point mass, Bernoulli
    for p1, p2 in cases:
        for k in range(2, 7):
            a = np.arange(k + 1)
            pmf = _world_pmf(p1, p2, k)
            z1, z2 = a / k, a * (a - 1) / (k * (k - 1))
            m1, m2 = pmf @ z1, pmf @ z2
            exact = [pmf @ z1**2 - m1**2, pmf @ (z1 * z2) - m1 * m2, pmf @ z2**2 - m2**2]
            got = target_covariances(np.array([p1]), np.array([p2]), np.array([float(k)]), 2)[0]
            np.testing.assert_allclose(got, exact, atol=1e-12, err_msg=f"p1={p1}, p2={p2}, k={k}")
    got = target_covariances(np.array([0.3]), np.array([0.09]), np.array([1.0]), 1)[0, 0]
    assert got == pytest.approx(0.3 * 0.7)  # first order, one label: Bernoulli(p1)
    # rows with k = 2 give the same numbers by the shortcut (all k = 2) and the factorial moments (mixed k)
    p1, p2 = np.array([c[0] for c in cases]), np.array([c[1] for c in cases])
    alone = target_covariances(p1, p2, np.full(4, 2.0), 2)
    mixed = target_covariances(np.r_[p1, p1], np.r_[p2, p2], np.r_[np.full(4, 2.0), np.full(4, 3.0)], 2)
    np.testing.assert_allclose(mixed[:4], alone, atol=1e-12)
    assert not np.allclose(mixed[4:], alone)  # control: k = 3 is another law


def test_gaussian_right_hand_sides_have_the_label_redraw_covariance():
    """The one-pass world gives b = Phi' z its exact mean and covariance: many Gaussian draws against the covariance
    built row by row from the features (negative control: the covariance of a world with twice the label noise is
    rejected).  The mean right-hand sides, G beta plus the projection's correction, equal sum_i phi_i p_i."""
    from socal.snapshots import target_covariances
    from socal.world import DeviationWorldPass, gaussian_right_hand_sides, world_right_hand_sides
    from socal.chebyshev import TensorBasis, response_vector, tensor_features, to_unit
    from socal.fitting import select_and_fit
    from socal.sufficient import SufficientStats

    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(4000, h=1 / 16, rng=3)
    fitted = select_and_fit(SufficientStats(max_degree=3).update(m, v, y), degrees=(3,), alphas=(1e-3,), select=False)
    fit = fitted.calmap
    a, k = y.sum(axis=1), np.full(m.size, 2.0)
    W, S, _ = world_right_hand_sides(fitted, DeviationWorldPass(fit)(0, m, v, a, k).world)
    b = gaussian_right_hand_sides(W, S, fit.basis, 20000, seed=5)  # (d, B, R)
    p = fit.predict(m, v, project=True)
    assert np.any(p != fit.raw(m, v))  # the projection moved some rows: the correction is exercised
    u, w = to_unit(m, v)
    basis = TensorBasis(3, 2)
    phi = tensor_features(u, w, 3, 3)[basis.tensor_index]  # (d, n) in the basis order
    direct = phi @ p
    np.testing.assert_allclose(np.stack([response_vector(W[r], basis) for r in range(2)], axis=1), direct,
                               rtol=0, atol=1e-10 * np.abs(direct).max())
    np.testing.assert_allclose(b.mean(axis=1), direct, atol=4 * np.sqrt(np.diag(phi @ phi.T)).max() / 100)
    C = target_covariances(p[:, 0], p[:, 1], k, 2)
    d = phi.shape[0]
    exact = np.zeros((2 * d, 2 * d))
    for (r, q), j in {(0, 0): 0, (0, 1): 1, (1, 0): 1, (1, 1): 2}.items():
        exact[r * d:(r + 1) * d, q * d:(q + 1) * d] = (phi * C[:, j]) @ phi.T
    flat = np.concatenate([b[:, :, 0], b[:, :, 1]])  # (2d, B)
    sample = np.cov(flat)
    sd = np.sqrt(np.diag(exact))
    rel = np.abs(sample - exact) / np.outer(sd, sd)
    assert rel.max() < 0.06, rel.max()  # 20000 draws: correlations to +-0.03 (2 SE), a few % on variances
    assert (np.abs(sample - 2 * exact) / np.outer(sd, sd)).max() > 0.5  # negative control


def test_the_refit_subset_is_keyed_by_row_content(monkeypatch):
    """Above REFIT_ROWS rows the refits are evaluated on a keyed subset: the same rows, so the same numbers, in any
    order and chunking (the subset is exercised here with REFIT_ROWS = 800)."""
    ce2 = functools.partial(ce_with_options, "ce2", BootstrapOptions(refit_rows=800))
    m, v, y = _determinism_data()
    kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
    ref = ce2(m, v, y, **kw)
    perm = np.random.default_rng(9).permutation(m.size)
    cuts = np.array_split(perm, 5)
    chunked = ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)
    np.testing.assert_allclose(_headline(chunked), _headline(ref), rtol=1e-12, atol=1e-14)
    every = ce_with_options("ce2", BootstrapOptions(refit_rows=10**9), m, v, y, **kw)
    assert not np.array_equal(_headline(every), _headline(ref))  # the subset is used


def test_the_world_subset_is_keyed_by_row_content(monkeypatch):
    """Above WORLD_ROWS rows the world's covariance moments are summed over a keyed subset: the same rows, so the
    same numbers, as arrays, permuted, in 7 chunks and as dask partitions, for ce2 and ce1 (exercised here with
    WORLD_ROWS = 1,000 of 3,000 rows).  Controls: the subset is used (other numbers than the whole's), and the
    interval it gives is the whole's up to the subset's sampling error (each end within a tenth of the width)."""
    m, v, y = _determinism_data()
    kw = dict(h=1 / 16, ci=0.9, upper=0.95, n_boot=40)
    whole = socal.ce2(m, v, y, **kw)
    opts = BootstrapOptions(world_rows=1000)
    ce2 = functools.partial(ce_with_options, "ce2", opts)
    ref = ce2(m, v, y, **kw)
    perm = np.random.default_rng(9).permutation(m.size)
    cuts = np.array_split(perm, 7)
    chunked = ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)
    permuted = ce2(m[perm], v[perm], y[perm], **kw)
    for other in (chunked, permuted):
        np.testing.assert_allclose(_headline(other), _headline(ref), rtol=1e-12, atol=1e-14)
    da = pytest.importorskip("dask.array", reason="the dask partitions case needs dask")
    on_dask = ce2(da.from_array(m, chunks=700), da.from_array(v, chunks=700),
                        da.from_array(y, chunks=(700, 2)), **kw)
    np.testing.assert_allclose(_headline(on_dask), _headline(ref), rtol=1e-12, atol=1e-14)
    r1 = ce_with_options("ce1", opts, m, y, **kw)
    r1c = ce_with_options("ce1", opts, chunks=[{"mean": m[c], "labels": y[c]} for c in cuts], **kw)
    np.testing.assert_allclose(_headline(r1c), _headline(r1), rtol=1e-12, atol=1e-14)
    assert not np.array_equal(_headline(ref), _headline(whole))  # the subset is used
    width = whole.ci.high - whole.ci.low
    assert abs(ref.ci.low - whole.ci.low) < 0.1 * width and abs(ref.ci.high - whole.ci.high) < 0.1 * width


@pytest.mark.slow
def test_same_numbers_above_world_rows_at_full_size():
    """At 250,000 rows the default WORLD_ROWS keeps 80% of the rows for the world's covariance moments: arrays,
    permuted rows and 7 chunks still give every number of every Lepski candidate to 1e-12, for ce2 and ce1 (3.2e-13
    when measured; about 11 s)."""
    pop = socal.synthetic.validation_zoo()["toy"].population
    m, v, y = pop.sample(250_000, h=1 / 16, rng=4)
    assert world.world_fraction(m.size) < 1.0
    kw = dict(h=1 / 16, ci=0.9, upper=0.95)
    perm = np.random.default_rng(7).permutation(m.size)
    cuts = np.array_split(np.arange(m.size), 7)
    ref = socal.ce2(m, v, y, **kw)
    for other in (socal.ce2(m[perm], v[perm], y[perm], **kw),
                  socal.ce2(chunks=[{"mean": m[c], "var": v[c], "labels": y[c]} for c in cuts], **kw)):
        np.testing.assert_allclose(_headline(other), _headline(ref), rtol=1e-12, atol=1e-14)
    ref1 = socal.ce1(m, y, **kw)
    for other in (socal.ce1(m[perm], y[perm], **kw),
                  socal.ce1(chunks=[{"mean": m[c], "labels": y[c]} for c in cuts], **kw)):
        np.testing.assert_allclose(_headline(other), _headline(ref1), rtol=1e-12, atol=1e-14)


def test_the_world_subsets_covariance_moments_are_unbiased():
    """The Horvitz-Thompson sums over the keyed subset (rows kept with probability q, weighted 1/q) average, over
    subsets drawn under many seeds, to the sums over every row; the mean right-hand sides and the row sums are
    the whole's exactly.  Negative control: the subset's sums without the 1/q weight are off by the factor q."""
    from socal.world import world_subset, world_sums
    from socal.fitting import feasible
    from socal.rowkeys import row_keys

    m, v, y = _determinism_data()
    a, k = y.sum(axis=1).astype(float), np.full(m.size, 2.0)
    fit = socal.calibration_functions(m, v, y, degree=5, ridge=1e-3).map
    raw = fit.raw(m, v)
    p = feasible(feasible(raw.copy()), project=True)
    full = world_sums(fit, raw, p, m, v, k).arrays
    q, draws = 0.25, []
    for seed in range(60):
        subset = world_subset(row_keys(m, v, a, k, seed), q)
        assert abs(subset.size - q * m.size) < 5 * np.sqrt(q * (1 - q) * m.size)
        part = world_sums(fit, raw, p, m, v, k, subset=subset, fraction=q).arrays
        for exact, got in zip(full[:1] + full[2:], part[:1] + part[2:]):  # the mean and the checks: every row
            assert np.array_equal(exact, got)
        draws.append(part[1])
    S, mean = full[1], np.mean(draws, axis=0)
    scale = np.abs(S).max()
    assert np.abs(mean - S).max() < 0.02 * scale, np.abs(mean - S).max() / scale  # 60 subsets of 750 rows
    assert np.abs(q * mean - S).max() > 0.5 * scale  # negative control: the sums without their weight


def test_sums_are_read_by_name_and_merge_only_with_their_own_names():
    """world.Sums: a pass's sums are read by name (an unknown name is a KeyError naming the ones there), merge
    element-wise, and sums of other names are refused (no silent positional mix-up)."""
    import numpy as np

    from socal.world import Sums

    a, b = Sums.of(num=np.ones(2), rows=np.array([3.0])), Sums.of(num=np.ones(2), rows=np.array([4.0]))
    m = a.merge(b)
    assert m.names == ("num", "rows") and m["rows"][0] == 7.0 and np.array_equal(m["num"], [2.0, 2.0])
    with pytest.raises(KeyError, match="num, rows"):
        a["den"]
    with pytest.raises(ValueError, match="cannot merge"):
        a.merge(Sums.of(rows=np.array([4.0]), num=np.ones(2)))
