"""scikit-learn compatibility of the recalibrators (issue 15): check_estimator with every expected failure listed
and reasoned, the same properties on valid scores, Pipeline, GridSearchCV, clone, set_output."""

import pickle
import warnings

import numpy as np
import pytest

import socal
from socal import synthetic
from socal.recalibrate import sklearn_expected_failed_checks

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is optional (test extra)")
pd = pytest.importorskip("pandas", reason="pandas is optional (test extra)")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

ESTIMATORS = [socal.SecondOrderPlatt(degree=3, ridge=1e-3), socal.FirstOrderPlatt(degree=3, ridge=1e-3),
              socal.FirstOrderPlatt(ndim=2, degree=3, ridge=1e-3)]


@pytest.fixture(scope="module")
def data():
    m, v, y = synthetic.toy_population().sample(3000, h=1 / 16, rng=0)
    return np.column_stack([m, v]), y


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_check_estimator_with_listed_failures(est):
    expected = sklearn_expected_failed_checks(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=expected, on_fail=None)
    status = {}
    for r in results:
        status.setdefault(r["check_name"], set()).add(r["status"])
    failed = {name for name, st in status.items() if "failed" in st}
    assert not failed, f"checks failed that are not listed as expected: {failed}"
    xfailed = {name for name, st in status.items() if "xfail" in st}
    assert xfailed == set(expected), "the list of expected failures is out of date (a listed check now passes)"
    passed = {name for name, st in status.items() if st == {"passed"}}
    assert len(passed) >= 19  # parameters, clone, repr, tags, sparse, complex, empty data, y=None, ...
    assert all(len(reason) > 40 for reason in expected.values())


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_generic_properties_on_valid_scores(est, data):
    """The properties of the checks listed above, on scores inside the domain."""
    X, y = data
    y = y if est._second_order else y[:, :1]
    params = est.get_params()
    fitted = clone(est)
    assert fitted.fit(X, y) is fitted  # fit returns self
    assert est.get_params() == params and fitted.get_params() == params  # parameters untouched
    assert fitted.n_features_in_ == 2
    out = fitted.transform(X)
    assert out.shape == (len(X), 2) and out.dtype == np.float64
    before = dict(fitted.__dict__)
    fitted.transform(X)
    assert fitted.__dict__.keys() == before.keys()  # transform does not change the estimator
    again = clone(est).fit(X, y)
    np.testing.assert_array_equal(again.transform(X), out)  # idempotent
    np.testing.assert_array_equal(clone(est).fit_transform(X, y), out)
    perm = np.random.default_rng(0).permutation(len(X))
    # sample-order and subset invariance, to 1e-12 (socal's promise for any row order or chunking): the series is
    # evaluated by a BLAS product, whose kernels may round a row differently in another position of the block
    np.testing.assert_allclose(fitted.transform(X[perm]), out[perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(fitted.transform(X[:7]), out[:7], rtol=0, atol=1e-12)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(X), out)
    np.testing.assert_allclose(fitted.transform(X.astype(np.float32)), out, atol=1e-5)  # dtypes
    ro = np.asfortranarray(X.copy())
    ro.setflags(write=False)  # read-only, Fortran order
    np.testing.assert_array_equal(clone(est).fit(ro, y).transform(ro), out)
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 2 features as input"):
        fitted.transform(np.column_stack([X, X[:, :1]]))
    with pytest.raises(ValueError, match="'mean'.*in \\[0, 1\\]"):
        clone(est).fit(X + 2, y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        clone(est).fit(X)
    with pytest.raises(socal.NotFittedError):
        clone(est).transform(X)


def test_feature_names_and_set_output(data):
    X, y = data
    df = pd.DataFrame(X, columns=["m", "v"], index=np.arange(len(X)) + 100)
    est = socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(df, y)
    assert list(est.feature_names_in_) == ["m", "v"]
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(df.rename(columns={"v": "var"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.transform(X)
    out = est.set_output(transform="pandas").transform(df)
    assert list(out.columns) == ["mean", "var"] and (out.index == df.index).all()
    np.testing.assert_array_equal(out.to_numpy(), socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(X, y).transform(X))
    assert isinstance(clone(est).fit(df, y).transform(df), pd.DataFrame)  # clone keeps the output choice
    with pytest.raises(ValueError, match="'transform'.*'default' or 'pandas'"):
        est.set_output(transform="polars-or-whatever")


def test_pipeline_and_set_output(data):
    X, y = data
    pipe = Pipeline([("recalibrate", socal.SecondOrderPlatt(degree=3, ridge=1e-3)),
                     ("sd", FunctionTransformer(lambda Z: np.column_stack([Z[:, 0], np.sqrt(Z[:, 1])]),
                                                feature_names_out="one-to-one"))])
    out = pipe.fit(X, y).transform(X)
    m2, v2 = socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(X[:, 0], X[:, 1], y).transform(X[:, 0], X[:, 1])
    np.testing.assert_allclose(out, np.column_stack([m2, np.sqrt(v2)]))
    pipe2 = Pipeline([("recalibrate", socal.SecondOrderPlatt(degree=3, ridge=1e-3))]).set_output(transform="pandas")
    assert list(pipe2.fit(pd.DataFrame(X, columns=["m", "v"]), y).transform(pd.DataFrame(X, columns=["m", "v"]))
                .columns) == ["mean", "var"]


def test_grid_search_over_degree(data):
    X, y = data
    degrees = [0, 1, 2, 4, 8]
    grid = GridSearchCV(socal.SecondOrderPlatt(ridge=1e-3), {"degree": degrees}, cv=3).fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and grid.best_params_["degree"] != 0
    assert scores[0] < scores.max() - 0.05  # a constant cannot follow the toy population's calibration functions
    assert grid.best_estimator_.degree_ == grid.best_params_["degree"]
    # GridSearchCV's criterion estimates the built-in selection's (other folds, same expectation)
    built_in = socal.SecondOrderPlatt(degree=degrees, ridge=1e-3, folds=3, search="exhaustive").fit(X, y).selection_
    cv_error = {d: built_in.cv_error[i, 0] for i, d in enumerate(built_in.degrees)}
    np.testing.assert_allclose(-scores, [cv_error[d] for d in degrees], atol=0.01)
    # score() is minus the built-in CV criterion: squared error against the unbiased targets, both responses
    est = socal.SecondOrderPlatt(degree=4, ridge=1e-3).fit(X[:2000], y[:2000])
    e1, e2 = est.predict_moments(X[2000:])
    a = y[2000:].sum(axis=1)
    want = -(np.mean((e1 - a / 2) ** 2) + np.mean((e2 - a * (a - 1) / 2) ** 2))
    assert est.score(X[2000:], y[2000:]) == pytest.approx(want, rel=1e-12)
    assert est.score(X[2000:, 0], X[2000:, 1], y[2000:]) == pytest.approx(want, rel=1e-12)


def test_counts_as_array_and_sparse_refused(data):
    X, y = data
    counts = np.column_stack([y.sum(axis=1), np.full(len(y), 2.0)])
    a = socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(X, counts=counts).transform(X)
    b = socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(X, y).transform(X)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    import scipy.sparse

    with pytest.raises(TypeError, match="Sparse data"):
        socal.SecondOrderPlatt(degree=3).fit(scipy.sparse.csr_matrix(X), y)
    with pytest.raises(ValueError, match="'y'.*k >= 2"):
        socal.SecondOrderPlatt(degree=3).fit(X, y[:, 0])


def test_feature_names_out_checks_input_features_as_scikit_learn_does(small):
    """get_feature_names_out(['a']) returned ('mean', 'var') for a map fitted on two columns; scikit-learn's
    transformers refuse input names that are not the fitted ones."""
    m, v, y = small
    X = np.column_stack([m, v])
    fit = socal.SecondOrderPlatt().fit(X, y)
    assert list(fit.get_feature_names_out(["x0", "x1"])) == ["mean", "var"]
    with pytest.raises(ValueError, match="'input_features' parameter .* must name the 2 feature"):
        fit.get_feature_names_out(["a"])
    pd = pytest.importorskip("pandas", reason="named columns need pandas")
    named = socal.SecondOrderPlatt().fit(pd.DataFrame(X, columns=["m", "v"]), y)
    assert list(named.get_feature_names_out(["m", "v"])) == ["mean", "var"]
    with pytest.raises(ValueError, match="must equal the feature names seen at fit"):
        named.get_feature_names_out(["v", "m"])
    with pytest.raises(socal.NotFittedError):
        socal.SecondOrderPlatt().get_feature_names_out(["m", "v"])
