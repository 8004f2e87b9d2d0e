"""The guided entry point: perturb raw scores, estimate CE2 and CE1, and read them against a calibrated reference."""

from __future__ import annotations

import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .tables import Tabular
from .pipeline import N_BOOT
from .checkpoint import as_checkpoint, rng_fingerprint
from ._results import CalibrationError
from .bandwidth import DEFAULT_BANDWIDTH, BandwidthChoice, choose_bandwidth
from ._typing import ArrayLike, Counts, Seed
from ._validation import (NONE_SEED, Rule, bool_rule, choice_rule, check_aligned, check_bandwidth, check_float,
                          check_labels, check_parameters, check_replicates, check_rng, check_scores, level_rule,
                          replicates_rule)
from .estimators import ce1, ce2
from .sources import Rows
from .perturb import perturb
from .recalibrate import FirstOrderPlatt
from .testing import CalibrationTest, calibration_test, fmt_p
from .truth import CalibratedReference, checked_reference

__all__ = ["evaluate", "Evaluation", "evaluate_recalibrated", "RecalibratedEvaluation", "DEFAULT_BANDWIDTH",
           "EVALUATE_PARAMETERS"]


def _bandwidth_or_auto(h, name, func, _):
    if isinstance(h, str):
        if h != "auto":
            raise ValueError(f"The 'h' parameter of {func} must be 'auto', a positive float or a pair (h_mean, "
                             f"h_var) of such floats. Got {h!r} instead.")
        return h
    return check_bandwidth(h, func, per_axis=True)


# the declarative table of evaluate's options, checked before the rows are read
ABOVE_LEVEL = 0.05  # "above the reference" needs the raw test to reject at this level too (the 90% interval's one side)
EVALUATE_PARAMETERS = {
    "h": Rule(_bandwidth_or_auto, "'auto', a positive float or a pair (h_mean, h_var)"),
    "ci": level_rule(allow_none=False),
    "n_boot": replicates_rule(),  # reads ci
    "progress": bool_rule(),
    "reference": choice_rule("auto", "chi2", "simulated", "beta", words="'auto', 'chi2', 'simulated' or 'beta'"),
}


def _h_words(h):
    """A bandwidth for a table cell: '0.0625' or '0.0625 (mean), 0.00181 (var)'."""
    if isinstance(h, (tuple, list)):
        return f"{h[0]:.3g} (mean), {h[1]:.3g} (var)"
    return "" if h is None else f"{h:.3g}"


@dataclass(frozen=True)
class Evaluation(Tabular):
    """What :func:`socal.evaluate` found: a test on the raw scores, then the size of the error after perturbation.

    Attributes
    ----------
    test : socal.CalibrationTest
        The second-order calibration test on the raw scores (:func:`socal.calibration_test`): ``test.pvalue``,
        where the evidence is, and the smallest effects it would likely see at this n.  No perturbation involved.
    ce2, ce1 : CalibrationError
        CE2 and CE1 of the perturbed predictor, with bootstrap intervals and bias-corrected values.  ``ce2`` is None
        when the bandwidth was chosen from the data (``h='auto'``) and no h that n supports keeps the reported
        variances (:attr:`bandwidth`, ``keeps_var``): a CE2 of scores whose variances the perturbation has replaced
        says nothing of the reported ones.  ``ce1`` is None by the same rule on the mean axis (``keeps_mean``), and
        where its interval lies below the calibrated reference while the test rejects the means at ABOVE_LEVEL (a
        blurred CE1 that the votes contradict): :attr:`ce1_note` says which.
    reference : socal.truth.CalibratedReference
        CE2^pert and CE1^pert of a perfectly calibrated raw predictor with the same raw scores at the same h.
    mean, var : ndarray, shape (n,)
        The perturbed scores: what to deploy (and to feed :class:`socal.SecondOrderPlatt`).
    h : float
    seed : int or None, the seed the perturbation and bootstrap were drawn from (None if a Generator was passed).
    var_shift, var_spread : float
        The median absolute difference between the perturbed and the raw variances, and the interquartile range of
        the raw variances: when the first exceeds the second, the perturbation swamps the reported variances (the
        perturbed CE2 then says little about them; the test on the raw scores is unaffected).
    bandwidth : socal.bandwidth.BandwidthChoice or None
        How h was chosen (``h='auto'``, the default); None for an h the caller gave.
    ce1_note : str
        Why CE1 was not estimated ("" where it was).
    ci : float
        The intervals' level.
    """

    test: CalibrationTest
    ce2: CalibrationError
    ce1: CalibrationError | None
    reference: CalibratedReference
    mean: np.ndarray = field(repr=False)
    var: np.ndarray = field(repr=False)
    h: float
    seed: int | None
    var_shift: float = float("nan")
    var_spread: float = float("nan")
    bandwidth: BandwidthChoice | None = None
    ce1_note: str = ""
    ci: float = 0.9

    @property
    def n(self) -> int:
        return int(len(self.mean))

    @property
    def verdict(self) -> str:
        """Where the perturbed CE2's interval lies relative to the calibrated reference (the size of the error; the
        test is :attr:`test`): 'above reference', 'within reference', 'below reference', or 'not estimated'
        (:attr:`ce2` None).  'above reference' is a claim that an error exists, so it also needs the raw test to
        reject at ABOVE_LEVEL (the interval's one-sided level): an interval above the reference without that is
        'above reference, not confirmed'.  The reference is a quadrature with an error estimate: the interval is
        above or below it only when it clears the reference's whole error band, so the verdict never rests on the
        quadrature's last digits."""
        if self.ce2 is None:
            return "not estimated"
        lo, hi = self.ce2.ci
        ref, err = self.reference.ce2.value, self.reference.ce2.error
        if lo > ref + err:
            # a claim that an error exists is made at the rate it states: the interval's lower end alone said
            # "above" on 11% of calibrated rare-event predictors where its one-sided level promises 5%; the raw
            # test at that level (its size measured in the tail, docs/calibration_test.md) confirms it or not
            if self.test.rest_pvalue <= ABOVE_LEVEL or self.test.impossible:
                return "above reference"
            return "above reference, not confirmed"
        if hi < ref - err:
            return "below reference"
        return "within reference"

    @property
    def swamped(self) -> bool:
        """True when the perturbation moved the variances by more than the raw variances' interquartile range."""
        return bool(self.var_shift > self.var_spread)

    def summary(self, *, full_test: bool = False) -> str:
        """The reading in plain words: the test's verdict in one paragraph (its regions and the effects it would
        miss are ``print(result.test)``: printing a test and then its evaluation does not repeat it; ``full_test``
        includes them, as ``socal evaluate`` prints), then the size of the error."""
        r2, r1, ref = self.ce2, self.ce1, self.reference
        level = int(round(self.ci * 100))
        hs = _fmt_h(self.h)
        wrap = (lambda ps: [textwrap.fill(p, 110) for p in ps])
        lines = self.test.summary().split("\n")
        if full_test:
            head = [f"Test on the raw scores (n = {self.n} items; no perturbation):"] + wrap(lines)
        else:
            head = [f"Test on the raw scores (n = {self.n} items; no perturbation; print(result.test) for where "
                    f"and what it would miss):"] + wrap([ln for ln in lines
                                                         if not ln.startswith(("The evidence is", "Likely unseen"))])
        pre = [] if self.bandwidth is None else [""] + wrap([self.bandwidth.describe()])
        table = ["", f"Size of the error, for the scores perturbed at h = {hs}"
                 + ("" if self.seed is None else f" (seed {self.seed})") + ":",
                 f"{'':<22}{'estimate':>10}   {f'{level}% interval':<18}{'calibrated reference':>22}"]
        if r2 is not None:
            table += [
                f"{'CE2 (mean and var)':<22}{r2.estimate:>10.4f}   [{r2.ci.low:.4f}, {r2.ci.high:.4f}]  "
                f"{_reference(ref.ce2):>20}",
                f"{'  mean term':<22}{r2.mean_term:>10.4f}   {'(plug-in)':<18}{_reference(ref.mean_term):>22}",
                f"{'  variance term':<22}{r2.moment_term:>10.4f}   {'(plug-in)':<18}"
                f"{_reference(ref.moment_term):>22}"]
        if r1 is not None:
            table.append(f"{'CE1 (mean only)':<22}{r1.estimate:>10.4f}   [{r1.ci.low:.4f}, {r1.ci.high:.4f}]  "
                         f"{_reference(ref.ce1):>20}")
        else:
            table.append(f"{'CE1 (mean only)':<22}{'not estimated':>13}{'':<15}{_reference(ref.ce1):>20}")
        ce1_after = [] if r1 is not None else [f"CE1 is not estimated: {self.ce1_note}"]
        if r2 is None:
            need = (f"n >= {self.bandwidth.needed_n:,} items" if self.bandwidth.needed_n is not None else
                    "reported variances that spread more (no n suffices under the degree cap)")
            after = [f"CE2 is not estimated: no bandwidth that n = {self.n} supports keeps the reported variances, "
                     f"so the perturbed CE2 could not be told apart from its reference (the perturbation would "
                     f"replace the variances by its own noise).  It would need {need}.  The test above reads the raw "
                     f"variances as they are" + ("; CE1 is the size of the means' error." if r1 is not None else
                                                 ".")] + ce1_after
            return "\n".join(head + pre + table + [""] + wrap(after))
        after = ["The reference is the CE2 that a predictor with nothing wrong (E[f*] = mean and Var[f*] = var at "
                 "every raw score) would have after the same perturbation: read the estimate against it, not "
                 "against 0."]
        v = self.verdict
        if v == "above reference":
            over = [f"{name} +{est - rv:.4f}" for name, est, rv in
                    (("mean term", r2.mean_term, ref.mean_term.value),
                     ("variance term", r2.moment_term, ref.moment_term.value)) if est > rv]
            after.append(f"The perturbed CE2 is above the reference (the whole interval is, by "
                         f"{r2.ci.low - ref.ce2.value - ref.ce2.error:.4f} at least)" + (f"; over the reference: {', '.join(over)}"
                                                                       if over else "") + ".  "
                         "socal.SecondOrderPlatt fitted on the perturbed scores (Evaluation.mean, .var) removes the "
                         "error it measures.")
        elif v == "above reference, not confirmed":
            after.append(f"The perturbed CE2's interval lies above the reference, but the test of the raw scores "
                         f"does not reject at level {ABOVE_LEVEL:g} ({fmt_p(self.test.rest_pvalue)}): the excess is "
                         f"not confirmed.  A calibrated predictor's interval lands above its reference more often "
                         f"than its level says where votes are rare, so socal claims an error only where both "
                         f"agree.")
        elif v == "below reference":
            after.append("The perturbed CE2 is below the reference (the whole interval is): the perturbed predictor "
                         "is closer to calibrated than a raw-calibrated one would be after the same perturbation.  "
                         "That says nothing in favour of the raw scores: the perturbation blurs them; the test above "
                         "is the check of the raw scores.")
        else:
            after.append(f"The perturbed CE2's interval contains the reference: at n = {self.n} and h = {hs} the "
                         f"error after perturbation is not told apart from the perturbation's own (the test above is "
                         f"the sharper check of the raw scores).")
        if self.swamped:
            after.append(f"Warning: the perturbation moved the variances by {self.var_shift:.3g} (median), more "
                         f"than the spread of the raw variances ({self.var_spread:.3g}, interquartile range): at "
                         f"h = {hs} the perturbed variances carry little of the reported ones.  h='auto' (the "
                         f"default) chooses the bandwidth from the spreads.")
        else:
            after.append(f"The perturbation moved the variances by {self.var_shift:.3g} (median) against a spread "
                         f"of {self.var_spread:.3g} (interquartile range) in the raw variances.")
        after.append("Deploy the perturbed scores (Evaluation.mean, .var): the CE2 guarantee is about them.")
        return "\n".join(head + pre + table + [""] + wrap(after + ce1_after))

    def __format__(self, spec):
        """``f"{ev:.4f}"`` formats the CE2 estimate (CE1's where CE2 was not estimated); an empty spec is str()."""
        if not spec:
            return str(self)
        est = self.ce2 if self.ce2 is not None else self.ce1
        return format(float("nan") if est is None else est.estimate, spec)

    def __str__(self) -> str:
        return self.summary()

    def _rows(self):
        """One row per quantity: the test's p-value, CE2 and CE1 with their intervals and calibrated references."""
        out = [{"quantity": "test p-value (raw scores)", "value": self.test.pvalue, "ci_low": None, "ci_high": None,
                "reference": None, "verdict": "rejected" if self.test.pvalue <= 0.05 else "not rejected at 0.05",
                "n": self.n, "h": _h_words(self.h)}]
        for name, r, ref in (("CE2 (perturbed)", self.ce2, self.reference.ce2.value),
                             ("CE1 (perturbed)", self.ce1, self.reference.ce1.value)):
            out.append({"quantity": name, "value": None if r is None else r.estimate,
                        "ci_low": None if r is None or r.ci is None else r.ci.low,
                        "ci_high": None if r is None or r.ci is None else r.ci.high, "reference": ref,
                        "verdict": self.verdict if name.startswith("CE2") else "", "n": self.n,
                        "h": _h_words(self.h)})
        return out

    def to_dict(self) -> dict:
        """JSON-safe summary (without the perturbed scores)."""
        ref = self.reference
        return {"n": self.n, "h": self.h, "seed": self.seed, "test": self.test.to_dict(), "verdict": self.verdict,
                "var_shift": self.var_shift, "var_spread": self.var_spread, "swamped": self.swamped,
                "ce2": None if self.ce2 is None else self.ce2.to_dict(),
                "ce1": None if self.ce1 is None else self.ce1.to_dict(), "ce1_note": self.ce1_note,
                "bandwidth": None if self.bandwidth is None else
                {"h": list(self.bandwidth.h), "wanted": list(self.bandwidth.wanted),
                 "floor": list(self.bandwidth.floor), "spread": list(self.bandwidth.spread),
                 "keeps_mean": self.bandwidth.keeps_mean, "keeps_var": self.bandwidth.keeps_var,
                 "needed_n": self.bandwidth.needed_n},
                "reference": {"ce2": ref.ce2.value, "ce2_error": ref.ce2.error, "mean_term": ref.mean_term.value,
                              "moment_term": ref.moment_term.value, "ce1": ref.ce1.value, "method": ref.method}}


def _plain_h(h):
    return list(h) if isinstance(h, tuple) else h


def _fmt_h(h):
    if isinstance(h, tuple):
        return f"({_fmt_h(h[0])} on the mean, {_fmt_h(h[1])} on the variance)"
    inv = 1.0 / h
    return f"1/{round(inv)}" if abs(inv - round(inv)) < 1e-9 else f"{h:g}"


def evaluate(raw_mean: ArrayLike, raw_var: ArrayLike, labels: ArrayLike | None = None, *, counts: Counts | None = None,
             h: float | tuple[float, float] | str = "auto", ci: float = 0.9, n_boot: int = N_BOOT, rng: Seed = 0,
             progress: bool = False, checkpoint: Any = None, reference: str = "auto") -> Evaluation:
    """Evaluate a predictor's (mean, variance) for second-order calibration, the guided way.

    0. Test second-order calibration of the raw scores (:func:`socal.calibration_test`): a p-value, where the
       evidence is, and the smallest effects the test would likely see at this n.  It needs no perturbation.
    1. Perturb the raw scores with the sech kernel at bandwidth ``h`` (:func:`socal.perturb`), from ``rng``, each
       item's draws keyed by its scores and label counts (the same items give the same numbers in any order).  Why:
       the paper's guarantee (rate O(log^{3/2} n / sqrt(n))) is about the *perturbed* predictor, whose calibration
       functions are analytic; the perturbed scores are what you deploy, and what is measured.
    2. Estimate CE2 and CE1 of the perturbed predictor from the labels (:func:`socal.ce2`, :func:`socal.ce1`, with
       bootstrap intervals at level ``ci`` and bias correction).
    3. Compute the reference (:func:`socal.truth.calibrated_reference`): the CE2^pert and CE1^pert that a perfectly
       calibrated raw predictor with exactly these raw scores would have at this h: the size of the error is read
       against the reference, not against 0.

    Parameters
    ----------
    raw_mean, raw_var : array_like, shape (n,)
        The predictor's own scores: mean in [0, 1], variance in [0, mean (1 - mean)] (e.g. an ensemble's mean and
        the variance of its members' probabilities).
    labels : array_like, shape (n, k), k >= 2
        0/1 labels from k independent annotators per item.  For C >= 3 classes (below): class votes 0..C-1, -1 for
        a missing vote.
    counts : tuple (positives, trials), optional
        Instead of ``labels``: per-item counts (trials >= 2, may vary by item).
    h : 'auto', float or (float, float), default 'auto'
        'auto': chosen per axis from the raw scores and n (:mod:`socal.bandwidth`: the perturbation moves each
        score, in the median, by at most half its axis's spread, never more than (1/16, 1/64), never below what n
        supports); where no supported h keeps the reported variances, CE2 is not estimated (``ce2`` None) and the
        summary names the n that would be needed.  Otherwise the perturbation bandwidth, one for both axes or one
        per axis (h_mean, h_var), used as given; each coordinate moves by
        about 1.6 h (the standard deviation of a sech kernel of scale h is pi h / 2).  Larger h: a noisier deployed
        predictor and a larger reference, but smoother calibration functions, so a lower degree suffices.  Smaller
        h: scores closer to the raw ones, but the degree the rate needs grows like 2 log n / asinh(pi h) (at
        n = 10^4: 95 at h = 1/16, 376 at h = 1/64; socal caps it at ``max_degree`` = 44).  Per axis, the ellipse of
        the variance axis [0, 1/4] matches the mean axis's at h_var = h_mean / 4 (:func:`socal.paper_degree`: the
        same degree as h_mean alone), so the default keeps the paper's 1/16 on the mean and blurs the variance
        axis four times less than a single 1/16 would: blurred that much, variances reported too small can fall
        below the calibrated reference and hide.  At least a tenth of the reference quadrature's panels (h_mean
        >= 1/5120, h_var >= 1/10240) with up to 64 distinct raw scores, one step of its grid beyond (both
        >= 1/1024); a smaller h raises a ValueError before any work.  The rule was chosen on the validation zoo
        (``benchmarks/bandwidth.py``; the table is in the docs' guide, "Choosing h").  Read the estimate against
        the reference, never against 0.
    ci : float
        Level of the bootstrap intervals.
    n_boot : int
        Bootstrap replicates: at least 20 and 2 / (1 - ci) (see :func:`socal.ce2`).
    rng : numpy.random.Generator, int or None, default 0
        Perturbation and bootstrap (same seed, same numbers; the CLI's ``--seed`` has the same default).  None is
        the same fixed seed, as in every socal function (``np.random.default_rng()`` for fresh entropy).
    progress : bool
        Progress bars on stderr counting the work done (rows read, rows of the bootstrap world, rows evaluated under
        the refits), kept with their elapsed time; tqdm's when it is installed, a plain counter otherwise.
    reference : {'auto', 'chi2', 'simulated', 'beta'}
        The test's reference law (:func:`socal.calibration_test`): 'auto' simulates the votes under calibration
        where they are too rare for the chi-square (its seed: ``rng`` when an int, else 0); 'beta' draws f* from the
        Beta law for items with k >= 3 labels, an assumption the null does not make.
    checkpoint : str, PathLike or socal.Checkpoint, optional
        Make the run resumable (:mod:`socal.checkpoint`): the test's, CE2's and CE1's passes share one checkpoint
        file, saved atomically as they go; the rows are split into chunks of ``Checkpoint.rows``.  A rerun with the
        same file after a kill skips what was done and prints the same numbers bit for bit; a file from other
        settings or other data is refused, naming what differs.  A Generator is recorded by its state as the call
        found it, so a rerun must pass one in the same state.

    Returns
    -------
    Evaluation
        ``print(result)`` gives the reading; ``result.mean``, ``result.var`` are the perturbed scores.
    (For C >= 3 classes, ``socal.evaluate`` routes to :func:`socal.multiclass.evaluate_multiclass`:
    :mod:`socal.dispatch`.)

    Examples
    --------
    >>> import socal
    >>> pop = socal.synthetic.calibrated_population()
    >>> m, v, f, y = pop.sample_raw(3000, rng=0)
    >>> res = socal.evaluate(m, v, y, h=1/16, rng=0, n_boot=50)
    >>> res.test.pvalue > 0.05, res.verdict
    (True, 'within reference')
    """
    func = "evaluate"
    # the options first (the declarative table), then the rows, each once: the test, CE2 and CE1 below read them
    # as they are (socal.sources.Rows)
    got = check_parameters(EVALUATE_PARAMETERS, func, dict(h=h, ci=ci, n_boot=n_boot, progress=progress,
                                                             reference=reference))
    h, ci, n_boot = got["h"], got["ci"], got["n_boot"]
    if isinstance(raw_mean, Rows):  # validated by the public call that hands them on (the multiclass evaluation)
        m, v, a, k = raw_mean.astuple()
    else:
        m, v = check_scores(raw_mean, raw_var, func, raw=True, names=("raw_mean", "raw_var"))
        check_aligned(func, (("raw_mean", raw_mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
        a, k = check_labels(labels, m.shape[0], func, counts=counts)
    choice = None
    if h == "auto":
        if m.shape[0] < 10:
            raise ValueError(f"The 'raw_mean' parameter of {func} must have at least 10 items. Got {m.shape[0]} "
                             f"instead.")
        choice = choose_bandwidth(m, v)
        h = choice.h  # a pair of floats, as a given h is held after its check
    cp = as_checkpoint(checkpoint, func)
    if cp is not None:
        cp.start(func, dict(h=_plain_h(h), ci=ci, n_boot=n_boot, rng=rng_fingerprint(rng)))
    seed = rng if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    seed = NONE_SEED if rng is None else seed  # None is the fixed seed (socal._validation.check_rng)
    # child streams: a user who drew the data from default_rng(seed) and passes the same seed here must not get
    # perturbations made of the same uniforms (they would correlate with the data)
    pert_rng, boot_rng = check_rng(rng, "evaluate").spawn(2)
    # first: an h narrower than the reference resolves is refused before the work (socal.truth)
    ref = checked_reference(m, v, h, "auto", func)
    # the test's simulated reference (where votes are rare) is seeded by the same int seed (a Generator: seed 0)
    test = calibration_test(Rows(m, v, a, k), progress=progress, checkpoint=cp, rng=seed, reference=reference)
    # keyed by the scores and the label counts: the same items give the same perturbed scores in any order, and
    # items with equal scores but other labels keep their own draws
    pm, pv = perturb(m, v, h=h, rng=pert_rng, key=np.column_stack([a, k]))
    shift = float(np.median(np.abs(pv - v)))
    spread = float(np.subtract(*np.percentile(v, [75, 25])))
    # the perturbed scores are feasible by construction (socal.perturb) and the labels were checked above: handed on
    # as Rows, which ce2 and ce1 read as they are
    kw = dict(h=h, ci=ci, n_boot=n_boot, rng=boot_rng, progress=progress, checkpoint=cp)
    r2 = ce2(Rows(pm, pv, a, k), **kw) if choice is None or choice.keeps_var else None
    r1, note = None, ""
    if choice is not None and not choice.keeps_mean:
        note = (f"no bandwidth that n = {m.shape[0]} supports keeps the reported means (they spread over "
                f"{choice.spread[0]:.3g}; keeping them needs h_mean <= {choice.wanted[0]:.3g}, n supports "
                f">= {choice.floor[0]:.3g}), so the perturbed CE1 would measure the perturbation's blur, not the "
                f"means' error.  The test above reads the raw means as they are.")
    else:
        r1 = ce1(Rows(pm, None, a, k), **kw)
        err = getattr(ref.ce1, "error", 0.0) or 0.0
        if r1.ci.high < ref.ce1.value - err and test.mean_part.pvalue <= ABOVE_LEVEL:
            # a blurred CE1 below what a calibrated predictor would show, where the votes reject the means: it
            # would read "closer to calibrated than calibrated" for a predictor the test says is not (issue 69)
            note = (f"its interval [{r1.ci.low:.4f}, {r1.ci.high:.4f}] lies below the calibrated reference "
                    f"{ref.ce1.value:.4f} while the test rejects the means ({fmt_p(test.mean_part.pvalue)}): at "
                    f"h = {_fmt_h(h)} the perturbation blurs the means' error, so the perturbed CE1 does not measure "
                    f"it.  The test above reads the raw means as they are.")
            r1 = None
    return Evaluation(test=test, ce2=r2, ce1=r1, reference=ref, mean=pm, var=pv, h=h,
                      seed=None if seed is None else int(seed), var_shift=shift, var_spread=spread,
                      bandwidth=choice, ce1_note=note, ci=float(ci))


@dataclass(frozen=True)
class RecalibratedEvaluation(Tabular):
    """What :func:`evaluate_recalibrated` found for recalibrated scores on held-out items.

    Attributes
    ----------
    test : socal.CalibrationTest
        The second-order calibration test of the recalibrated predictor on its own level sets.
    ce2 : CalibrationError
        CE2 of the recalibrated predictor, estimated on its own scores (no further perturbation); for a
        second-order map its calibrated reference is 0 (Proposition "Exact second-order Platt scaling": the exact
        map is calibrated).
    mean, var : ndarray, shape (n,)
        The recalibrated scores (m', var') of the held-out items.
    second_order : bool
        False for a first-order map (:class:`socal.FirstOrderPlatt`), which outputs var' = 0: even its exact map
        is second-order calibrated only where f* is constant on its level sets, so its CE2 has no reference 0 (it
        measures the epistemic spread the map leaves out).
    in_sample : bool
        True when the items are the very rows the map was fitted on (their fingerprint,
        :class:`socal.rowkeys.RowsFingerprint`, is the one the map recorded): the test and CE2 are then in-sample
        and biased towards calibration, and the summary says so first.
    fit_overlap : (float, int) or None
        Otherwise, the estimated share of the items whose content (mean and labels) is among the rows the map was
        fitted on, and how many items the estimate read (the fingerprint's sketch; exact when the map was fitted on
        fewer than 256 distinct rows).  Above 0, the test and CE2 are partly in-sample and the summary says so
        first.  None for a map saved without a sketch, or when the sketch's range holds none of the items.
    """

    test: CalibrationTest
    ce2: CalibrationError
    mean: np.ndarray = field(repr=False)
    var: np.ndarray = field(repr=False)
    second_order: bool = True
    in_sample: bool = False
    fit_overlap: tuple | None = None

    def summary(self) -> str:
        r = self.ce2
        level = int(round(r.ci.level * 100))
        if self.in_sample:
            lines = textwrap.wrap(f"Recalibrated scores on the {r.n} items the recalibrator was fitted on: the test "
                                  f"and CE2 below are in-sample, biased towards calibration; evaluate on items it was "
                                  f"not fitted on.", 110)
        elif self.fit_overlap is not None and self.fit_overlap[0] > 0:
            share, read = self.fit_overlap
            lines = textwrap.wrap(f"Recalibrated scores on {r.n} items, about {share:.0%} of which match rows the "
                                  f"recalibrator was fitted on (estimated from {read} of them): the test and CE2 "
                                  f"below are partly in-sample, biased towards calibration; evaluate on items it was "
                                  f"not fitted on.", 110)
        else:
            lines = [f"Recalibrated scores on {r.n} held-out items (test of their own calibration):"]
        lines += [textwrap.fill(p, 110) for p in self.test.summary().split("\n")]
        why = ("reference 0: the exact recalibration map is calibrated on its level sets" if self.second_order else
               "no reference 0: a first-order map reports var' = 0, so even the exact map is second-order calibrated "
               "only where f* is constant on its level sets; this is the epistemic spread it leaves out")
        lines += [""] + textwrap.wrap(f"CE2 of the recalibrated predictor: {r.estimate:.4f}, {level}% interval "
                                      f"[{r.ci.low:.4f}, {r.ci.high:.4f}] ({why}).", 110)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _rows(self):
        r = self.ce2
        return [{"quantity": "test p-value (recalibrated scores)", "value": self.test.pvalue, "ci_low": None,
                 "ci_high": None, "reference": None, "n": r.n, "in_sample": self.in_sample},
                {"quantity": "CE2 (recalibrated)", "value": r.estimate, "ci_low": None if r.ci is None else r.ci.low,
                 "ci_high": None if r.ci is None else r.ci.high, "reference": 0.0 if self.second_order else None,
                 "n": r.n, "in_sample": self.in_sample}]

    def to_dict(self) -> dict:
        return {"n": self.ce2.n, "second_order": self.second_order, "reference": 0.0 if self.second_order else None,
                "in_sample": self.in_sample,
                "fit_overlap": None if self.fit_overlap is None else {"share": self.fit_overlap[0],
                                                                      "items_read": self.fit_overlap[1]},
                "test": self.test.to_dict(), "ce2": self.ce2.to_dict()}


def _reference(tv):
    """A reference value as the summary prints it: four decimals, with its quadrature error where that shows in
    them (a bandwidth near the quadrature's resolution limit)."""
    return f"{tv.value:.4f}" if tv.error < 5e-5 else f"{tv.value:.4f} +- {tv.error:.4f}"


def evaluate_recalibrated(recalibrator: Any, mean: ArrayLike, var: ArrayLike, labels: ArrayLike | None = None, *,
                          counts: Counts | None = None, ci: float = 0.9, n_boot: int = N_BOOT,
                          rng: Seed = None) -> RecalibratedEvaluation:
    """Evaluate a fitted :class:`socal.SecondOrderPlatt` on held-out items: the one route for recalibrated scores.

    The recalibrated scores T(S) = (eta1-hat(S), eta2-hat(S) - eta1-hat(S)^2) (Eq. (That)) are already a function of
    the perturbed scores S, so they are evaluated as they are, with no second perturbation (perturbing them again
    would measure another predictor).  The test (:func:`socal.calibration_test`) asks whether T is second-order
    calibrated on its own level sets; CE2 is estimated on T's scores by :func:`socal.ce2` (with ``h=None``: the
    degree is chosen by cross-validation), and its reference is 0, since the exact map is calibrated (Proposition
    "Exact second-order Platt scaling"; Corollary "approx_recal" bounds the estimated map's CE2 by
    O(log^{3/2} n / sqrt(n))).

    Parameters
    ----------
    recalibrator : SecondOrderPlatt
        Fitted on *other* items' perturbed scores and labels (on the same items the test is biased towards
        calibration: given the very rows it was fitted on, in any order, the result says so, ``in_sample``, with
        a warning; a partial overlap is estimated from the map's sketch of its fit rows, ``fit_overlap``, with a
        warning when any item matches).  A :class:`socal.FirstOrderPlatt` is evaluated too; its
        scores claim var' = 0, and its CE2 has no reference 0 (:attr:`RecalibratedEvaluation.second_order`).
    mean, var : array_like, shape (n,)
        The held-out items' perturbed scores (what :func:`socal.evaluate` returns as ``Evaluation.mean, .var``).
    labels, counts
        The held-out items' labels (k >= 2).
    ci, n_boot, rng
        As in :func:`socal.ce2`.

    Returns
    -------
    RecalibratedEvaluation

    Notes
    -----
    Where the fitted eta2-hat reaches eta1-hat, the projected map claims var' = m' (1 - m'), that f* is 0 or 1;
    a held-out item there whose labels disagree cannot occur under that claim, and the test rejects with p = 0
    (it says how many such items there are).  That is a real defect of the fitted map, not of the data.

    Examples
    --------
    >>> import socal
    >>> m, v, f, y = socal.synthetic.toy_population().sample_raw(6000, rng=0)
    >>> ev = socal.evaluate(m, v, y, rng=0, n_boot=20)
    >>> platt = socal.SecondOrderPlatt(h=1/16).fit(ev.mean[:3000], ev.var[:3000], y[:3000])
    >>> after = socal.evaluate_recalibrated(platt, ev.mean[3000:], ev.var[3000:], y[3000:], rng=0, n_boot=20)
    >>> bool(ev.test.mean_part.pvalue <= 1e-3 < 0.05 < after.test.mean_part.pvalue)  # the means, before and after
    True
    """
    func = "evaluate_recalibrated"
    if not hasattr(recalibrator, "transform") or not hasattr(recalibrator, "predict_moments"):
        hint = " (a saved map: pass SecondOrderPlatt.from_dict(d))" if isinstance(recalibrator, dict) else ""
        raise ValueError(f"The 'recalibrator' parameter of {func} must be a fitted socal.SecondOrderPlatt or "
                         f"FirstOrderPlatt. Got {type(recalibrator).__name__} instead{hint}.")
    m, v = check_scores(mean, var, func)
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    counts = check_labels(labels, m.shape[0], func, counts=counts)  # (positives, trials), in memory
    ci = check_float(ci, "ci", func, 0.0, 1.0, lo_open=True, hi_open=True)
    n_boot = check_replicates(n_boot, func, ci=ci)
    fitted_on = getattr(recalibrator, "fit_rows_", None)
    in_sample, overlap = (False, None) if fitted_on is None else fitted_on.match(m, *counts)
    if in_sample:
        warnings.warn(f"{func}: these {m.shape[0]} items are the ones the recalibrator was fitted on; its test and "
                      f"CE2 on them are in-sample, biased towards calibration.", UserWarning, stacklevel=2)
    elif overlap is not None and overlap[0] > 0:
        warnings.warn(f"{func}: about {overlap[0]:.0%} of these {m.shape[0]} items match rows the recalibrator was "
                      f"fitted on (estimated from {overlap[1]} of them); its test and CE2 on them are partly "
                      f"in-sample, biased towards calibration.", UserWarning, stacklevel=2)
    mt, vt = recalibrator.transform(m, v)
    mt = np.clip(mt, 0.0, 1.0)
    vt = np.minimum(vt, mt * (1.0 - mt))  # (eta1, eta2) projected: var' <= m'(1 - m') up to round-off
    test = calibration_test(mt, vt, counts=counts)
    r2 = ce2(mt, vt, counts=counts, ci=ci, n_boot=n_boot, rng=rng)
    return RecalibratedEvaluation(test=test, ce2=r2, mean=mt, var=vt,
                                  second_order=not isinstance(recalibrator, FirstOrderPlatt), in_sample=in_sample,
                                  fit_overlap=overlap)
