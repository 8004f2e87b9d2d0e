"""One bandwidth per axis, h = (h_mean, h_var) (issue 23): a pair of equal bandwidths is the single h everywhere,
the matched pair (h, h/4) keeps the paper's degree, and the exact truth follows each axis's kernel."""

import numpy as np
import pytest

import socal
from socal import synthetic, truth
from socal.cli import main
from socal.degrees import resolution_degree


def test_an_equal_pair_is_the_single_bandwidth():
    m, v, _, y = synthetic.toy_population().sample_raw(2000, rng=0)
    a = socal.perturb(m, v, h=1 / 16, rng=3)
    b = socal.perturb(m, v, h=(1 / 16, 1 / 16), rng=3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    pop = synthetic.toy_population()
    assert pop.ce2((1 / 16, 1 / 16)).value == pytest.approx(pop.ce2(1 / 16).value, rel=1e-14)
    ref1 = truth.calibrated_reference(m, v, 1 / 16)
    ref2 = truth.calibrated_reference(m, v, (1 / 16, 1 / 16))
    assert ref2.ce2.value == pytest.approx(ref1.ce2.value, rel=1e-14)
    assert resolution_degree((1 / 16, 1 / 16)) == resolution_degree(1 / 16)


def test_each_axis_moves_by_its_own_bandwidth():
    rng = np.random.default_rng(0)
    m, v = np.full(20000, 0.5), np.full(20000, 0.1)
    pm, pv = socal.perturb(m, v, h=(1 / 16, 1 / 256), rng=rng)
    # SD of a sech kernel of scale h is pi h / 2 (far from the ends, truncation is negligible here)
    assert np.std(pm) == pytest.approx(np.pi / 32, rel=0.05)
    assert np.std(pv) == pytest.approx(np.pi / 512, rel=0.05)
    assert np.array_equal(socal.perturb_mean(m, h=(1 / 16, 1 / 256), rng=1), socal.perturb_mean(m, h=1 / 16, rng=1))


@pytest.mark.parametrize("h", [1 / 4, 1 / 16, 1 / 64])
def test_the_matched_pair_keeps_the_degree_and_a_finer_variance_axis_needs_more(h):
    for n in (1e3, 1e4, 1e6):
        assert socal.paper_degree(n, (h, h / 4)) == socal.paper_degree(n, h)
        assert socal.paper_degree(n, (h, h)) == socal.paper_degree(n, h)
        assert socal.paper_degree(n, (h, h / 16)) > socal.paper_degree(n, h)
    assert resolution_degree((h, h / 4)) == resolution_degree(h)


def test_the_variance_bandwidth_unmasks_variance_miscalibration():
    """The motivating numbers: variances reported at a tenth of the truth hide below the reference at h = 1/16 and
    stand above it at (1/16, 1/64) (exact quadrature)."""
    pop = synthetic.overconfident_population()
    gap = {}
    for h in (1 / 16, (1 / 16, 1 / 64)):
        ref = truth.calibrated_reference(pop.means, pop.vars, h).ce2.value  # equal weights: the atoms themselves
        gap[h if isinstance(h, float) else "pair"] = pop.ce2(h).value - ref
    assert gap[1 / 16] < 0 < gap["pair"]


def test_estimators_and_platt_take_a_pair():
    pop = synthetic.toy_population()
    m, v, y = pop.sample(3000, h=(1 / 16, 1 / 64), rng=1)
    r = socal.ce2(m, v, y, h=(1 / 16, 1 / 64), debias=False, rng=0)
    assert 0 <= r.estimate <= 2.25  # CE2's range (socal.deviations.CE_RANGE)
    a = socal.ce1(m, y, h=(1 / 16, 1 / 64), debias=False, rng=0)
    b = socal.ce1(m, y, h=1 / 16, debias=False, rng=0)
    assert a.estimate == b.estimate
    platt = socal.SecondOrderPlatt(h=(1 / 16, 1 / 64), rng=0).fit(m, v, y)
    again = socal.SecondOrderPlatt.from_dict(__import__("json").loads(__import__("json").dumps(platt.to_dict())))
    assert np.allclose(again.transform(m, v)[0], platt.transform(m, v)[0])


@pytest.mark.parametrize("bad", [(0.0, 0.1), (0.1, -1.0), (0.1, 0.2, 0.3), (0.1, float("nan")), ("a", 0.1)])
def test_bad_pairs(bad):
    m, v, _, _ = synthetic.toy_population().sample_raw(50, rng=0)
    with pytest.raises(ValueError, match="'h'"):
        socal.perturb(m, v, h=bad, rng=0)


def test_cli_takes_two_bandwidths(tmp_path, capsys):
    path = tmp_path / "d.csv"
    assert main(["demo", "--write", str(path), "--n", "500"]) == 0
    capsys.readouterr()
    args = ["evaluate", str(path), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20"]
    assert main(args + ["--h", "1/16,1/64"]) == 0
    assert "1/16 on the mean, 1/64 on the variance" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(args + ["--h", "1/16,1/64,1"])
    assert "two for the mean and the variance axes" in capsys.readouterr().err
