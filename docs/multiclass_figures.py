"""The multiclass covariance figure before and after recalibration, on both real data sets (issue 69's must-show).

    python docs/multiclass_figures.py [DATA_DIR]      # default ../shared/data; writes docs/_static/mc_*.png

ChaosNLI SNLI with the fine-tuned RoBERTa x3 ensemble, and the sharp CIFAR-10H x5 ensemble, the predictors and the
halves of docs/multiclass.md's held-out comparison (:func:`socal.experiments.real_models.recalibration_sets`):
:class:`socal.simplex.MulticlassPlatt` fitted on one half of the items, drawn on the other half by
:func:`socal.plot.covariance_figure` (the reported tr Sigma and each class's Sigma_cc against the votes' squared
distances, raw and recalibrated).
"""

from __future__ import annotations

import pathlib
import sys

FIGURES = {"snli": "ChaosNLI SNLI, RoBERTa x3", "cifar10h": "CIFAR-10H, sharp x5"}


def main(data_dir="../shared/data"):
    import matplotlib

    matplotlib.use("Agg")
    from socal.experiments.real_models import recalibration_sets
    from socal.plot import covariance_figure
    from socal.simplex import MulticlassPlatt

    out = pathlib.Path(__file__).resolve().parent / "_static"
    sets = recalibration_sets(data_dir, tfidf=False)
    for key, title in FIGURES.items():
        m, cov, counts, fit, names = sets[title]
        held = ~fit
        after = MulticlassPlatt().fit(m[fit], cov[fit], counts=counts[fit]).transform(m[held], cov[held])
        fig = covariance_figure(m[held], cov[held], counts=counts[held], recalibrated=after, names=list(names))
        fig.suptitle(f"{title}: held-out half, raw and MulticlassPlatt (fitted on the other half)")
        path = out / f"mc_before_after_{key}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        print(path.relative_to(out.parent.parent), f"({held.sum()} held-out items)")


if __name__ == "__main__":
    main(*sys.argv[1:])
