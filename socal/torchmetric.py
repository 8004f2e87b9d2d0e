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

CE2 and CE1 (with ``h``, the perturbation's bandwidth).  Their estimate averages |eta-hat(s) - m| over the rows at a
map fitted on all the data: the fit reads mergeable statistics, the average a second pass over the rows.  So with
``h`` the metric also keeps the fit's statistics of the sech-perturbed scores (:class:`socal.SufficientStats`: fixed
size, about 0.5 MB at the default ``max_degree``, summed across processes; each row perturbed by draws keyed by its
content and the metric's :attr:`perturbation_seed`, so a batch's rows are perturbed as the whole data's would be).
:meth:`calibration_functions` is the fit (what :func:`socal.calibration_functions` gives on the concatenated
perturbed data); :meth:`ce2` and :meth:`ce1` take the rows again as ``chunks`` (a re-iterable of raw batches, e.g. a
function returning the validation loader's batches), perturb them the same way and return what :func:`socal.ce2` and
:func:`socal.ce1` give on the concatenated perturbed data with the same ``rng``.  ``compute()`` stays one pass.

Example::

    metric = SecondOrderCalibration()
    for mean, var, votes, trials in loader:          # tensors of one batch
        metric.update(mean, var, counts=(votes, trials))
    metric.compute()["pvalue"]                       # a tensor, for the logger
    print(metric.test())                             # socal.CalibrationTest: where, which way, what it would miss
    # with SecondOrderCalibration(h=1/16): the size of the error, from a second pass over the same batches
    metric.ce2(chunks=lambda: ((mean, var, (votes, trials)) for mean, var, votes, trials in loader))
"""

from __future__ import annotations

import numpy as np

try:
    import torch
    from torchmetrics import Metric
except ImportError as exc:  # pragma: no cover - the extra is optional
    raise ImportError("socal.torchmetric needs torch and torchmetrics: pip install 'socal[torch]'") from exc

from ._validation import check_bandwidth, check_rng
from .degrees import DEFAULT_MAX_DEGREE
from .perturb import perturb, perturb_mean
from .reference import GROUP_COLS, GroupSums
from .sources import check_rows
from .sufficient import SufficientStats
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
    alpha, degree, reference, rng : as in :func:`socal.calibration_test`, used by :meth:`compute`; ``rng`` also seeds
        the perturbation and the estimators' folds and bootstrap.
    h : float or (float, float), optional
        The sech perturbation's bandwidth: with it the metric keeps the fit's statistics for :meth:`ce2` and
        :meth:`ce1` (module notes).  None: the test alone.
    max_degree : int
        The largest degree the estimators' statistics hold (as :class:`socal.SufficientStats`).
    **kwargs : passed to :class:`torchmetrics.Metric` (``dist_sync_on_step``, ``process_group``, ...).
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = None

    def __init__(self, order: int = 2, *, alpha=None, degree=None, reference="auto", rng=None, h=None,
                 max_degree=DEFAULT_MAX_DEGREE, **kwargs):
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
        self.h = None if h is None else check_bandwidth(h, "SecondOrderCalibration", per_axis=True)
        if self.h is not None and not (rng is None or (isinstance(rng, int) and not isinstance(rng, bool))):
            raise ValueError(f"The 'rng' parameter of SecondOrderCalibration must be an int seed or None with 'h' (the "
                             f"estimators draw their folds and bootstrap from it at each call, so a Generator's state "
                             f"would make the numbers depend on the calls made so far). Got {type(rng).__name__} "
                             f"instead.")
        self.rng = rng
        self._templates = {}  # the estimators' statistics: ndim 2 for CE2 (order 2), ndim 1 for CE1
        self.perturbation_seed = None
        if self.h is not None:
            for nd in ((2, 1) if self.order == 2 else (1,)):
                # the folds' salt is the seed's first draw, as in socal.ce2 and ce1 on arrays
                self._templates[nd] = SufficientStats(max_degree=max_degree, ndim=nd,
                                                      rng=check_rng(rng, "SecondOrderCalibration"))  # salt: 1st draw
                for name in ("M", "Z", "zz", "count"):
                    self.add_state(f"est{nd}_{name}", default=torch.zeros(getattr(self._templates[nd], name).shape,
                                                                          dtype=torch.float64), dist_reduce_fx="sum")
            # the perturbation's seed: a child stream's, so it shares no draw with the folds' salt
            self.perturbation_seed = int(check_rng(rng, "SecondOrderCalibration").spawn(1)[0].integers(2**63 - 1))

    def update(self, mean, var=None, labels=None, *, counts=None) -> None:
        """Add a batch: raw scores (tensors or arrays) and its votes, ``labels`` (batch, k) of 0/1 or ``counts`` =
        (positives, trials)."""
        if counts is not None:
            counts = (_numpy(counts[0]), _numpy(counts[1]))
        stats = CalibrationTestStats(order=self.order).update(_numpy(mean), _numpy(var), _numpy(labels),
                                                              counts=counts)
        self.sums += torch.from_numpy(stats.sums)
        if self._templates:
            rows = self._perturbed(*check_rows("SecondOrderCalibration.update", self.order, _numpy(mean),
                                               _numpy(var), _numpy(labels), counts, self.order, raw=True))
            for nd, template in self._templates.items():
                m, v, a, k = rows
                est = template.empty_like().add_validated(m, v if nd == 2 else None, a, k)
                for name in ("M", "Z", "zz", "count"):
                    state = getattr(self, f"est{nd}_{name}")
                    state += torch.from_numpy(np.asarray(getattr(est, name), dtype=np.float64))
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

    def _perturbed(self, m, v, a, k):
        """Validated raw rows with their scores sech-perturbed (:func:`socal.perturb`, draws keyed by the scores and
        the votes with :attr:`perturbation_seed`): a row is perturbed alike in any batch."""
        key = np.column_stack([a, k])
        if self.order == 2:
            pm, pv = perturb(m, v, h=self.h, rng=self.perturbation_seed, key=key)
            return pm, pv, a, k
        h = self.h[0] if isinstance(self.h, tuple) else self.h
        return perturb_mean(m, h=h, rng=self.perturbation_seed, key=key), None, a, k

    def _need_h(self, what):
        if not self._templates:
            raise ValueError(f"SecondOrderCalibration.{what} needs the perturbation's bandwidth: construct the metric "
                             f"with h= (e.g. SecondOrderCalibration(h=1/16)); without it the metric keeps the test's "
                             f"sums alone.")

    def estimator_statistics(self, ndim=None) -> SufficientStats:
        """The fit's statistics of the perturbed scores (synced across processes): ``ndim`` 2 for CE2 (order 2 only),
        1 for CE1; default the metric's order."""
        self._need_h("estimator_statistics")
        nd = self.order if ndim is None else ndim
        if nd not in self._templates:
            raise ValueError(f"The 'ndim' parameter of SecondOrderCalibration.estimator_statistics must be one of "
                             f"{sorted(self._templates)} at order {self.order}. Got {ndim!r} instead.")
        with self.sync_context(should_sync=self._to_sync, should_unsync=self._should_unsync):
            stats = self._templates[nd].empty_like()
            for name in ("M", "Z", "zz", "count"):
                setattr(stats, name, getattr(self, f"est{nd}_{name}").cpu().numpy().astype(float).copy())
        return stats

    def _perturbed_chunks(self, chunks):
        """``chunks`` (a list or a callable giving an iterable of raw batches: (mean, var, labels), (mean, var,
        (positives, trials)) or mappings as :func:`socal.ce2` reads them) with their scores perturbed as
        :meth:`update` perturbs them."""
        func = "SecondOrderCalibration"

        def one(chunk):
            if isinstance(chunk, dict):
                mean, var = chunk.get("mean"), chunk.get("var")
                labels, counts = chunk.get("labels"), chunk.get("counts")
            else:
                mean, var, rest = (chunk[0], chunk[1], chunk[2]) if len(chunk) == 3 else (chunk[0], None, chunk[1])
                labels, counts = (None, rest) if isinstance(rest, tuple) else (rest, None)
            if counts is not None:
                counts = (_numpy(counts[0]), _numpy(counts[1]))
            m, v, a, k = self._perturbed(*check_rows(f"{func}.ce2", self.order, _numpy(mean), _numpy(var),
                                                     _numpy(labels), counts, self.order, raw=True))
            return {"mean": m, "var": v, "counts": (a, k)}

        def gen():
            for chunk in (chunks() if callable(chunks) else chunks):
                yield one(chunk)

        return gen

    def calibration_functions(self, **kwargs):
        """The fitted eta1, eta2 of the perturbed scores (:func:`socal.calibration_functions` from the statistics;
        keywords as there)."""
        from .estimators import calibration_functions

        self._need_h("calibration_functions")
        if self.order != 2:
            raise ValueError("SecondOrderCalibration.calibration_functions needs order=2: eta2 is a function of the "
                             "(mean, var) pair.")
        return calibration_functions(self.estimator_statistics(2), h=self.h, rng=self.rng, **kwargs)

    def ce2(self, chunks, **kwargs):
        """CE2 of the sech-perturbed scores: :func:`socal.ce2` from the metric's statistics, its second pass over
        ``chunks`` (the same raw batches again: a list, or a callable returning an iterable of them), perturbed as
        :meth:`update` perturbed them.  Equal to :func:`socal.ce2` on the concatenated perturbed data with the same
        ``rng`` (to float summation order; rows of one content split across batches share a fold, as
        :meth:`socal.SufficientStats.update` says).  Keywords as in :func:`socal.ce2` (``ci``, ``n_boot``, ...)."""
        from .estimators import ce2

        self._need_h("ce2")
        if self.order != 2:
            raise ValueError("SecondOrderCalibration.ce2 needs order=2 (the variances); at order 1 use ce1.")
        return ce2(self.estimator_statistics(2), chunks=self._perturbed_chunks(chunks), h=self.h, rng=self.rng,
                   **kwargs)

    def ce1(self, chunks, **kwargs):
        """CE1 of the sech-perturbed means, as :meth:`ce2` (:func:`socal.ce1`)."""
        from .estimators import ce1

        self._need_h("ce1")
        h = self.h[0] if isinstance(self.h, tuple) else self.h
        return ce1(self.estimator_statistics(1), chunks=self._perturbed_chunks(chunks), h=h, rng=self.rng, **kwargs)

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
