"""socal.plot: the computed curves against exact truth, empty bins left empty, figures written with labelled axes."""

import sys

import numpy as np
import pytest

import socal
from socal import synthetic
from socal.cli import main


@pytest.fixture(scope="module")
def sample():
    pop = synthetic.toy_population()
    m, v, y = pop.sample(20_000, h=1 / 16, rng=2)
    return pop, m, v, y


def test_reliability_curve_follows_exact_calibration_functions(sample):
    pop, m, v, y = sample
    rd = socal.plot.reliability(m, v, y, h=1 / 16, n_boot=20, rng=0)
    e1, e2 = pop.calibration_functions(1 / 16, m, v)
    _, _, _, (exact1,) = socal.plot._binned(m, [e1], rd.mean_edges, rd.min_count)
    _, _, _, (exact2,) = socal.plot._binned(v, [e2 - e1 * e1], rd.var_edges, rd.min_count)
    drawn = np.isfinite(rd.eta1)
    assert drawn.sum() >= 15
    assert np.nanmax(np.abs(rd.eta1 - exact1)) < 0.04
    assert np.nanmax(np.abs(rd.cond_var - exact2)) < 0.03
    # the bands are ordered and mostly hold the exact curve (20 refits: a rough band)
    lo, hi = rd.eta1_band
    assert np.all(lo[drawn] <= hi[drawn])
    assert np.mean((lo[drawn] - 0.01 <= exact1[drawn]) & (exact1[drawn] <= hi[drawn] + 0.01)) >= 0.7


def test_no_curve_where_there_are_no_data():
    pop = synthetic.toy_population()
    m, v, y = pop.sample(3000, h=1 / 64, rng=0)  # narrow perturbation: whole mean bins stay empty
    rd = socal.plot.reliability(m, v, y, degree=6, ridge=1e-3, n_boot=0, min_count=30)
    empty = rd.mean_count < 30
    assert empty.any() and np.all(np.isnan(rd.eta1[empty])) and np.all(np.isfinite(rd.eta1[~empty]))
    assert np.all(np.isnan(rd.eta1_band))  # n_boot=0: no bands
    rm = socal.plot.residual_map(m, v, y, degree=6, ridge=1e-3, min_count=5)
    assert rm.mean_residual.shape == (40, 20) and rm.count.sum() == 3000
    assert np.array_equal(np.isnan(rm.var_residual), rm.count < 5)


def test_bad_input():
    m, v, y = synthetic.toy_population().sample(500, h=1 / 16, rng=0)
    with pytest.raises(ValueError, match="'bins'"):
        socal.plot.reliability(m, v, y, bins=1)
    with pytest.raises(ValueError, match="'bins'.*pair"):
        socal.plot.residual_map(m, v, y, bins=10)
    with pytest.raises(ValueError, match="'var'"):
        socal.plot.reliability(m, v + 0.5, y)
    for level in (0.0, 1.0, -0.5, 1.5, float("nan")):  # -0.5 gave percentiles (75, 25): an inverted band
        with pytest.raises(ValueError, match="'level'"):
            socal.plot.reliability(m, v, y, level=level, n_boot=2)


def test_bands_need_a_refit_beyond_each_end(sample):
    """One refit gave a band of width 0, drawn as if it were a 90% band; the bands now need 2 / (1 - level) refits
    (one expected beyond each end)."""
    _, m, v, y = sample
    kw = dict(degree=3, ridge=1e-3, rng=0)
    for n_boot, level, fewest in ((1, 0.9, 20), (19, 0.9, 20), (9, 0.8, 10), (39, 0.95, 40)):
        with pytest.raises(ValueError, match=f"'n_boot' parameter of plot.reliability must be 0 \\(no bands\\) or at "
                                             f"least 2 / \\(1 - level\\) = {fewest} at level {level:g}"):
            socal.plot.reliability(m[:2000], v[:2000], y[:2000], n_boot=n_boot, level=level, **kw)
    rd = socal.plot.reliability(m[:2000], v[:2000], y[:2000], n_boot=4, level=0.5, **kw)  # the edge: 4 refits
    drawn = np.isfinite(rd.eta1_band[0])
    assert drawn.any() and np.all(rd.eta1_band[1][drawn] > rd.eta1_band[0][drawn])


def test_bands_and_halves_do_not_depend_on_the_row_order(sample, monkeypatch):
    """The bands' Poisson weights and the figure's fit/held-out halves are keyed by the items' content, so the same
    items in another order give the same bands (to float summation order) and the same halves.  Control: weights
    keyed by position instead move the bands."""
    _, m, v, y = sample
    m, v, y = m[:4000], v[:4000], y[:4000]
    p = np.random.default_rng(1).permutation(m.size)
    kw = dict(h=1 / 16, degree=6, ridge=1e-3, n_boot=8, level=0.75, rng=3)  # 8 = 2 / (1 - level) refits
    a = socal.plot.reliability(m, v, y, **kw)
    b = socal.plot.reliability(m[p], v[p], y[p], **kw)
    drawn = np.isfinite(a.eta1_band)
    assert drawn.sum() >= 20
    np.testing.assert_allclose(b.eta1_band, a.eta1_band, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.cond_var_band, a.cond_var_band, rtol=1e-9, atol=1e-12)
    # the halves of evaluation_figure: the same items held out in any order
    a_, k_ = y.sum(axis=1), np.full(m.size, 2.0)
    half = socal.plot._fit_half(m, v, a_, k_, np.random.default_rng(0))
    again = socal.plot._fit_half(m[p], v[p], a_[p], k_[p], np.random.default_rng(0))
    np.testing.assert_array_equal(half[p], again)
    assert 0.45 < half.mean() < 0.55
    monkeypatch.setattr(socal.plot, "item_keys", lambda m, v, a, k, rng: np.arange(m.size, dtype=np.uint64))
    c = socal.plot.reliability(m, v, y, **kw)
    d = socal.plot.reliability(m[p], v[p], y[p], **kw)
    assert np.nanmax(np.abs(c.eta1_band - d.eta1_band)) > 1e-4


def test_figures_are_written_and_labelled(sample, tmp_path):
    matplotlib = pytest.importorskip("matplotlib", reason="drawing needs the plot extra")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, m, v, y = sample
    rd = socal.plot.reliability(m[:5000], v[:5000], y[:5000], degree=6, ridge=1e-3, n_boot=5, level=0.6, rng=0)
    axes = socal.plot.plot_reliability(rd)
    for ax in axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    axes[0].figure.savefig(tmp_path / "rel.png")
    axes = socal.plot.plot_residual_map(socal.plot.residual_map(m, v, y, degree=6, ridge=1e-3))
    assert [ax.get_xlabel() for ax in axes] == ["predicted mean m"] * 2
    axes = socal.plot.plot_before_after(rd, rd)
    assert {t.get_text() for t in axes[0].get_legend().get_texts()} == {"calibrated", "before", "after"}
    plt.close("all")
    assert (tmp_path / "rel.png").stat().st_size > 10_000


def test_evaluate_plot_command(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="drawing needs the plot extra")
    data, fig = tmp_path / "demo.csv", tmp_path / "fig.png"
    assert main(["demo", "--write", str(data), "--n", "4000"]) == 0
    assert main(["evaluate", str(data), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20",
                 "--plot", str(fig)]) == 0
    assert "figure" in capsys.readouterr().out and fig.stat().st_size > 20_000


def test_drawing_without_matplotlib_names_the_extra(monkeypatch, sample):
    _, m, v, y = sample
    rd = socal.plot.reliability(m[:2000], v[:2000], y[:2000], degree=4, ridge=1e-3, n_boot=0)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"socal\[plot\]"):
        socal.plot.plot_reliability(rd)


def test_bands_on_too_few_items_say_so_instead_of_failing_in_a_refit():
    """On 20 items a resample of the Poisson bootstrap can hold fewer rows than the fit's 16 coefficients, and the
    bands failed with calibration_functions' "'degree' ... Got 3" for a degree the user never passed."""
    rng = np.random.default_rng(0)
    m, v = rng.uniform(0, 1, 60), rng.uniform(0, 0.25, 60)
    y = (rng.random((60, 2)) < m[:, None]).astype(float)
    with pytest.raises(ValueError, match=r"'n_boot' parameter of plot.reliability .* at least 2 \(degree \+ 1\)\^2"):
        socal.plot.reliability(m[:20], v[:20], y[:20], n_boot=50, rng=0)
    assert np.isnan(socal.plot.reliability(m[:20], v[:20], y[:20], n_boot=0, rng=0).eta1_band).all()  # the curves alone
    rd = socal.plot.reliability(m, v, y, n_boot=50, rng=0, min_count=1)  # 60 items: the bands are drawn
    assert np.isfinite(rd.eta1_band).any()


def test_drawing_functions_name_a_wrong_argument():
    with pytest.raises(TypeError, match="'data' parameter of plot.plot_reliability must be a ReliabilityData"):
        socal.plot.plot_reliability(3)
    with pytest.raises(TypeError, match="'data' parameter of plot.plot_residual_map must be a ResidualMap"):
        socal.plot.plot_residual_map(None)
    rd = socal.plot.reliability(*socal.synthetic.toy_population().sample(500, h=1 / 16, rng=0), n_boot=0)
    with pytest.raises(TypeError, match="'after' parameter of plot.plot_before_after"):
        socal.plot.plot_before_after(rd, "x")


def test_drawing_functions_name_wrong_axes_and_evaluation_figure_checks_first(small):
    """plot_reliability(data, axes=one_axes) raised "cannot unpack non-iterable Axes object"; evaluation_figure with
    h=0 was refused in SecondOrderPlatt's name, and with n_boot=1 only after the fit, in plot.reliability's."""
    pytest.importorskip("matplotlib", reason="drawing needs matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m, v, y = small
    data = socal.plot.reliability(m, v, y, n_boot=0, rng=0)
    one = plt.subplots()[1]
    for draw in (lambda ax: socal.plot.plot_reliability(data, axes=ax),
                 lambda ax: socal.plot.plot_before_after(data, data, axes=ax),
                 lambda ax: socal.plot.plot_residual_map(socal.plot.residual_map(m, v, y, rng=0), axes=ax)):
        with pytest.raises(TypeError, match="'axes' parameter of plot.plot_.* must be two matplotlib Axes"):
            draw(one)
    assert len(socal.plot.plot_reliability(data, axes=plt.subplots(2, 1)[1])) == 2  # a column of two panels
    with pytest.raises(ValueError, match="'h' parameter of plot.evaluation_figure"):
        socal.plot.evaluation_figure(m, v, y, h=0)
    with pytest.raises(ValueError, match="'n_boot' parameter of plot.evaluation_figure"):
        socal.plot.evaluation_figure(m, v, y, n_boot=1)
    plt.close("all")


def test_the_evaluation_figure_names_itself_when_its_held_out_half_is_too_small():
    """evaluation_figure on 30 items said "The 'n_boot' parameter of plot.reliability ... or a smaller 'degree'":
    a function the user had not called, and a parameter evaluation_figure does not have."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    m, v, _, y = socal.synthetic.toy_population().sample_raw(30, rng=0)
    with pytest.raises(ValueError, match=r"'n_boot' parameter of plot\.evaluation_figure .* \(the held-out half\): "
                                         r"pass n_boot=0 for the curves alone, or more items\.$"):
        socal.plot.evaluation_figure(m, v, y, rng=0)
    with pytest.raises(ValueError, match=r"parameter of plot\.reliability .* or a smaller 'degree'\.$"):
        socal.plot.reliability(m[:12], v[:12], y[:12], rng=0)
    assert socal.plot.evaluation_figure(m, v, y, n_boot=0, rng=0) is not None


def test_the_reliability_diagram_is_the_same_every_call_with_rng_omitted(small):
    """plot.reliability(m, v, y) drew its folds and bands from fresh entropy, so the curve itself moved between two
    identical calls (the estimators' rng=None is a fixed seed, as README promises)."""
    m, v, y = small
    a, b = (socal.plot.reliability(m, v, y, n_boot=20) for _ in range(2))
    np.testing.assert_array_equal(a.eta1, b.eta1)
    np.testing.assert_array_equal(a.eta1_band, b.eta1_band)
    np.testing.assert_array_equal(a.cond_var_band, b.cond_var_band)
