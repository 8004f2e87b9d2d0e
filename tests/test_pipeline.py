"""socal.pipeline: the estimator settings checked before the data are read (splits, replicates, prebuilt statistics)."""

import pytest

import socal


def test_prebuilt_statistics_refuse_another_split_instead_of_ignoring_it(small):
    """ce2(stats, chunks=..., folds=10) and holdout=0.2 ran on the statistics' own 5 folds and said nothing (the
    split is fixed when the statistics are built); so did SecondOrderPlatt(folds=10).fit(stats).  Another split is
    now refused, naming both; the statistics' own split, or 'folds' at its default, is taken."""
    m, v, y = small
    stats = socal.SufficientStats(max_degree=6, folds=4).update(m, v, y)
    chunks = [(m, v, y)]
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(10\\) is not the split .* \\(folds=4\\)"):
        socal.ce2(stats, chunks=chunks, folds=10, debias=False)
    with pytest.raises(ValueError, match="'holdout' parameter of ce2 \\(0.2\\) is not the split"):
        socal.ce2(stats, chunks=chunks, holdout=0.2, debias=False)
    with pytest.raises(ValueError, match="'folds' parameter of SecondOrderPlatt.fit \\(10\\)"):
        socal.SecondOrderPlatt(folds=10).fit(stats)
    assert socal.ce2(stats, chunks=chunks, folds=4, debias=False).selection.folds == 4
    assert socal.ce2(stats, chunks=chunks, debias=False).selection.folds == 4  # the default: as built
    held = socal.SufficientStats(max_degree=6, holdout=0.25).update(m, v, y)
    assert socal.ce2(held, chunks=chunks, holdout=0.25, debias=False).selection.method == "holdout"
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(3\\) .* \\(holdout=0.25\\)"):
        socal.ce2(held, chunks=chunks, folds=3, debias=False)


def test_folds_beside_a_holdout_split_is_refused(small):
    """ce2(..., holdout=0.2, folds=10) and SufficientStats(folds=10, holdout=0.2) used the hold-out split and
    dropped the folds silently; both are named now (folds at its default is accepted, as before)."""
    m, v, y = small
    with pytest.raises(ValueError, match="'folds' parameter of ce2 \\(10\\) would be ignored with holdout=0.2"):
        socal.ce2(m, v, y, holdout=0.2, folds=10, debias=False)
    with pytest.raises(ValueError, match="'folds' parameter of SufficientStats \\(10\\) would be ignored"):
        socal.SufficientStats(folds=10, holdout=0.2)
    assert socal.ce2(m, v, y, holdout=0.2, debias=False).selection.method == "holdout"


def test_n_boot_without_the_bootstrap_is_refused(small):
    """ce2(..., debias=False, n_boot=500) drew nothing and said nothing, where the CLI refuses --n-boot with
    --no-interval; the API now says so too (n_boot left at its default is accepted)."""
    m, v, y = small
    with pytest.raises(ValueError, match="'n_boot' parameter of ce2 \\(500\\) would be ignored with debias=False"):
        socal.ce2(m, v, y, debias=False, n_boot=500)
    with pytest.raises(ValueError, match="'n_boot' parameter of ce1"):
        socal.ce1(m, y, debias=False, n_boot=40)
    assert socal.ce2(m, v, y, debias=False).ci is None


def test_a_holdout_split_leaving_a_side_empty_is_refused():
    """holdout=0.999 on 500 items trained on half an item: selection fell back to a constant fit and returned 0.43
    (the default CE2 estimate is 0.21); holdout=0.001 validated on none.  As K folds need 2 items each, each side of
    a hold-out split now needs 2."""
    m, v, y = socal.synthetic.toy_population().sample(500, h=1 / 16, rng=0)
    for holdout, sides in ((0.999, "0.5 items to train on and 499.5 to validate"),
                           (0.001, "499.5 items to train on and 0.5 to validate")):
        with pytest.raises(ValueError, match=r"'holdout' parameter of ce2 must leave at least 2 of the 500 items on "
                                             r"each side \(a fraction in \[0\.004, 0\.996\]\)\. Got "
                                             + f"{holdout} instead, {sides}"):
            socal.ce2(m, v, y, holdout=holdout, debias=False)
    assert 0 < socal.ce2(m, v, y, holdout=0.996, debias=False).estimate < 1
