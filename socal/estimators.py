"""The polynomial estimators of CE2 (Eq. (erm1), (erm2), (cehat)) and CE1 (Remark "First-Order Calibration").

The public face: :func:`ce2`, :func:`ce1` and :func:`calibration_functions`.  What they run is the pipeline of
:mod:`socal.pipeline` (settings, source, statistics, selection and fit, deviations, bootstrap, Lepski's rule).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._results import CalibrationError
from ._typing import ArrayLike, Chunks, Counts, Degree, Ridge, Seed
from ._validation import RENAMED, check_bool, check_scores, renamed_ridge, warn_renamed_attribute
from .checkpoint import Checkpoint
from .degrees import DEFAULT_MAX_DEGREE
from .pipeline import data_source, estimate, estimator_settings, fit_from
from .sufficient import SufficientStats

__all__ = ["ce2", "ce1", "ce_with_options", "calibration_functions", "CalibrationFunctions"]

_ESTIMATOR_NOTES = """
    The headline is bias-corrected.  The plug-in (Eq. (cehat); ``plugin`` of the result, and the estimate itself
    with ``debias=False``) is biased upwards where the truth is small: for zero-mean noise e in eta-hat,
    E abs(g + e) >= abs(g) (Jensen), so noise can only add to abs(eta-hat - score) on average.  A parametric bootstrap
    prices that noise.  In the world of the fitted, projected calibration functions (labels Binomial(k, f*), f* with the
    fitted moments; for k = 2 the law of the counts depends on those moments alone, other k take f* ~ Beta), the
    polynomial refitted at the selected degree and ridge is linear in the labels, so ``n_boot`` refits are drawn
    from the exact mean and covariance of the redrawn labels' right-hand sides (Gaussian: a sum of n independent
    rows; one pass over the data, :mod:`socal.bootstrap`), and each refit's plug-in is compared with its world's
    truth.  Two worlds bracket the bias:

    * the fitted functions themselves (the one-step correction).  Their own noise already moves abs(eta-hat - score)
      away from 0, so this world sees too little of the bias;
    * the fitted miscalibration g-hat = eta-hat - score soft-thresholded at tau times its pointwise bootstrap
      spread, with tau chosen so that this world's mean plug-in equals the observed plug-in.  It shrinks real
      structure too, so it sees too much.

    The estimate subtracts the mean of the two corrections, clipped at 0 (``bias`` of the result).

    Degree.  Cross-validated squared error picks the degree that best predicts labels; the CE functional can need
    more, since structure of width ~h in the score costs little squared error and is exactly the error.  So the
    estimate is also computed at finer degrees, each with its ridge cross-validated: the degrees of the schedule
    above CV's with at least 50 training rows per coefficient (below that the bias correction, of order
    coefficients / rows, is itself too uncertain), the largest degree with that many (nothing checks the finest
    candidate's smoothing bias, so the comparison reaches as fine as the data support; the halving schedule alone
    can stop a factor 2 short), and, when ``h`` is given, the resolution degree ceil(1/(pi h)) below which a
    polynomial cannot follow structure of width h.  Lepski's rule (:mod:`socal.lepski`) chooses among them: the
    smallest degree whose bias-corrected estimate is within 2 standard errors of every finer one's.  The
    bootstraps of all candidates share their draws, so the spread of the difference of two candidates' bootstrap
    deviations is the standard error of the difference of their estimates.  ``selection.rule`` of the result says
    which degree was used and why.  With ``debias=False`` (the plug-in alone) the degree is CV's over the schedule,
    floored at ceil(1/(pi h)) when there are >= 50 training rows per coefficient.

    ``ci=level`` and ``upper=level`` come from the same bootstrap.  The interval is the bracket interval: the
    plug-in's bootstrap fluctuation around both corrected values, from the larger correction's lower end to the
    smaller's upper end, with no margin.  If the plug-in's bias lies between the two corrections it covers with
    probability at least ``level`` (the argument is in :func:`socal.bootstrap.bootstrap`).  With finer candidates it
    is the union of every candidate's interval; the union misses only where every candidate's interval misses, so it
    keeps the level as long as one candidate's bias lies in its bracket (a coarse degree's noise bias is small, a
    fine degree's smoothing bias is).  The upper bound is the same construction, one-sided.

    At CE = 0 the bracket fails: the plug-in's bias is then the whole of its noise, E abs(noise), while both bootstrap
    worlds keep some of the observed (noise) miscalibration and correct less (on calibrated populations the interval
    alone held 0 in too few samples; docs/numbers.md, "At CE = 0").  So the
    interval is joined with the confidence set of the point 0 that :func:`socal.calibration_test` gives on the
    same scores and labels (order 2 for CE2, 1 for CE1): where it does not reject CE = 0 at level 1 - ``level`` the
    lower end is 0 (``null_pvalue`` of the result; the test is run only where the candidates' interval stays above
    0).  The union of two confidence sets, each valid under its own condition, covers with at least the level of the
    one whose condition holds: at CE = 0 the test's (its size, measured), elsewhere the bracket's.  Scores outside the
    feasible region var <= m (1 - m) give p = 0, as CE2 > 0 for them outright (E[f*^2 | S] <= m < m^2 + var).  Both
    always contain the estimate.  They cover label noise (with the refit), the sampling of scores in the final average
    (Poisson(1) weights per item, the mergeable form of resampling items; above :data:`socal.refits.REFIT_ROWS` rows
    evaluated on a keyed subset with weights scaled to the full n), the bias correction's uncertainty and the degree
    choice.  They do not model how the fitted polynomial moves with a fresh draw of scores.  What these rules measure
    on populations with exact truth (coverage, bias, RMSE, width against RMSE, and why each rule is there) is in
    docs/numbers.md, beside ``python benchmarks/coverage.py`` which regenerates it.
"""


def _with_notes(func):
    """The shared Notes into ``func``'s docstring, in place of its ``{estimator_notes}`` line: a docstring must be a
    literal, so the text cannot be joined to it by ``+`` (that was an expression statement, and ``__doc__`` was
    None)."""
    func.__doc__ = func.__doc__.replace("    {estimator_notes}\n", _ESTIMATOR_NOTES.lstrip("\n"))
    return func


@_with_notes
def ce2(mean: ArrayLike | SufficientStats | None = None, var: ArrayLike | None = None, labels: ArrayLike | None = None,
        *, counts: Counts | None = None, chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
        ridge: Ridge = None, folds: int | None = None, holdout: float | None = None,
        max_degree: int = DEFAULT_MAX_DEGREE, ci: float | None = None, upper: float | None = None, debias: bool = True,
        n_boot: int | None = None, rng: Seed = None, progress: bool = False, search: str = "greedy",
        checkpoint: str | os.PathLike | Checkpoint | None = None, alpha: Any = RENAMED) -> CalibrationError:
    """Estimate the second-order calibration error CE2 of a sech-perturbed predictor.

    .. math::

        \\widehat{CE}_2 = \\frac1n\\sum_i |\\hat\\eta_1(S_i) - \\tilde m_i|
                        + \\frac1n\\sum_i |\\hat\\eta_2(S_i) - (\\tilde m_i^2 + \\tilde\\sigma^2_i)|

    (Eq. (cehat)), where eta1-hat and eta2-hat are tensor-Chebyshev ridge regressions of the targets
    a/k and a(a-1)/(k(k-1)) on the score (Eq. (erm1), (erm2); for k = 2 these are (y1 + y2)/2 and y1 y2, unbiased
    for f* and f*^2), clipped to [0, 1].

    Parameters
    ----------
    mean, var : array_like, shape (n,), or dask arrays / Series
        The *perturbed* scores the deployed predictor outputs (see :func:`socal.perturb`): mean in [0, 1],
        var in [0, 1/4].  The estimate is of CE2 of that perturbed predictor, CE2^pert.  Dask collections are
        reduced partition by partition (a tree of merged :class:`socal.SufficientStats`).  ``mean`` may instead be
        a :class:`socal.SufficientStats`, with the data for the second pass in ``chunks``.
    labels : array_like, shape (n, k), k >= 2
        k-snapshot labels in {0, 1}, k i.i.d. draws from Bernoulli(f*(x)) per item.
    counts : tuple (positives, trials), optional
        Instead of ``labels``: per-item counts of positive labels and of labels (trials >= 2, may vary by item).
    chunks : re-iterable source of chunks, optional
        Data larger than memory: a list of chunks, a callable returning an iterator of chunks, or a reader of
        :mod:`socal.io` (CSV, Parquet).  A chunk is a mapping with 'mean', 'var' and 'labels' or 'counts', or a
        tuple (mean, var, labels).  The data are read once for the statistics, once for the CE average and twice
        for the bootstrap (``debias=True``), and three times more for each finer degree Lepski's rule compares.  The
        result equals the in-memory one (to float summation order): every random number is keyed by row content,
        so the chunks may come in another order on each pass; a source that gives other rows on another pass (a
        row count that differs from the statistics') is a ValueError.
    h : float or (float, float), optional
        The perturbation bandwidth, or one per axis (h_mean, h_var).  With it the degree is capped by the paper's
        rule l = ceil(2 log n / log theta(h)) (per axis: :func:`socal.paper_degree`).
    degree : None, 'paper', int or list of ints
        None: cross-validated over a halving schedule from min(max_degree, paper rule, sqrt(n_train) - 1) down to
        4; with ``debias=True``, checked against finer degrees by Lepski's rule (Notes; with ``debias=False`` and
        ``h``, floored at ceil(1/(pi h)) when n allows, the former default).
        'paper': exactly the paper's rule (needs ``h``).  An int: that degree.  A list: chosen from it.
    ridge : None, float or list of floats
        Relative ridge: lambda = ridge tr(G)/d.  None: chosen from 1e-6, 1e-5, ..., 1 by cross-validation.
    folds : int or None
        K of K-fold cross-validation (the paper's "ERM, CV").  None (the default): 5, or the split that prebuilt
        :class:`SufficientStats` carry (another value than theirs is refused).  Ignored when nothing is to be
        selected.
    holdout : float, optional
        Select on one random hold-out split of this fraction instead of K-fold CV (the paper's "val" variant).
    max_degree : int
        Cap of the automatic schedule (44, the paper's cap at h = 1/16; it used 88 at h = 1/64).
    ci : float, optional
        Confidence level of a two-sided interval (e.g. 0.9; see Notes for what it covers).
    upper : float, optional
        Confidence level of a one-sided upper bound (e.g. 0.95: "CE2 <= U with 95% confidence").
    debias : bool
        True (default): the estimate is bias-corrected (Notes).  False: the paper's plug-in alone, with no bootstrap
        (``ci`` and ``upper`` need the bootstrap).
    n_boot : int or None
        Bootstrap replicates for the bias correction, ``ci`` and ``upper`` (None: 200; refused with debias=False,
        which draws none): at least 20, 2 / (1 - ci) and 1 / (1 - upper), so that one replicate is expected beyond each end of the interval and beyond the bound.
    rng : numpy.random.Generator or int, optional
        Seeds the fold assignment and the bootstrap; omitted, both use a fixed seed and the result is deterministic.
        Every random number is keyed by row content and the seed (:mod:`socal.rowkeys`), so the same data give the
        same estimate, interval and bound in any row order, chunking or dask partitioning.
    progress : bool
        Show a progress bar during the bootstrap (needs tqdm).
    search : {'greedy', 'exhaustive'}
        How cross-validation searches the (degree, alpha) grid.  'greedy' (default): degrees from the smallest up,
        a local walk over the ridge at each, stopping at the first degree that validates worse; it factorises the
        top degree's fold systems only when that degree is in contention, and chose the same (degree, alpha) as
        'exhaustive' on every grid measured but one (docs/numbers.md "Speed").  'exhaustive': every degree x alpha.
    checkpoint : str, PathLike or socal.Checkpoint, optional
        Make the run resumable (:mod:`socal.checkpoint`): every pass's statistics are saved to this file as they
        grow, atomically, with a fingerprint of the settings and of each chunk's rows; a rerun with the same file
        skips the chunks already folded and gives bit-identical numbers to a run that never stopped.  A file from
        other settings or other data is refused, naming what differs.  Arrays are split into chunks of
        ``Checkpoint.rows`` rows; dask collections are refused (dask recomputes lost partitions itself).

    Returns
    -------
    CalibrationError
        For C >= 3 classes (``mean`` (n, C) perturbed class probabilities, ``var`` a covariance (n, C, C) or class
        variances (n, C), ``labels`` class votes or ``counts`` (n, C)): a tuple of C, one per class (one-vs-rest),
        each class with its own child stream of ``rng``.  :func:`socal.evaluate` gives them with their references.

    Notes
    -----
    {estimator_notes}

    Examples
    --------
    >>> import numpy as np, socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(5000, h=1/16, rng=0)
    >>> res = socal.ce2(m, v, y, h=1/16, rng=0)
    >>> abs(res.estimate - pop.ce2(h=1/16).value) < 0.05
    True
    """
    ridge = renamed_ridge("ce2", ridge, alpha)
    return estimate("ce2", 2, mean, var, labels, counts=counts, chunks=chunks, h=h, degree=degree, ridge=ridge,
                     folds=folds, holdout=holdout, max_degree=max_degree, ci=ci, upper=upper, debias=debias,
                     n_boot=n_boot,
                     rng=rng, progress=progress, search=search, checkpoint=checkpoint)




@_with_notes
def ce1(mean: ArrayLike | SufficientStats | None = None, labels: ArrayLike | None = None, *,
        counts: Counts | None = None, chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
        ridge: Ridge = None, folds: int | None = None, holdout: float | None = None,
        max_degree: int = DEFAULT_MAX_DEGREE, ci: float | None = None, upper: float | None = None, debias: bool = True,
        n_boot: int | None = None, rng: Seed = None, progress: bool = False, search: str = "greedy",
        checkpoint: str | os.PathLike | Checkpoint | None = None, alpha: Any = RENAMED) -> CalibrationError:
    """Estimate the first-order calibration error CE1 = E abs(E[Y | m~] - m~) of a sech-perturbed predictor.

    The one-dimensional version of :func:`ce2` (Remark "First-Order Calibration"): a Chebyshev ridge regression of
    a/k on the perturbed mean, clipped to [0, 1], then (1/n) sum_i abs(eta-hat(m_i) - m_i).  ``labels`` may have
    k >= 1 columns, and a 1-D array is one label per item.  Parameters as in :func:`ce2`; ``moment_term`` of the
    result is 0.

    Notes
    -----
    {estimator_notes}
    For CE1 the bootstrap world has E[f* | m~] = the fitted eta1 and E[f*^2 | m~] a ridge fit (same degree and
    ridge) of the share of agreeing label pairs a (a - 1) / (k (k - 1)), projected to [eta1^2, eta1]: with k >= 2
    labels per item, the label share a/k varies by p1 (1 - p1)/k + (1 - 1/k) Var f* among items of one score, and a
    world with f* = eta1 on every item left the second term out (its refits then fluctuated up to 1/sqrt(2) as much
    as the plug-in; :func:`socal.snapshots.target_covariances`).  With one label per item the term is 0 and the
    world is f* = eta1.

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(5000, h=1/16, rng=0)
    >>> abs(socal.ce1(m, y, h=1/16, rng=0).estimate - pop.ce1(h=1/16).value) < 0.05
    True
    """
    ridge = renamed_ridge("ce1", ridge, alpha)
    return estimate("ce1", 1, mean, None, labels, counts=counts, chunks=chunks, h=h, degree=degree, ridge=ridge,
                     folds=folds, holdout=holdout, max_degree=max_degree, ci=ci, upper=upper, debias=debias,
                     n_boot=n_boot,
                     rng=rng, progress=progress, search=search, checkpoint=checkpoint)


def ce_with_options(kind: str, options: Any, *args: Any, **kwargs: Any) -> CalibrationError:
    """:func:`ce2` (``kind`` 'ce2') or :func:`ce1` ('ce1') of binary scores, with the bootstrap's
    :class:`socal.bootstrap.BootstrapOptions` in place of its defaults: the benchmarks' way to compare the
    bootstrap's rules (exact label draws, other subset sizes, the inner one-step) in one process, with no module
    state to set and restore.  ``args`` and ``kwargs`` are those of :func:`ce2` or :func:`ce1`, validated as they
    validate them.

    Examples
    --------
    >>> import socal
    >>> from socal.bootstrap import BootstrapOptions
    >>> m, v, y = socal.synthetic.toy_population().sample(2000, h=1/16, rng=0)
    >>> a = socal.ce2(m, v, y, h=1/16, degree=6, ridge=1e-3, ci=0.9, rng=0)
    >>> b = ce_with_options("ce2", BootstrapOptions(), m, v, y, h=1/16, degree=6, ridge=1e-3, ci=0.9, rng=0)
    >>> a.ci == b.ci
    True
    """
    import inspect

    funcs = {"ce2": ce2, "ce1": ce1}
    if kind not in funcs:
        raise ValueError(f"The 'kind' parameter of ce_with_options must be 'ce2' or 'ce1'. Got {kind!r} instead.")
    from .bootstrap import BootstrapOptions

    if not isinstance(options, BootstrapOptions):
        raise ValueError(f"The 'options' parameter of ce_with_options must be a socal.bootstrap.BootstrapOptions. "
                         f"Got {type(options).__name__} instead.")
    bound = inspect.signature(funcs[kind]).bind(*args, **kwargs)
    bound.apply_defaults()
    a = dict(bound.arguments)
    ndim = 2 if kind == "ce2" else 1
    var = a.pop("var") if kind == "ce2" else None
    mean, labels = a.pop("mean"), a.pop("labels")
    a["ridge"] = renamed_ridge("ce_with_options", a["ridge"], a.pop("alpha"))
    return estimate(kind, ndim, mean, var, labels, options=options, **a)


class CalibrationFunctions:
    """Fitted calibration functions eta1, eta2 as callables of (mean, var).

    Returned by :func:`calibration_functions`.  ``eta1(mean, var)`` and ``eta2(mean, var)`` evaluate at perturbed
    scores; calling the object returns both.  With ``project=True`` the pair is projected onto the feasible moment
    region 0 <= eta1 <= 1, eta1^2 <= eta2 <= eta1; otherwise each is clipped to [0, 1].
    """

    def __init__(self, calmap: Any, project: bool) -> None:
        self.map = calmap
        self.project = project

    @property
    def degree(self):
        return self.map.degree

    @property
    def ridge(self):
        """The relative ridge the fit used."""
        return self.map.alpha

    @property
    def alpha(self):
        """Deprecated: :attr:`ridge` (its former name)."""
        warn_renamed_attribute("CalibrationFunctions", "alpha", "ridge")
        return self.ridge

    def __call__(self, mean: ArrayLike, var: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(eta1, eta2) at the scores: arrays of the scores' length, or two floats for a scalar mean and var."""
        scalar = mean is not None and var is not None and np.ndim(mean) == 0 and np.ndim(var) == 0
        if scalar:  # one score, as numpy's functions take one: evaluated as a one-row array
            mean, var = np.reshape(mean, 1), np.reshape(var, 1)
        m, v = check_scores(mean, var, "CalibrationFunctions")
        out = self.map.predict(m, v, project=self.project)
        if scalar:
            return float(out[0, 0]), float(out[0, 1])
        return out[:, 0], out[:, 1]

    def eta1(self, mean: ArrayLike, var: ArrayLike) -> np.ndarray:
        """The fitted eta1 = E[Y | S] at the scores."""
        return self(mean, var)[0]

    def eta2(self, mean: ArrayLike, var: ArrayLike) -> np.ndarray:
        """The fitted eta2 = E[f*(X)^2 | S] at the scores."""
        return self(mean, var)[1]

    def __repr__(self):
        return f"CalibrationFunctions(degree={self.degree}, ridge={self.ridge:g}, project={self.project})"


def calibration_functions(mean: ArrayLike | SufficientStats | None = None, var: ArrayLike | None = None,
                          labels: ArrayLike | None = None, *, counts: Counts | None = None,
                          chunks: Chunks | None = None, h: float | None = None, degree: Degree = None,
                          ridge: Ridge = None, folds: int | None = None, holdout: float | None = None,
                          max_degree: int = DEFAULT_MAX_DEGREE, project: bool = True,
                          rng: Seed = None, search: str = "greedy", alpha: Any = RENAMED) -> CalibrationFunctions:
    """Fit eta1(s) = E[Y | S = s] and eta2(s) = E[f*(X)^2 | S = s] of a sech-perturbed predictor.

    The regressions of :func:`ce2` (Eq. (erm1), (erm2)), returned as callables.  ``mean``, ``var`` are the
    perturbed scores the deployed predictor outputs.  Parameters as in :func:`ce2`, except that
    :class:`SufficientStats` need no ``chunks`` here: the fit reads the statistics alone (:func:`ce2` passes over
    the rows again for the CE average), as :meth:`SecondOrderPlatt.fit` does.

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(4000, h=1/16, rng=1)
    >>> cf = socal.calibration_functions(m, v, y, h=1/16, rng=0)
    >>> e1, e2 = cf(m[:3], v[:3])
    >>> bool(((e1**2 <= e2 + 1e-12) & (e2 <= e1 + 1e-12)).all())
    True
    """
    check_bool(project, "project", "calibration_functions")
    ridge = renamed_ridge("calibration_functions", ridge, alpha)
    opts = estimator_settings("calibration_functions", ndim=2, h=h, degree=degree, ridge=ridge, folds=folds,
                              holdout=holdout, max_degree=max_degree, rng=rng, search=search)
    source, stats = data_source("calibration_functions", 2, mean, var, labels, counts, chunks, second_pass=False)
    fit, _ = fit_from(source, stats, opts, 2, "calibration_functions")
    return CalibrationFunctions(fit.calmap, bool(project))

