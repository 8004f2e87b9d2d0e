"""The estimators' pipeline: settings -> source -> statistics -> selection and fit -> deviations -> bootstrap.

One call of :func:`socal.ce2` (or ``ce1``, ``calibration_functions``, the recalibrators' ``fit``) runs, in order:

1. :func:`estimator_settings`: every option validated before the data are read;
2. :func:`data_source`: arrays, a chunk stream, dask collections or prebuilt :class:`SufficientStats`, as a source
   (:mod:`socal.sources`) whose rows are validated once;
3. :func:`fit_from`: the statistics pass (:class:`StatsPass`), the candidate degrees and ridges
   (:mod:`socal.degrees`) and the selection and final solve (:mod:`socal.fitting`);
4. :func:`estimate`, for the CE estimators: the deviation pass at each candidate fit (:mod:`socal.deviations`), the
   bootstrap (:mod:`socal.bootstrap`) and the choice between candidates (:mod:`socal.lepski`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .checkpoint import as_checkpoint, rng_fingerprint
from ._results import CalibrationError, ConfidenceInterval, DegreeEstimate, UpperBound
from ._validation import (bandwidth_rule, bool_rule, check_parameters, check_rng, choice_rule, float_rule,
                          int_rule, level_rule, replicates_rule)
from .bootstrap import DEFAULT_OPTIONS, bootstrap
from .weights import PoissonWeights
from .world import DeviationWorldPass, SecondMomentPass, second_moment_fit, world_fraction
from .degrees import (DEFAULT_FOLDS, MAX_DEGREE, check_degree, check_n, resolve_alphas, resolve_degrees, stream_cap,
                      training_rows)
from .deviations import DeviationPass
from .fitting import SEARCHES, select_and_fit
from .lepski import Candidate, choose_degree, finer_fits
from .sources import ArraySource, ChunkSource, DaskSource, check_rows, input_kind
from .rowkeys import CensusPass
from .snapshots import targets
from .sufficient import SufficientStats
from .testing import TestPass

N_BOOT = 200  # the default bootstrap replicates (ce2, ce1, evaluate, the CLI)

__all__ = ["N_BOOT", "DEFAULT_FOLDS", "Settings", "estimator_settings", "data_source", "StatsPass", "fit_from",
           "estimate", "same_rows", "check_prebuilt", "check_split"]


@dataclass(frozen=True)
class Settings:
    """Validated options of an estimator call (everything but the data)."""

    h: float | None
    degree: object
    ridge: object  # as given: None, a float or a list (the grid: alphas)
    folds: int
    holdout: float | None
    max_degree: int
    fold_rng: np.random.Generator | None  # the caller's generator, or None (deterministic folds, bootstrap seed 0)
    ci: float | None
    n_boot: int
    search: str = "greedy"
    upper: float | None = None
    alphas: tuple = ()  # the ridge grid (:func:`socal.degrees.resolve_alphas`), resolved once per call
    select_alpha: bool = True  # whether the grid holds more than one ridge to choose from
    folds_given: bool = True  # False: 'folds' was left out (None): DEFAULT_FOLDS, or the split prebuilt statistics carry


# the declarative table of the estimators' options (ce2, ce1, the recalibrators' fit), checked before any data
ESTIMATOR_PARAMETERS = {
    "h": bandwidth_rule(allow_none=True),
    "ci": level_rule(),
    "upper": level_rule(),
    "n_boot": replicates_rule(),  # reads ci and upper
    "folds": int_rule(2, 100, allow_none=True),
    "holdout": float_rule(0.0, 1.0, lo_open=True, hi_open=True, allow_none=True),
    "max_degree": int_rule(0, MAX_DEGREE),
    "search": choice_rule(*SEARCHES),
    "debias": bool_rule(),
    "progress": bool_rule(),
}


def estimator_settings(func, *, ndim, h, degree, ridge, folds=None, holdout=None, max_degree, rng, ci=None,
                       n_boot=None, search="greedy", upper=None):
    """The validated options of an estimator call (everything but the data), shared by the recalibrators: the
    table :data:`ESTIMATOR_PARAMETERS`, then the rules between options (the split, the first-order bandwidth).
    Every setting is named; ``ndim`` is the fit's dimension (1: the mean alone, as CE1 and a first-order map fit;
    2: mean and variance), and a bandwidth pair is read on the mean axis alone when it is 1, for every caller
    alike (it once depended on the caller's name, so FirstOrderPlatt took the pair and ce1 its first entry)."""
    rng = check_rng(rng, func) if rng is not None else None
    # None is "not given": a value equal to the default is a value the caller gave (issue 74)
    n_boot = N_BOOT if n_boot is None else n_boot
    got = check_parameters(ESTIMATOR_PARAMETERS, func, dict(h=h, ci=ci, upper=upper, n_boot=n_boot, folds=folds,
                                                            holdout=holdout, max_degree=max_degree, search=search))
    h = got["h"]
    if ndim == 1 and isinstance(h, tuple):  # the first-order fit lives on the mean axis alone
        h = h[0]
    check_split(func, got["folds"], holdout)
    check_degree(func, degree, h)
    alphas, select_alpha = resolve_alphas(func, ridge)
    folds = got["folds"]
    return Settings(h=h, degree=degree, ridge=ridge, folds=DEFAULT_FOLDS if folds is None else folds,
                    holdout=got["holdout"], max_degree=got["max_degree"], fold_rng=rng, ci=got["ci"],
                    n_boot=got["n_boot"], search=got["search"], upper=got["upper"], alphas=alphas,
                    select_alpha=select_alpha, folds_given=folds is not None)


def data_source(func, ndim, mean, var, labels, counts, chunks, responses=None, second_pass=True, checkpoint=None):
    """(source, prebuilt statistics or None) from arrays, dask collections, SufficientStats or a chunk source.

    ``second_pass`` False: the caller needs the fit alone (:func:`socal.calibration_functions`), so statistics
    need no 'chunks' (the source is then None).  With a started ``checkpoint``
    (:class:`socal.checkpoint.Checkpoint`) the passes resume and save (:class:`ChunkSource`): arrays are split into
    chunks of ``checkpoint.rows`` rows; dask collections are refused (dask recomputes what a lost worker held)."""
    kind = input_kind(func, (mean, var, labels, counts), chunks, prebuilt=(SufficientStats,))
    if kind == "validated":  # validated by the public call that passes them on
        rows = mean.astuple() if ndim == 2 else (mean.m, None, mean.a, mean.k)
        if checkpoint is not None:
            return ChunkSource.from_arrays(*rows, func, ndim, responses, rows=checkpoint.rows,
                                           checkpoint=checkpoint), None
        return ArraySource(*rows), None
    if kind == "prebuilt":
        if var is not None or labels is not None or counts is not None:
            raise ValueError(f"With SufficientStats as the first argument of {func}, the data come from 'chunks'; "
                             f"'var', 'labels' and 'counts' must be None.")
        if chunks is None and not second_pass:
            return None, mean.view(ndim, responses or ndim)
        if chunks is None:
            raise ValueError(f"The 'chunks' parameter of {func} is needed with SufficientStats: the CE average is a "
                             f"second pass over the data (the absolute deviations at the fitted functions).")
        stats = mean.view(ndim, responses or ndim)
        return ChunkSource(chunks, func, ndim, responses, checkpoint=checkpoint), stats
    if kind == "chunks":
        return ChunkSource(chunks, func, ndim, responses, checkpoint=checkpoint), None
    if kind == "dask":
        if checkpoint is not None:
            raise ValueError(f"The 'checkpoint' parameter of {func} is for chunks and in-memory arrays; a dask run "
                             f"recomputes the partitions a lost worker held by itself. Got dask collections.")
        return DaskSource(mean, var, labels, counts, func, ndim, responses), None
    rows = check_rows(func, ndim, mean, var, labels, counts, responses or ndim)
    if checkpoint is not None:
        return ChunkSource.from_arrays(*rows, func, ndim, responses, rows=checkpoint.rows, checkpoint=checkpoint), None
    return ArraySource(*rows), None


class StatsPass:
    """The statistics pass: per-chunk :class:`SufficientStats` (a template fixes the cap, folds and fold seed).
    ``repeats``: the fold hashes several rows share and their counts (:class:`FoldCensusPass`), or 'here' when the
    one chunk is every row; rows of one content are then spread over the folds as separate items
    (:meth:`SufficientStats.add_targets`)."""

    def __init__(self, template, repeats=None):
        self.template, self.repeats = template, repeats

    def __call__(self, index, m, v, a, k):
        return self.template.empty_like().add_validated(m, v, a, k, repeats=self.repeats)


class FoldCensusPass(CensusPass):
    """The :class:`socal.rowkeys.KeyCensus` of the rows' fold hashes (:meth:`SufficientStats.fold_hash`), before
    the statistics pass of a chunked source."""

    def __init__(self, template):
        super().__init__()
        self.template = template

    def keys(self, m, v, a, k):
        t = self.template
        z1, z2 = targets(a, k)
        return t.fold_hash(m, v if t.ndim == 2 else None, np.column_stack([z1, z2])[:, : t.n_responses])




def check_split(func, folds, holdout):
    """A ValueError for both 'folds' (given: not None) and 'holdout': the hold-out split replaces the K folds, so
    the folds would be ignored."""
    if holdout is not None and folds is not None:
        raise ValueError(f"The 'folds' parameter of {func} ({folds!r}) would be ignored with holdout={holdout!r}: one "
                         f"hold-out split replaces the K folds; pass one of them.")


def check_prebuilt(func, stats, opts):
    """A ValueError when the caller asks for another split than the one prebuilt statistics carry: the folds (or
    the hold-out split) are fixed when a :class:`SufficientStats` is built, so 'folds' and 'holdout' would be
    silently ignored.  'folds' left out (None) means "as built"."""
    built = f"holdout={stats.holdout}" if stats.holdout is not None else f"folds={stats.folds}"
    if opts.holdout is not None and opts.holdout != stats.holdout:
        raise ValueError(f"The 'holdout' parameter of {func} ({opts.holdout}) is not the split of the SufficientStats "
                         f"passed ({built}): the split is fixed when the statistics are built; build them with "
                         f"holdout={opts.holdout}, or leave 'holdout' out.")
    if opts.holdout is None and opts.folds_given and (stats.holdout is not None or opts.folds != stats.folds):
        raise ValueError(f"The 'folds' parameter of {func} ({opts.folds}) is not the split of the SufficientStats "
                         f"passed ({built}): the folds are fixed when the statistics are built; build them with "
                         f"folds={opts.folds}, or leave 'folds' out.")


def fit_from(source, stats, opts, ndim, func, progress=False, responses=None, use_h_floor=True):
    """Statistics (built unless given) -> degree/alpha candidates -> selection and fit."""
    if stats is not None:
        check_prebuilt(func, stats, opts)
    if stats is None:
        if isinstance(source, ArraySource):  # n is known: statistics only up to the degree that will be used
            n = source.chunk[0].shape[0]
            check_n(func, n, 2 if opts.holdout is not None else opts.folds, opts.holdout)
            cap = resolve_degrees(func, opts.degree, opts.h, n, training_rows(n, opts.folds, opts.holdout),
                                  opts.max_degree, ndim, use_h_floor)[0][0]
        else:
            cap = stream_cap(func, opts)
        template = SufficientStats(max_degree=cap, ndim=ndim, folds=opts.folds, holdout=opts.holdout,
                                   rng=opts.fold_rng, responses=responses)
        # rows of one content go to the folds as separate items: counted in the pass when the array is every row,
        # otherwise in a pass of their own first (the counts must cover every chunk)
        census = None if isinstance(source, ArraySource) else source.map_reduce(
            FoldCensusPass(template), progress=progress, desc=f"{func}: rows of one content")
        repeats = "here" if census is None else census.duplicated()
        stats = source.map_reduce(StatsPass(template, repeats), progress=progress, desc=f"{func}: statistics")
        if census is not None:
            same_rows(func, stats.n, census.rows, "the census of rows of one content", built=True)
    n = stats.n
    check_n(func, n, stats.folds, stats.holdout)
    n_train = training_rows(n, stats.folds, stats.holdout)
    cap = min(opts.max_degree, stats.max_degree) if opts.degree is None else opts.max_degree
    degs, sel_d = resolve_degrees(func, opts.degree, opts.h, n, n_train, cap, ndim, use_h_floor)
    return select_and_fit(stats, degrees=degs, alphas=opts.alphas, select=sel_d or opts.select_alpha,
                          search=opts.search), stats


def same_rows(func, n_stats, n_read, what, *, built):
    """A ValueError unless a pass read as many rows (``n_read``, in ``what``) as the statistics hold (``n_stats``):
    ``built``, the statistics came from the same source (which then gave other rows on another pass); otherwise
    the caller's :class:`SufficientStats` describe other rows than its ``chunks``.  Every pass of an estimate reads
    the same rows: a source that changes between passes would mix fits, averages and draws of different data."""
    if int(round(n_stats)) == int(n_read):
        return
    if built:
        raise ValueError(f"The 'chunks' source of {func} gave {int(round(n_stats))} rows to the statistics pass and "
                         f"{int(n_read)} to {what}: it must give the same rows on every pass (a callable must "
                         f"return the same chunks each time it is called).")
    raise ValueError(f"The SufficientStats passed to {func} hold {int(round(n_stats))} rows and 'chunks' gave "
                     f"{int(n_read)} to {what}: build the statistics from the same rows as 'chunks'.")


def estimate(kind, ndim, mean, var, labels, *, counts, chunks, h, degree, ridge, folds, holdout, max_degree, ci,
             upper, debias, n_boot, rng, progress, search, checkpoint=None, options=DEFAULT_OPTIONS):
    """The CE estimators' whole pipeline (:func:`socal.ce2`, :func:`socal.ce1`): a :class:`CalibrationError`.
    ``options``: the bootstrap's :class:`socal.bootstrap.BootstrapOptions` (the benchmarks', through
    :func:`socal.estimators.ce_with_options`)."""
    check_parameters(ESTIMATOR_PARAMETERS, kind, dict(debias=debias, progress=progress))
    cp = as_checkpoint(checkpoint, kind)
    seed_id = rng_fingerprint(rng)  # before any draw: a Generator's state as the call found it
    opts = estimator_settings(kind, ndim=ndim, h=h, degree=degree, ridge=ridge, folds=folds, holdout=holdout,
                              max_degree=max_degree, rng=rng, ci=ci, n_boot=n_boot, search=search, upper=upper)
    if cp is not None:
        cp.start(kind, dict(h=opts.h, degree=repr(degree), ridge=repr(ridge), folds=opts.folds, holdout=opts.holdout,
                            max_degree=opts.max_degree, ci=opts.ci, upper=opts.upper, debias=bool(debias),
                            n_boot=opts.n_boot, rng=seed_id, search=opts.search))
    if not debias and (opts.ci is not None or opts.upper is not None):
        raise ValueError(f"The 'ci' and 'upper' parameters of {kind} need debias=True: the interval and the bound "
                         f"are built around the bias-corrected estimate. Got debias=False with "
                         f"ci={opts.ci!r}, upper={opts.upper!r}.")
    if not debias and n_boot is not None:  # as the CLI refuses --n-boot with --no-interval
        raise ValueError(f"The 'n_boot' parameter of {kind} ({opts.n_boot}) would be ignored with debias=False: "
                         f"the plug-in alone draws no bootstrap replicates; leave 'n_boot' out or set debias=True.")
    source, stats = data_source(kind, ndim, mean, var, labels, counts, chunks, checkpoint=cp)
    built = stats is None
    if not built and opts.fold_rng is not None:
        # the draw a build of the statistics takes from the seed (their folds' salt): statistics the caller built
        # with the same seed (SufficientStats(rng=seed), the torch metric's) then give the bootstrap the seed the
        # one-shot call gives it, so the two agree (socal.torchmetric)
        opts.fold_rng.integers(0, 2**63 - 1, dtype=np.int64)
    # the headline: CV, checked against finer degrees by Lepski's rule; the plug-in alone keeps the former default
    fit, stats = fit_from(source, stats, opts, ndim, kind, progress, use_h_floor=not debias)
    fits = [fit]
    if debias:
        fits += finer_fits(stats, fit, opts, kind)
    # one seed, so the candidates' bootstraps are coupled; none drawn without them (a caller's generator stays put);
    # with rng omitted the seed is fixed, so the result is deterministic (every draw is keyed by row content)
    seed = None
    if debias:
        seed = 0 if opts.fold_rng is None else int(opts.fold_rng.integers(0, 2**63 - 1, dtype=np.int64))
    cands, weights = [], PoissonWeights()  # the candidates' bootstraps share their item weights
    spread = None
    if debias and ndim == 1:  # the first-order world's spread of f* among items of one score (k >= 2 labels)
        spread = source.map_reduce(SecondMomentPass(max(f.calmap.degree for f in fits)), progress=progress,
                                   desc=f"{kind}: the spread of f* for the bootstrap world")
    duplicates = None  # the keys that several rows share, counted in the first candidate's pass
    for f in fits:
        world = second = None
        if spread is not None:
            second = second_moment_fit(spread, f.calmap.degree, f.calmap.alpha)
        if debias:  # the deviations and the bootstrap world from one evaluation of the map per row
            # one seed, one meaning: the bootstrap's row keys.  The census (first candidate only) counts the keys
            # that the bootstrap's draws use, and the world's subset is keyed by the same keys (hashed once per chunk)
            both = source.map_reduce(DeviationWorldPass(f.calmap, second,
                                                        census_seed=seed if duplicates is None else None,
                                                        weights=weights,
                                                        fraction=world_fraction(round(stats.n), options.world_rows),
                                                        seed=seed),
                                     progress=progress,
                                     desc=f"{kind}: deviations and the bootstrap world at degree {f.calmap.degree}")
            dev, world = both.dev, both.world
            if duplicates is None:
                duplicates = both.census.duplicated()
            del both  # a chunked source's census holds every distinct key: not kept past its duplicates
        else:
            dev = source.map_reduce(DeviationPass(f.calmap), progress=progress,
                                    desc=f"{kind}: deviations at degree {f.calmap.degree}")
        same_rows(kind, stats.n, dev.n, f"the deviations at degree {f.calmap.degree}", built=built)
        plugin = dev.mean_term + dev.moment_term
        boot = None
        if debias:
            boot = bootstrap(source, f, plugin, n_boot=opts.n_boot, seed=seed, level=opts.ci, upper=opts.upper,
                             progress=progress, weights=weights, name=f"{kind} bootstrap at degree {f.calmap.degree}",
                             world=world, second=second, duplicates=duplicates, options=options)
        cands.append(Candidate(f, dev, plugin, boot))
    k, rule = choose_degree(cands)
    chosen = cands[k]
    boot, interval, bound = chosen.boot, None, None
    if boot is not None:
        # the interval and bound cover every candidate's: the choice between them is data-driven (a switch to a
        # finer degree is likelier where noise lifted the finer estimate), and a finer degree has less smoothing bias
        if boot.ci is not None:
            interval = ConfidenceInterval(min(c.boot.ci.low for c in cands), max(c.boot.ci.high for c in cands),
                                          boot.ci.level)
        if boot.upper is not None:
            bound = UpperBound(max(c.boot.upper.value for c in cands), boot.upper.level)
    null_p = None
    if interval is not None and interval.low > 0:
        # joined with the confidence set {0} of the calibration test of CE = 0 on the same rows, at level 1 - ci
        # (the union of two confidence sets, each valid under its own condition: ce2's Notes); not run where the
        # lower end is 0 already
        null = source.map_reduce(TestPass(ndim, checked=True, groups=False), progress=progress,
                                 desc=f"{kind}: the calibration test of {kind.upper()} = 0")
        # the chi-square reference, as when the interval's coverage at CE = 0 was measured (docs/numbers.md): the
        # simulated reference of sparse votes (socal.reference) is not yet measured inside this union
        null_p = 0.0 if null.impossible else float(null.test(reference="chi2").pvalue)
        if null_p >= 1.0 - interval.level:
            interval = ConfidenceInterval(0.0, interval.high, interval.level)
    fit, dev = chosen.fit, chosen.dev
    reports = tuple(_degree_estimate(c, i == k) for i, c in enumerate(cands))
    return CalibrationError(estimate=boot.debiased if debias else chosen.plugin, mean_term=dev.mean_term,
                            moment_term=dev.moment_term, degree=fit.calmap.degree, ridge=fit.calmap.alpha, n=dev.n,
                            h=opts.h, ci=interval, debiased=None if boot is None else boot.debiased,
                            bias=None if boot is None else boot.bias,
                            selection=dataclasses.replace(fit.selection, rule=rule), kind=kind,
                            plugin=chosen.plugin, upper=bound, candidates=reports, null_pvalue=null_p)


def _degree_estimate(cand, chosen):
    """A :class:`DegreeEstimate` of one Lepski candidate: its plug-in, and with its bootstrap the bias bracket, the
    corrected estimate, the plug-in's bootstrap SD, the interval and the bound."""
    calmap, boot = cand.fit.calmap, cand.boot
    out = dict(degree=int(calmap.degree), ridge=float(calmap.alpha), plugin=float(cand.plugin), chosen=chosen)
    if boot is not None:
        low, high = sorted(float(b) for b in boot.biases)
        out.update(estimate=float(boot.debiased), bias_low=low, bias_high=high, noise_sd=float(np.std(boot.deltas)),
                   ci=boot.ci, upper=boot.upper)
    return DegreeEstimate(**out)
