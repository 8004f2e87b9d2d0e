"""The pair score (socal.pair_score): strictly proper on populations with exact truth, and two real ensembles
compared by it with a paired interval (docs/pair_score.md).

    python benchmarks/pair_score.py --propriety        # expected score of the calibrated (m, var) and of distortions
    python benchmarks/pair_score.py --chaosnli         # RoBERTa x3 against BERT x3 and a TF-IDF ensemble on ChaosNLI

Propriety.  On a population with exact truth the expected pair score of any reported (m', var') is computed exactly
(socal.pairs.pair_score_terms with eta1, eta2 the truth's), so the table has no Monte Carlo noise in the labels; n
items drawn once from numpy.random.default_rng(7000).  A sampled check beside it scores k = 2 votes drawn from the
same items (default_rng(7001)) and gives the paired 90% interval of each distortion's score less the calibrated one.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import socal
from socal.pairs import pair_score, pair_score_terms
from socal.synthetic import EnsembleLikePopulation, RareEventPopulation


def _temper(m, t):
    z = (np.log(m) - np.log1p(-m)) / t
    return 1.0 / (1.0 + np.exp(-z))


def distortions(m, v):
    """(name, m', var') of the calibrated scores and the distortions of the issue."""
    out = [("calibrated", m, v), ("var x 0.5", m, 0.5 * v), ("var x 2", m, np.minimum(2.0 * v, m * (1 - m))),
           ("var = 0", m, np.zeros_like(v))]
    for name, mm in (("mean + 0.02", np.clip(m + 0.02, 1e-4, 1 - 1e-4)), ("mean - 0.02", np.clip(m - 0.02, 1e-4,
                                                                                                   1 - 1e-4)),
                     ("tempered T = 1.5", _temper(m, 1.5)), ("tempered T = 1/1.5", _temper(m, 1 / 1.5))):
        out.append((name, mm, np.minimum(v, mm * (1 - mm))))
    return out


def populations(n):
    g = np.random.default_rng(7000)
    m1, v1, _, _ = EnsembleLikePopulation(0.01).sample_raw(n, rng=g)
    m2, v2, _, _ = EnsembleLikePopulation(0.05).sample_raw(n, rng=g)
    m3, v3, _, _ = RareEventPopulation().sample_counts(n, rng=g)
    return [("ensemble-like, Var f* 0.01", m1, v1), ("ensemble-like, Var f* 0.05", m2, v2),
            ("rare events, beta(0.5, 20)", m3, v3)]


def propriety(n=200_000, n_sampled=50_000):
    print(f"Expected pair score (exact, {n:,} items per population; lower is better) and its calibration term; "
          f"beside it, k = 2 votes on the first {n_sampled:,} items: the distortion's score less the calibrated one "
          "with its paired 90% interval (> 0: the calibrated scores win).\n")
    rows = []
    for pname, m, v in populations(n):
        eta1, eta2 = m, m * m + v  # f* | S has exactly the reported moments: the scores are calibrated
        g = np.random.default_rng(7001)
        f = np.clip(np.where(v > 0, g.beta(*_beta_params(m, v)), m), 0, 1)[:n_sampled]
        votes = g.binomial(2, f).astype(float)
        counts = (votes, np.full(n_sampled, 2.0))
        for form in ("log", "brier"):
            base = None
            print(f"\n**{pname}, {form} form**\n")
            print("| reported | expected score | calibration term | worse than calibrated by | sampled: score less "
                  "calibrated's [90% interval] |")
            print("| --- | --- | --- | --- | --- |")
            for name, mm, vv in distortions(m, v):
                score, cal, _ = pair_score_terms(mm, vv, eta1, eta2, form)
                samp = pair_score(mm[:n_sampled], vv[:n_sampled], counts=counts, form=form)
                if base is None:
                    base, base_s = score, samp
                    extra, diff = "", "(reference)"
                else:
                    d, lo, hi = samp.difference(base_s)
                    extra, diff = f"{score - base:.3g}", f"{d:.3g} [{lo:.3g}, {hi:.3g}]"
                print(f"| {name} | {score:.6f} | {cal:.3g} | {extra} | {diff} |")
                rows.append((pname, form, name, score, cal))
    return rows


def _beta_params(m, v):
    s = np.where(v > 0, m * (1 - m) / np.where(v > 0, v, 1) - 1.0, 1.0)
    return np.maximum(m * s, 1e-9), np.maximum((1 - m) * s, 1e-9)


def chaosnli(data_dir="../shared/data", subset="snli"):
    from socal.datasets import load_chaosnli_predictions

    rob = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", subset)
    bert = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", subset,
                                     model="bert-base-uncased")
    if list(rob.votes.items) != list(bert.votes.items):
        raise SystemExit("the two ensembles cover different items")
    counts = rob.votes.counts
    ensembles = [("RoBERTa x3, ddof=1", rob.probs, 1), ("RoBERTa x3, ddof=0", rob.probs, 0),
                 ("BERT x3, ddof=1", bert.probs, 1)]
    try:
        from socal.experiments.real_models import tfidf_ensemble

        ensembles.append(("TF-IDF logistic x8 (cross-fitted), ddof=1", tfidf_ensemble(rob.votes.texts, counts, rng=0),
                          1))
    except ImportError:
        pass
    print(f"ChaosNLI {subset.upper()} ({counts.shape[0]:,} items, about {counts.sum(1).mean():.0f} votes each): pair "
          "score of (mean, cov) from socal.from_members, and each ensemble less RoBERTa x3 (ddof=1) with a paired "
          "90% interval (< 0: better than RoBERTa).\n")
    for form in ("log", "brier"):
        print(f"\n**{form} form**\n")
        print("| ensemble | pair score | +- s.e. | less RoBERTa x3 (ddof=1) [90% interval] | impossible items |")
        print("| --- | --- | --- | --- | --- |")
        base = None
        for name, probs, ddof in ensembles:
            m, cov = socal.from_members(probs, ddof=ddof)
            s = pair_score(m, counts=counts, cov=cov, form=form)
            if base is None:
                base, diff = s, "(reference)"
            else:
                d, lo, hi = s.difference(base)
                diff = f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]"
            print(f"| {name} | {s.score:.4f} | {s.stderr:.4f} | {diff} | {s.impossible.size} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--propriety", action="store_true")
    ap.add_argument("--chaosnli", action="store_true")
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--data", default="../shared/data")
    a = ap.parse_args(argv)
    if a.propriety:
        propriety(a.n, min(a.n, 50_000))
    if a.chaosnli:
        chaosnli(a.data)
    if not (a.propriety or a.chaosnli):
        ap.print_help()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
