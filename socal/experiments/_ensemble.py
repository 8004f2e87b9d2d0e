"""Deep-ensemble predictors trained with scikit-learn (the ``experiments`` extra), not a hand-written trainer."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_rng

__all__ = ["MLPEnsemble"]


class MLPEnsemble:
    """``members`` MLPs (4-64-64-1, ReLU, log-loss, Adam) trained on the same data with different initialisations.

    ``scores(x)`` returns the ensemble mean and the unbiased variance of the members' probabilities, clipped to the
    feasible region var <= m (1 - m).
    """

    def __init__(self, members=5, *, hidden=(64, 64), epochs=30, lr=1e-3, batch=256, rng=0):
        self.members, self.hidden, self.epochs, self.lr, self.batch = members, hidden, epochs, lr, batch
        self.rng = rng

    def fit(self, x, y):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        seeds = check_rng(self.rng, type(self).__name__).integers(0, 2**31 - 1, size=self.members)
        self.models_ = []
        for s in seeds:
            clf = MLPClassifier(hidden_layer_sizes=self.hidden, activation="relu", solver="adam",
                                learning_rate_init=self.lr, batch_size=min(self.batch, len(y)), max_iter=self.epochs,
                                shuffle=True, random_state=int(s), tol=0.0, n_iter_no_change=10**9)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed number of epochs, by design
                clf.fit(x, y)
            self.models_.append(clf)
        return self

    def scores(self, x):
        P = np.stack([m.predict_proba(x)[:, 1] for m in self.models_])
        mean = P.mean(axis=0)
        var = P.var(axis=0, ddof=1)
        return mean, np.minimum(var, mean * (1 - mean))
