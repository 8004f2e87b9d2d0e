"""The multiclass covariance figure before and after recalibration, on both real data sets (issue 69's must-show).

    python docs/multiclass_figures.py [DATA_DIR]      # default ../shared/data; writes docs/_static/mc_*.png

ChaosNLI SNLI with the fine-tuned RoBERTa x3 ensemble, and the sharp CIFAR-10H x5 ensemble
(:func:`socal.experiments.real_models.cifar10h_sharp_ensemble`), as in docs/multiclass.md's held-out comparison:
:class:`socal.simplex.MulticlassPlatt` fitted on one half of the items (ChaosNLI: by a hash of the item ids;
CIFAR-10H: even images), drawn on the other half by :func:`socal.plot.covariance_figure` (the reported tr Sigma and
each class's Sigma_cc against the votes' squared distances, raw and recalibrated).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np


def main(data_dir="../shared/data"):
    import matplotlib

    matplotlib.use("Agg")
    from socal import from_members
    from socal.datasets import load_chaosnli_predictions, load_cifar10h
    from socal.experiments.real_models import cifar10h_sharp_ensemble
    from socal.plot import covariance_figure
    from socal.rowkeys import text_columns
    from socal.simplex import MulticlassPlatt

    out = pathlib.Path(__file__).resolve().parent / "_static"
    ens = load_chaosnli_predictions(f"{data_dir}/chaosnli_predictions", f"{data_dir}/chaosnli", "snli")
    fit = (text_columns(np.asarray(ens.votes.items, dtype=str))[:, 0] % 2) == 0
    m, cov = from_members(ens.probs)
    sets = {"snli": (m, cov, ens.votes.counts.astype(float), fit, [c[0] for c in ens.votes.classes],
                     "ChaosNLI SNLI, RoBERTa x3")}
    votes = load_cifar10h(f"{data_dir}/cifar10h")
    probs, judge = cifar10h_sharp_ensemble(votes.counts, rng=0)
    m, cov = from_members(probs)
    sets["cifar10h"] = (m, cov, judge.astype(float), np.arange(len(judge)) % 2 == 0, list(votes.classes),
                        "CIFAR-10H, sharp x5")
    for key, (m, cov, counts, fit, names, title) in sets.items():
        held = ~fit
        after = MulticlassPlatt().fit(m[fit], cov[fit], counts=counts[fit]).transform(m[held], cov[held])
        fig = covariance_figure(m[held], cov[held], counts=counts[held], recalibrated=after, names=names)
        fig.suptitle(f"{title}: held-out half, raw and MulticlassPlatt (fitted on the other half)")
        path = out / f"mc_before_after_{key}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        print(path.relative_to(out.parent.parent), f"({held.sum()} held-out items)")


if __name__ == "__main__":
    main(*sys.argv[1:])
