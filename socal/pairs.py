"""A strictly proper score for (mean, variance): the loss of the exact law of two labels of one item.

The law.  Two labels of one item are independent Bernoulli(f*(x)) draws, so under the prediction (m, var) their
joint law is fixed by its first two moments:

    P(1, 1) = m^2 + var,   P(1, 0) = P(0, 1) = m (1 - m) - var,   P(0, 0) = (1 - m)^2 + var,

and for C classes P(c, c') = m_c m_c' + Sigma_cc' (a mean vector and a covariance).  The log or Brier loss of that
law is a strictly proper scoring rule for (m, var) (and for (m, Sigma)): the pair law is a one-to-one function of
(m, m^2 + var), and the log and Brier scores are strictly proper for a law on four (C^2) outcomes.  It is the pair
objective of Johnson et al. (2024), and the joint log-loss at tau = 2 of the Neural Testbed (Osband et al. 2022).

With k >= 3 labels an item contributes the average over its k (k - 1) ordered pairs of distinct labels: an unbiased
U-statistic of the expected pair score under the item's true law.

Decomposition (population).  Grouping items by their prediction, the expected score splits as

    E[score] = E[D(Q | P)] + E[H(Q)],

with Q the pair law of the votes on the prediction's level set: Q(1, 1) = eta2, Q(1, 0) = eta1 - eta2,
Q(0, 0) = 1 - 2 eta1 + eta2, eta1 = E[Y | S] and eta2 = E[f*^2 | S] the paper's calibration functions (Eq. (calfns)).
D is the score's divergence (Kullback-Leibler for log, the squared distance for Brier) and H its entropy
(Shannon's, or 1 - sum q^2).  The first term, the *calibration term*, is 0 exactly when the predictor is
second-order calibrated, as CE2 is; the second, the *refinement term*, is what calibration cannot remove.  With
e1 = eta1 - m and e2 = eta2 - (m^2 + var) the Brier calibration term is E[6 e1^2 - 8 e1 e2 + 4 e2^2], a positive
definite form with eigenvalues 5 -+ sqrt(17), so

    CAL_brier <= (5 + sqrt 17) CE2  and  CE2 <= sqrt(2 CAL_brier / (5 - sqrt 17)) = 1.51 sqrt(CAL_brier),

and by Pinsker (||Q - P||_1 >= max(2|e1|, |e2|) >= 2/3 (|e1| + |e2|))  CE2 <= 3 / sqrt 2 sqrt(CAL_log) = 2.12
sqrt(CAL_log).  :func:`pair_score_terms` computes both terms where eta1 and eta2 are known (a population with exact
truth); ``verify`` and tests/test_pairs.py check the inequalities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._typing import ArrayLike, Counts
from ._validation import check_choice, check_float, check_labels, check_scores
from .tables import Tabular

__all__ = ["PairScore", "pair_score", "pair_score_terms", "BRIER_EIGENVALUES"]

BRIER_EIGENVALUES = (5.0 - math.sqrt(17.0), 5.0 + math.sqrt(17.0))  # of [[6, -4], [-4, 4]]: the Brier CAL form
EPS = 1e-9  # the log form's floor on a pair probability: a pair the prediction calls impossible costs -log(EPS)


@dataclass(frozen=True)
class PairScore(Tabular):
    """The pair score of one predictor on one data set.

    ``per_item``: each item's average loss over its ordered pairs of distinct votes; ``score``: their mean (lower is
    better); ``stderr``: its standard error over items; ``impossible``: the items with an observed pair to which the
    prediction gives probability 0 (the log form scores each such pair as -log(EPS); the Brier form needs no floor);
    ``form``: 'log' or 'brier'; ``classes``: 2 for (mean, var), C for (mean, cov)."""

    per_item: np.ndarray
    score: float
    stderr: float
    form: str
    classes: int
    impossible: np.ndarray

    @property
    def n(self) -> int:
        return int(self.per_item.size)

    def difference(self, other: PairScore, ci: float = 0.9) -> tuple[float, float, float]:
        """This score less ``other``'s on the same items, with a paired normal interval of level ``ci``: (diff,
        low, high).  Negative: this predictor is better.  The items must be the same and in the same order."""
        if not isinstance(other, PairScore):
            raise ValueError(f"The 'other' parameter of PairScore.difference must be a PairScore. Got "
                             f"{type(other).__name__} instead.")
        if other.n != self.n or other.form != self.form:
            raise ValueError(f"The 'other' parameter of PairScore.difference must score the same {self.n} items in "
                             f"the same form ({self.form!r}). Got {other.n} items, form {other.form!r} instead.")
        ci = check_float(ci, "ci", "PairScore.difference", 0.0, 1.0, lo_open=True, hi_open=True)
        from scipy import stats

        d = self.per_item - other.per_item
        mean = float(d.mean())
        se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else float("nan")
        z = float(stats.norm.ppf(0.5 + ci / 2.0))
        return mean, mean - z * se, mean + z * se

    def summary(self) -> str:
        """The score in one sentence, with its standard error and the items the prediction calls impossible."""
        kind = "(mean, var)" if self.classes == 2 else f"(mean, cov) over {self.classes} classes"
        imp = (f"; {self.impossible.size} item(s) have a pair the prediction gives probability 0 "
               f"(scored at -log {EPS:g} per pair)" if self.impossible.size and self.form == "log" else "")
        return (f"pair {self.form} score of {kind}: {self.score:.5g} +- {self.stderr:.2g} (standard error) over "
                f"{self.n:,} items; lower is better{imp}.")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict:
        """JSON-safe summary (the per-item scores left out)."""
        return {"form": self.form, "classes": self.classes, "score": self.score, "stderr": self.stderr,
                "n": self.n, "impossible": self.impossible.tolist()}

    def _rows(self):
        d = self.to_dict()
        d["impossible"] = len(d["impossible"])
        return [d]


def _pair_laws_binary(m, v):
    return m * m + v, m * (1.0 - m) - v, (1.0 - m) ** 2 + v  # P(1,1), P(1,0) = P(0,1), P(0,0)


def _binary_items(m, v, a, k, form):
    p11, p10, p00 = _pair_laws_binary(m, v)
    K = k * (k - 1.0)
    n11, n00, nmix = a * (a - 1.0), (k - a) * (k - a - 1.0), 2.0 * a * (k - a)
    tiny = 1e-15
    impossible = ((n11 > 0) & (p11 <= tiny)) | ((n00 > 0) & (p00 <= tiny)) | ((nmix > 0) & (p10 <= tiny))
    if form == "log":
        with np.errstate(divide="ignore"):
            lg = [np.log(np.maximum(p, EPS)) for p in (p11, p10, p00)]
        s = -(n11 * lg[0] + nmix * lg[1] + n00 * lg[2]) / K
    else:
        s = p11 ** 2 + 2.0 * p10 ** 2 + p00 ** 2 - 2.0 * (n11 * p11 + nmix * p10 + n00 * p00) / K + 1.0
    return s, impossible


def _multiclass_items(m, Sigma, A, form):
    k = A.sum(axis=1)
    K = k * (k - 1.0)
    P = m[:, :, None] * m[:, None, :] + Sigma  # (n, C, C): the pair law
    N = A[:, :, None] * A[:, None, :]
    idx = np.arange(A.shape[1])
    N[:, idx, idx] -= A  # ordered pairs of distinct votes: n_c (n_c - 1) on the diagonal
    impossible = ((N > 0) & (P <= 1e-15)).any(axis=(1, 2))
    if form == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            lg = np.where(N > 0, np.log(np.maximum(P, EPS)), 0.0)
        s = -(N * lg).sum(axis=(1, 2)) / K
    else:
        s = (P * P).sum(axis=(1, 2)) - 2.0 * (N * P).sum(axis=(1, 2)) / K + 1.0
    return s, impossible


def pair_score(mean: ArrayLike, var: ArrayLike | None = None, labels: ArrayLike | None = None, *,
               counts: Counts | ArrayLike | None = None, cov: ArrayLike | None = None, form: str = "log") -> PairScore:
    """The loss of the exact law of two labels under the prediction, averaged over each item's pairs of votes.

    A strictly proper score for (mean, var), and for (mean, cov) with C classes (module notes): its expectation is
    lowest, uniquely, at the predictor's true pair law, so it ranks two predictors by how honest their (mean,
    variance) is, where CE2 (not a scoring rule) does not.

    Parameters
    ----------
    mean : (n,) probabilities of class 1, with ``var`` (n,) in [0, m (1 - m)] (the predictor's raw scores); or (n, C)
        class probabilities with ``cov`` (n, C, C) (C >= 3).
    labels : (n, k) 0/1 labels (binary) or class indices (multiclass, -1 for a missing vote); or
    counts : (positives, trials) (binary) or (n, C) votes per class.  Every item needs 2 or more votes.
    form : 'log' (the pair log-loss, nats per pair) or 'brier' (the Brier score of the pair law).

    Returns
    -------
    PairScore, with ``difference`` for a paired comparison of two predictors on the same items.

    Notes
    -----
    An item whose votes contain a pair the prediction gives probability 0 (two positives at mean 0, a positive and a
    negative at var = m (1 - m), two votes for classes whose m_c m_c' + Sigma_cc' is 0) is named in ``impossible``;
    the log form counts each such pair as -log(1e-9) = 20.7 nats (a floor, as scikit-learn's log_loss clips), the
    Brier form is finite as it is.  A pair law below 0 is refused (:func:`socal.multiclass.check_multiclass`).

    Examples
    --------
    >>> import numpy as np, socal
    >>> m = np.array([0.2, 0.7]); v = np.array([0.01, 0.05])
    >>> s = socal.pair_score(m, v, np.array([[0, 1], [1, 1]]))
    >>> round(s.score, 4)  # items: -log P(0, 1) = -log 0.15; -log P(1, 1) = -log 0.54
    1.2567
    """
    func = "pair_score"
    form = check_choice(form, "form", func, ("log", "brier"))
    from ._validation import ndim_of

    if ndim_of(mean) == 2:
        from .multiclass import check_multiclass

        if var is not None:
            raise ValueError(f"The 'var' parameter of {func} is for binary scores; with (n, C) class probabilities "
                             f"pass the covariance as 'cov' (n, C, C).")
        if cov is not None and np.ndim(cov) == 2:
            raise ValueError(f"The 'cov' parameter of {func} must be the (n, C, C) covariance: the pair law m_c m_c' "
                             f"+ Sigma_cc' needs the covariances between classes, not the class variances alone.")
        m, Sigma, _, A = check_multiclass(mean, cov, labels, counts=counts, func=func)
        s, impossible = _multiclass_items(m, Sigma, A, form)
        C = m.shape[1]
    else:
        if cov is not None:
            raise ValueError(f"The 'cov' parameter of {func} is for (n, C) class probabilities; binary scores take "
                             f"'var'.")
        m, v = check_scores(mean, var, func, raw=True)
        a, k = check_labels(labels, m.size, func, counts=counts)
        s, impossible = _binary_items(m, v, a, k, form)
        C = 2
    n = s.size
    se = float(s.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    return PairScore(per_item=s, score=float(s.mean()), stderr=se, form=form, classes=C,
                     impossible=np.flatnonzero(impossible))


def pair_score_terms(mean: ArrayLike, var: ArrayLike, eta1: ArrayLike, eta2: ArrayLike,
                     form: str = "log") -> tuple[float, float, float]:
    """The population decomposition of the expected pair score of binary (mean, var): (score, calibration,
    refinement), each the average over the given items, where ``eta1`` = E[Y | S] and ``eta2`` = E[f*^2 | S] are known
    (a population with exact truth).  calibration = E[D(Q | P)] is 0 exactly at a second-order calibrated predictor;
    refinement = E[H(Q)]; score = calibration + refinement is the expected pair score (module notes)."""
    func = "pair_score_terms"
    form = check_choice(form, "form", func, ("log", "brier"))
    m, v = check_scores(mean, var, func, raw=True)
    e1 = np.asarray(eta1, float)
    e2 = np.asarray(eta2, float)
    if e1.shape != m.shape or e2.shape != m.shape:
        raise ValueError(f"The 'eta1' and 'eta2' parameters of {func} must have the shape of 'mean' {m.shape}.")
    if not (np.all(np.isfinite(e1)) and np.all(np.isfinite(e2))):
        raise ValueError(f"The 'eta1' and 'eta2' parameters of {func} must be finite.")
    if np.any(e2 < e1 * e1 - 1e-12) or np.any(e2 > e1 + 1e-12) or np.any((e1 < 0) | (e1 > 1)):
        raise ValueError(f"The 'eta1' and 'eta2' parameters of {func} must satisfy eta1 in [0, 1] and eta1^2 <= eta2 "
                         f"<= eta1 (moments of a probability f*).")
    q = np.stack([e2, e1 - e2, e1 - e2, 1.0 - 2.0 * e1 + e2])
    p11, p10, p00 = _pair_laws_binary(m, v)
    p = np.stack([p11, p10, p10, p00])
    q = np.clip(q, 0.0, 1.0)
    if form == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            qlogq = np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0)
            cross = np.where(q > 0, q * np.log(np.maximum(p, EPS)), 0.0)
        refinement = -qlogq.sum(axis=0)
        calibration = (qlogq - cross).sum(axis=0)
    else:
        refinement = 1.0 - (q * q).sum(axis=0)
        calibration = ((q - p) ** 2).sum(axis=0)
    cal, ref = float(calibration.mean()), float(refinement.mean())
    return cal + ref, cal, ref
