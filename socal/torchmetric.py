"""A second-order calibration metric for the training loop: a :class:`torchmetrics.Metric` (the ``torch`` extra).

Calibration metrics in PyTorch keep every prediction in memory.  socal's test does not need them: it reads per-cell
sums on a fixed grid of the scores (:class:`socal.CalibrationTestStats`), which add across batches and processes.
So the metric's state is those sums, summed:

* ``sums``: the grid's per-cell sums, a float64 tensor of fixed shape (columns x 65,536 cells at order 2, 10 MB),
  reduced across processes by a sum;
* ``impossible``: the count of rows whose votes cannot occur under calibration, summed;
* ``group_keys`` and ``group_sums``: the simulated reference's per-(cell, k) sums (:class:`socal.reference.GroupSums`),
  at most one row per occupied (cell, k), consolidated after every batch and concatenated across processes (rows of
  the same key add when the test reads them).

Memory therefore does not grow with the number of batches (benchmarks/metric_memory.py measures it), and
:meth:`compute` equals :func:`socal.calibration_test` on the concatenated data (up to float summation order; the
simulated reference draws from the same seed).  ``compute`` returns the p-values and the statistic as tensors (what a
logger takes); ``test()`` returns the whole :class:`socal.CalibrationTest`.

CE2 and CE1 are not computed here: their estimate averages |eta-hat(s) - m| at a map fitted on all the data, a second
pass over the rows that a training loop does not make.  Keep the epoch's scores and call :func:`socal.ce2` on them.

Example::

    metric = SecondOrderCalibration()
    for mean, var, votes, trials in loader:          # tensors of one batch
        metric.update(mean, var, counts=(votes, trials))
    metric.compute()["pvalue"]                       # a tensor, for the logger
    print(metric.test())                             # socal.CalibrationTest: where, which way, what it would miss
"""

from __future__ import annotations

import numpy as np

try:
    import torch
    from torchmetrics import Metric
except ImportError as exc:  # pragma: no cover - the extra is optional
    raise ImportError("socal.torchmetric needs torch and torchmetrics: pip install 'socal[torch]'") from exc

from .reference import GROUP_COLS, GroupSums
from .testing import CalibrationTestStats

__all__ = ["SecondOrderCalibration"]


def _numpy(x):
    """A tensor (any device, any float dtype) or array-like as a float64 numpy array; None stays None."""
    if x is None:
        return None
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return x


class SecondOrderCalibration(Metric):
    """The second-order calibration test as a torchmetrics Metric (module notes).

    Parameters
    ----------
    order : {2, 1}
        2: means and variances (``update(mean, var, labels)``); 1: means alone (``update(mean, None, labels)``).
    alpha, degree, reference, rng : as in :func:`socal.calibration_test`, used by :meth:`compute`.
    **kwargs : passed to :class:`torchmetrics.Metric` (``dist_sync_on_step``, ``process_group``, ...).
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = None

    def __init__(self, order: int = 2, *, alpha=None, degree=None, reference="auto", rng=None, **kwargs):
        super().__init__(**kwargs)
        probe = CalibrationTestStats(order=order)  # checks order
        self.order = probe.order
        self._test_args = dict(alpha=alpha, degree=degree, reference=reference, rng=rng)
        from .testing import TEST_PARAMETERS
        from ._validation import check_parameters

        check_parameters(TEST_PARAMETERS, "SecondOrderCalibration", self._test_args)  # refused now, not at compute
        self.add_state("sums", default=torch.zeros(probe.sums.shape, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("impossible", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("group_keys", default=[], dist_reduce_fx="cat")
        self.add_state("group_sums", default=[], dist_reduce_fx="cat")

    def update(self, mean, var=None, labels=None, *, counts=None) -> None:
        """Add a batch: raw scores (tensors or arrays) and its votes, ``labels`` (batch, k) of 0/1 or ``counts`` =
        (positives, trials)."""
        if counts is not None:
            counts = (_numpy(counts[0]), _numpy(counts[1]))
        stats = CalibrationTestStats(order=self.order).update(_numpy(mean), _numpy(var), _numpy(labels),
                                                              counts=counts)
        self.sums += torch.from_numpy(stats.sums)
        self.impossible += int(stats.impossible)
        if self.order == 2 and stats.groups is not None and stats.groups.keys.size:
            merged = stats.groups if not self.group_keys else stats.groups.merged(self._groups())
            # one consolidated row per (cell, k): the list state never grows with the number of batches
            self.group_keys = [torch.from_numpy(merged.keys.copy())]
            self.group_sums = [torch.from_numpy(merged.sums.T.copy())]

    def _groups(self):
        keys, sums = self.group_keys, self.group_sums
        if isinstance(keys, list):  # before a sync: the list of this process's (one) consolidated tensor
            keys = torch.cat(keys) if keys else torch.zeros(0, dtype=torch.int64)
            sums = torch.cat(sums) if sums else torch.zeros(0, len(GROUP_COLS), dtype=torch.float64)
        g = GroupSums()
        if keys.numel():
            g._parts = [(keys.cpu().numpy().astype(np.int64), sums.cpu().numpy().T.astype(float))]
        return g

    def statistics(self) -> CalibrationTestStats:
        """The state as :class:`socal.CalibrationTestStats` (merge it with others, save it, or test it)."""
        stats = CalibrationTestStats(order=self.order)
        stats.sums = self.sums.cpu().numpy().astype(float).copy()
        stats.impossible = int(self.impossible)
        stats.groups = self._groups() if self.order == 2 else stats.groups
        return stats

    def compute(self):
        """The test on everything added (and synced), as numbers a logger takes: a dict of float64 tensors
        ('pvalue', 'statistic', 'df', 'means_pvalue' and, at order 2, 'variances_pvalue').  :meth:`test` gives the
        whole :class:`socal.CalibrationTest` (where, which way, what it would miss)."""
        res = self.statistics().test(**self._test_args)
        out = {"pvalue": res.pvalue, "statistic": res.statistic, "df": float(res.df),
               "means_pvalue": res.mean_part.pvalue}
        if res.variance_part is not None:
            out["variances_pvalue"] = res.variance_part.pvalue
        return {k: torch.tensor(v, dtype=torch.float64) for k, v in out.items()}

    def test(self):
        """The :class:`socal.CalibrationTest` on everything added, synced across processes first (as
        :meth:`compute` is)."""
        with self.sync_context(should_sync=self._to_sync, should_unsync=self._should_unsync):
            return self.statistics().test(**self._test_args)
