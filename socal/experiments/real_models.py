"""Real models on real crowd labels: a fine-tuned RoBERTa ensemble and a TF-IDF ensemble on ChaosNLI (100 votes per
item), and a sharp ensemble on CIFAR-10H (about 50 votes per image), each judged one class against the rest.

    socal reproduce real-models report --data-dir ../shared/data   # the tables of docs/real_models.md

What each piece answers:

* :func:`one_vs_rest`: class c of a multiclass ensemble as the binary predictor socal takes: the members'
  probabilities of c give (mean, var) (:func:`socal.from_members`), the votes give (positives, trials).
* :func:`crowd_check`: a check that needs no model of the test: with 100 votes per item, the votes nearly reveal
  each item's f*, so within bins of the reported mean the crowd's mean a/k and its Var f* (the unbiased
  a (a - 1) / (k (k - 1)) less the squared mean, averaged) can be set beside what the predictor claims there: the
  bin's average mean, and the bin's average var plus the spread of the means within it (the Var f* a calibrated
  predictor implies for the bin, by the law of total variance).
* :func:`tfidf_ensemble`: an ensemble of one's own, cross-fitted on the items: 5 folds; for each, 8 logistic
  regressions on TF-IDF features of the premise and hypothesis, each fitted on a bootstrap resample of the other
  folds' items with one vote drawn per item as its label; each item is predicted only by members that never saw it.
* :func:`cifar10h_sharp_ensemble`: half of each image's votes (drawn without replacement) build the members, the
  other half judges them; each member is a bootstrap resample of its half's votes, sharpened (probabilities to the
  power 1 / T, renormalised): an over-confident, sharp ensemble like a deep network's, whose variances are tiny.
"""

from __future__ import annotations

import numpy as np

from ..degrees import DEFAULT_FOLDS
from ..datasets import thin_counts
from ..members import from_members

__all__ = ["one_vs_rest", "crowd_check", "tfidf_ensemble", "cifar10h_sharp_ensemble", "report", "multiclass_report",
           "recalibration_sets", "recalibration_report", "PARTS"]


def one_vs_rest(probs, counts, c, *, ddof=1):
    """(mean, var, positives, trials) of class ``c``: probs (n, M, C), counts (n, C)."""
    mean, var = from_members(np.asarray(probs)[:, :, c], ddof=ddof)
    counts = np.asarray(counts)
    return mean, var, counts[:, c].astype(float), counts.sum(axis=1).astype(float)


def crowd_check(mean, var, positives, trials, bins=5):
    """Per quantile bin of the reported mean: (mean range, reported mean, crowd mean, implied Var f*, crowd Var f*,
    items).  The crowd's Var f* is the bin's average of a (a - 1) / (k (k - 1)) less its squared average a / k
    (unbiased for E f*^2 and nearly so for the square of E f* at 100 votes); the implied Var f* is the bin's
    average var plus the variance of the means within it."""
    mean, var = np.asarray(mean), np.asarray(var)
    a, k = np.asarray(positives, float), np.asarray(trials, float)
    z1, z2 = a / k, a * (a - 1) / (k * (k - 1))
    edges = np.quantile(mean, np.linspace(0, 1, bins + 1))
    which = np.clip(np.searchsorted(edges, mean, side="right") - 1, 0, bins - 1)
    rows = []
    for b in range(bins):
        s = which == b
        if not s.any():
            continue
        implied = float(var[s].mean() + mean[s].var())
        crowd = float(z2[s].mean() - z1[s].mean() ** 2)
        rows.append(((float(mean[s].min()), float(mean[s].max())), float(mean[s].mean()), float(z1[s].mean()),
                     implied, crowd, int(s.sum())))
    return rows


def tfidf_ensemble(texts, counts, *, members=8, folds=DEFAULT_FOLDS, rng=0):
    """Cross-fitted TF-IDF logistic-regression ensemble: probabilities (n, members, C) (the ``experiments``
    extra: scikit-learn).  Features: word 1-2-grams of the hypothesis and of the premise, separately, and their
    shared words; labels: one vote per item drawn from its counts for each member."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    g = np.random.default_rng(rng)
    counts = np.asarray(counts)
    n, C = counts.shape
    hyp = [(t or {}).get("hypothesis", "") for t in texts]
    pre = [(t or {}).get("premise", "") for t in texts]
    shared = [" ".join(sorted(set(h.lower().split()) & set(p.lower().split()))) for h, p in zip(hyp, pre)]
    X = sparse.hstack([TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(hyp),
                       TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(pre),
                       TfidfVectorizer(min_df=1).fit_transform(shared)]).tocsr()
    fold = g.permutation(n) % folds
    out = np.zeros((n, members, C))
    p = counts / counts.sum(axis=1, keepdims=True)
    for f in range(folds):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        for j in range(members):
            idx = g.choice(train, size=train.size, replace=True)
            y = (g.random(idx.size)[:, None] > np.cumsum(p[idx], axis=1)).sum(axis=1)  # one vote per item
            model = LogisticRegression(C=2.0, max_iter=2000).fit(X[idx], y)
            pr = np.zeros((test.size, C))
            pr[:, model.classes_] = model.predict_proba(X[test])
            out[test, j] = pr
    return out


def cifar10h_sharp_ensemble(counts, *, members=5, temperature=0.5, rng=0):
    """(probs (n, members, 10), judging counts (n, 10)): half of each image's votes build the members, the other
    half judges them (:func:`socal.datasets.thin_counts` draws the halves)."""
    counts = np.asarray(counts, dtype=np.int64)
    g = np.random.default_rng(rng)
    half = thin_counts(counts, int(counts.sum(axis=1).min() // 2), rng=int(g.integers(2**31)),
                       keys=list(range(len(counts))))
    judge = counts - half
    probs = np.empty((len(counts), members, counts.shape[1]))
    for j in range(members):
        boot = np.stack([g.multinomial(int(h.sum()), h / h.sum()) for h in half])
        q = (boot + 0.5) ** (1.0 / temperature)
        probs[:, j] = q / q.sum(axis=1, keepdims=True)
    return probs, judge


def report(data_dir, *, rng=0, quick=False):
    """The tables of docs/real_models.md, as text (``quick``: the RoBERTa part only)."""
    import socal
    from ..datasets import load_chaosnli_predictions, load_cifar10h

    lines = []
    out = lines.append
    for subset in ("snli", "mnli"):
        ens = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", subset)
        two = thin_counts(ens.votes.counts, 2, rng=rng, keys=ens.votes.items)
        models = {"RoBERTa x3": ens.probs}
        if not quick:
            models["TF-IDF LR x8"] = tfidf_ensemble(ens.votes.texts, ens.votes.counts, rng=rng)
        for name, probs in models.items():
            out(f"\n## ChaosNLI {subset.upper()}, {name} ({len(ens.votes.items)} items)\n")
            out("| class | votes | T (df) | p | reference | T_mean | T_var | p (means) | p (variances) |")
            out("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            sentences = []
            for c, cname in enumerate(ens.votes.classes):
                m, v, a, k = one_vs_rest(probs, ens.votes.counts, c)
                for votes, aa, kk in (("100", a, k), ("2 of 100", two[:, c].astype(float), np.full(len(a), 2.0))):
                    t = socal.calibration_test(m, v, counts=(aa, kk))
                    out(f"| {cname} | {votes} | {t.statistic:.1f} ({t.df}) | {t.pvalue:.2g} | {t.reference} | "
                        f"{t.mean_part.statistic:.1f} | {t.variance_part.statistic:.1f} | "
                        f"{t.mean_part.pvalue:.2g} | {t.variance_part.pvalue:.2g} |")
                    r = t.where()
                    if r is not None:
                        check = socal.vote_check(m, v, counts=(aa, kk), region=r)
                        sentences.append(f"- {cname}, {votes} votes: {r.describe()}.  Recount: {check}; "
                                         f"{'agrees' if r.agrees(check) else 'DISAGREES'}.")
            out("\nWhere the evidence is strongest, beside a direct count of the region's votes "
                "(socal.vote_check):\n")
            lines.extend(sentences)
            m, v, a, k = one_vs_rest(probs, ens.votes.counts, 0)
            out(f"\nDirect check, class {ens.votes.classes[0]} (quintiles of the reported mean):\n")
            out("| mean range | reported mean | crowd mean | implied Var f* | crowd Var f* | items |")
            out("| --- | --- | --- | --- | --- | --- |")
            for (lo, hi), rm, cm, iv, cv, cnt in crowd_check(m, v, a, k):
                out(f"| {lo:.3f}-{hi:.3f} | {rm:.3f} | {cm:.3f} | {iv:.4f} | {cv:.4f} | {cnt} |")
    if not quick:
        cif = load_cifar10h(f"{data_dir}/cifar10h")
        probs, judge = cifar10h_sharp_ensemble(cif.counts, rng=rng)
        m, v, a, k = one_vs_rest(probs, judge, 3)  # cat against the rest
        out(f"\n## CIFAR-10H, sharp 5-member ensemble from half the votes, class 'cat' (median var "
            f"{np.median(v):.2g})\n")
        out("```text")
        out(str(socal.evaluate(m, v, counts=(a, k), rng=rng)))
        out("```")
    return "\n".join(lines)


def multiclass_report(data_dir, *, rng=0):
    """The multiclass tables of docs/multiclass.md, as text: the one call on ChaosNLI (RoBERTa, all votes and two
    drawn from them) and on a sharp CIFAR-10H ensemble (held-out recalibration: :func:`recalibration_report`)."""
    import socal
    from ..datasets import load_chaosnli_predictions, load_cifar10h
    from ..multiclass import evaluate_multiclass, trace_check

    lines = []
    out = lines.append
    for subset in ("snli", "mnli"):
        ens = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", subset)
        names = [c[0] for c in ens.votes.classes]
        counts = ens.votes.counts.astype(float)
        two = thin_counts(ens.votes.counts, 2, rng=rng, keys=ens.votes.items).astype(float)
        m, cov = socal.from_members(ens.probs)
        for label, cts in (("all 100 votes", counts), ("2 of the 100 votes", two)):
            ev = evaluate_multiclass(m, cov, counts=cts, names=names, rng=rng)
            out(f"\n### ChaosNLI {subset.upper()}, RoBERTa x{ens.probs.shape[1]}, {label} "
                f"({len(ens.votes.items)} items; classes {', '.join(ens.votes.classes)})\n")
            out("```text")
            out(ev.summary())
            out("\nThe direct check (socal.multiclass.trace_check, item by item):")
            out(str(trace_check(m, cov, counts=cts, names=names)))
            out("```")
    votes = load_cifar10h(f"{data_dir}/cifar10h")
    probs, judge = cifar10h_sharp_ensemble(votes.counts, rng=rng)
    ev = evaluate_multiclass(*socal.from_members(probs), counts=judge.astype(float), names=votes.classes, rng=rng)
    out(f"\n### CIFAR-10H, a sharp 5-member ensemble built from half of each image's votes, judged by the other "
        f"half ({len(votes.items)} images, 10 classes: {', '.join(votes.classes)})\n")
    out("```text")
    out(ev.summary())
    out("\nThe direct check (socal.multiclass.trace_check, item by item):")
    out(str(trace_check(*socal.from_members(probs), counts=judge.astype(float), names=votes.classes)))
    out("```")
    return "\n".join(lines)


def recalibration_sets(data_dir, *, rng=0, quick=False, tfidf=None):
    """{name: (mean (n, C), cov (n, C, C), counts (n, C), fit_rows (n,) bool, class names)}: the held-out
    recalibration comparison's predictors.  ChaosNLI SNLI and MNLI with the RoBERTa ensemble and (``tfidf``; None:
    not ``quick``) the cross-fitted TF-IDF ensemble, the items split in halves by a hash of their ids; (not
    ``quick``) the sharp CIFAR-10H ensemble judged by the other half of each image's votes, images split by index
    parity."""
    tfidf = not quick if tfidf is None else tfidf
    from ..datasets import load_chaosnli_predictions, load_cifar10h
    from ..rowkeys import text_columns

    out = {}
    for subset in ("snli", "mnli"):
        ens = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", subset)
        fit = (text_columns(np.asarray(ens.votes.items, dtype=str))[:, 0] % 2) == 0
        counts = ens.votes.counts.astype(float)
        names = tuple(c[0] for c in ens.votes.classes)
        models = {"RoBERTa x3": ens.probs}
        if tfidf:
            models["TF-IDF LR x8"] = tfidf_ensemble(ens.votes.texts, ens.votes.counts, rng=rng)
        for name, probs in models.items():
            out[f"ChaosNLI {subset.upper()}, {name}"] = (*from_members(probs), counts, fit, names)
    if not quick:
        votes = load_cifar10h(f"{data_dir}/cifar10h")
        probs, judge = cifar10h_sharp_ensemble(votes.counts, rng=rng)
        out["CIFAR-10H, sharp x5"] = (*from_members(probs), judge.astype(float), np.arange(len(judge)) % 2 == 0,
                                      tuple(votes.classes))
    return out


def recalibration_report(data_dir, *, rng=0, quick=False):
    """The held-out comparison of docs/multiclass.md, as markdown: per predictor, the raw ensemble, the anchor
    (:class:`socal.simplex.TemperatureScaling`), the class-wise maps alone and projected
    (:class:`socal.simplex.ClasswisePlatt`, fitted on the perturbed class scores at h = (1/16, 1/64)) and
    :class:`socal.simplex.MulticlassPlatt`, each fitted on one half of the items and checked on the other: the
    multiclass verdict, the votes' |f* - m'|^2 over tr Sigma' overall and in thirds of tr Sigma', the log loss per
    vote, the class probabilities at 0 that got a vote, and each class's CE2 on its own scores (h=None)."""
    from ..estimators import ce2
    from ..multiclass import evaluate_multiclass, holm, multiclass_test
    from ..simplex import ClasswisePlatt, MulticlassPlatt, TemperatureScaling, log_loss, trace_by_thirds
    from ..testing import calibration_test, p_value_words

    lines = []
    out = lines.append
    out(r"| predictor | map | verdict p | trace part adj. p | E\|f* - m\|^2 / E tr Sigma (thirds of tr Sigma) | "
        "log loss / vote | m' = 0 with a vote | class CE2 (h=None) |")
    out("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, (m, cov, counts, fit, names) in recalibration_sets(data_dir, rng=rng, quick=quick).items():
        held = ~fit
        A = counts[held]
        K = A.sum(axis=1)
        v = np.diagonal(cov, axis1=1, axis2=2)
        ev = evaluate_multiclass(m, v, counts=counts, rng=rng, h=(1 / 16, 1 / 64), n_boot=20)
        cw = ClasswisePlatt(h=(1 / 16, 1 / 64)).fit(ev.mean[fit], ev.var[fit], counts=counts[fit])
        rows = {"raw ensemble": (m[held], v[held]),
                "TemperatureScaling": TemperatureScaling().fit(m[fit], cov[fit], counts=counts[fit]).transform(
                    m[held], cov[held], diagonal=True),
                "class-wise maps alone": cw.transform(ev.mean[held], ev.var[held], project=False),
                "ClasswisePlatt (projected)": cw.transform(ev.mean[held], ev.var[held]),
                "MulticlassPlatt": MulticlassPlatt().fit(m[fit], cov[fit], counts=counts[fit]).transform(
                    m[held], cov[held], diagonal=True)}
        for label, (m2, c2) in rows.items():
            v2 = np.diagonal(c2, axis1=1, axis2=2) if c2.ndim == 3 else c2
            zeros = int(((m2 <= 0) & (A > 0)).sum())
            ratio, thirds = trace_by_thirds(m2, v2, A)
            valid = label != "class-wise maps alone"
            if valid:
                t = multiclass_test(m2, v2, counts=A, rng=rng)
                verdict, trace_p = p_value_words(t.pvalue), p_value_words(t.trace_adjusted)
                ll = f"{log_loss(m2, counts=A):.4f}"
            else:  # not a probability vector: the class tests one by one, Holm over the classes
                ps = [calibration_test(m2[:, c], v2[:, c], counts=(A[:, c], K), rng=rng).pvalue
                      for c in range(m2.shape[1])]
                verdict, trace_p, ll = (f"classes (Holm) {p_value_words(min(holm(ps)))}", "-",
                                        "- (not a probability vector)")
            ce = []
            for c in range(m2.shape[1]):
                try:
                    ce.append(ce2(m2[:, c], v2[:, c], counts=(A[:, c], K), h=None, n_boot=20, rng=rng).estimate)
                except ValueError:
                    ce.append(float("nan"))
            ce_text = (" / ".join(f"{x:.3f}" for x in ce) if len(ce) <= 3 else
                       f"mean {np.nanmean(ce):.4f}, max {np.nanmax(ce):.4f}")
            out(f"| {name} | {label} | {verdict} | {trace_p} | {ratio:.2f} ({', '.join(f'{x:.2f}' for x in thirds)}) "
                f"| {ll} | {zeros} | {ce_text} |")
    return "\n".join(lines)


PARTS = {"report": report, "multiclass": multiclass_report, "recalibration": recalibration_report}
"""``socal reproduce real-models PART``: each part's text, as docs/real_models.md and docs/multiclass.md hold it
between ``<!-- socal reproduce real-models PART -->`` and ``<!-- end -->``."""
