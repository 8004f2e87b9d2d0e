"""The shape-dispatching conveniences: ``socal.evaluate``, ``socal.calibration_test``, ``socal.ce2`` and
``socal.ce1`` take binary or multiclass input and route it.

This is the one place where a function looks at its input's shape to decide what it computes.  The binary functions
(:func:`socal._evaluate.evaluate`, :func:`socal.testing.calibration_test`, :func:`socal.estimators.ce2`,
:func:`socal.estimators.ce1`) take binary data only and return one type each; the multiclass ones
(:func:`socal.multiclass.evaluate_multiclass`, :func:`socal.multiclass.multiclass_test`, :func:`socal.multiclass.ce2`,
:func:`socal.multiclass.ce1`) are built on them and import in that one direction.  The rule, for each function here:

* ``mean`` of shape (n, M, C) with the second argument None (members' probabilities, C >= 3), or (n, C) with a
  covariance (n, C, C) or class variances (n, C) (:func:`socal.multiclass.multiclass_input`): multiclass;
* :func:`ce1` with ``mean`` of shape (n, C): multiclass (its second argument is the labels);
* anything else, including chunks, sufficient statistics and dask arrays: binary.

Multiclass input returns the multiclass result (``MulticlassEvaluation``, ``MulticlassTest``, a tuple of
``CalibrationError`` in class order); binary input the binary one.
"""

from __future__ import annotations

import functools
import inspect
import typing

from . import multiclass
from ._evaluate import Evaluation, evaluate as binary_evaluate
from ._results import CalibrationError
from .estimators import ce1 as binary_ce1, ce2 as binary_ce2
from .sources import Rows
from .sufficient import SufficientStats
from .testing import CalibrationTest, CalibrationTestStats, calibration_test as binary_test

__all__ = ["evaluate", "calibration_test", "ce2", "ce1"]


def _routed(binary, returns, note):
    """A wrapper with the binary function's signature (its return annotation widened to ``returns``, a type) and
    its docstring, under a first paragraph that says where multiclass input goes.  The annotations are the binary
    function's, resolved (typing.get_type_hints), so that they resolve here too."""

    def deco(fn):
        fn = functools.wraps(binary)(fn)
        hints = dict(typing.get_type_hints(binary), **{"return": returns})
        fn.__annotations__ = hints
        sig = inspect.signature(binary)
        fn.__signature__ = sig.replace(
            parameters=[p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()],
            return_annotation=returns)
        fn.__doc__ = (binary.__doc__ or "").replace("\n\n", f"\n\n    {note}\n\n", 1)
        del fn.__wrapped__  # the signature above is the one to show
        return fn

    return deco


def _multi(mean, second, chunks=None):
    if chunks is not None or isinstance(mean, (SufficientStats, CalibrationTestStats, Rows)):
        return None
    return multiclass.multiclass_input(mean, second)


@_routed(binary_evaluate, Evaluation | multiclass.MulticlassEvaluation,
         "Multiclass input (``raw_mean`` (n, M, C) with ``raw_var`` None, or (n, C) with a covariance or class "
         "variances) goes to :func:`socal.multiclass.evaluate_multiclass` (:mod:`socal.dispatch`).")
def evaluate(raw_mean=None, raw_var=None, labels=None, **kwargs):
    chunked = kwargs.get("chunks") is not None  # chunks of multiclass rows (binary evaluate reads arrays)
    multi = None if chunked else _multi(raw_mean, raw_var)
    if multi is None and not chunked:
        kwargs.pop("chunks", None)
        return binary_evaluate(raw_mean, raw_var, labels, **kwargs)
    extra = set(kwargs) - {"counts", "chunks", "h", "ci", "n_boot", "rng", "progress", "names", "checkpoint"}
    if extra:
        raise ValueError(f"For multiclass input evaluate takes counts or chunks, h, ci, n_boot, rng, progress, names "
                         f"and checkpoint; {', '.join(sorted(extra))} are for binary scores.")
    if chunked:
        if any(x is not None for x in (raw_mean, raw_var, labels)):
            raise ValueError("Pass either arrays or 'chunks' to evaluate, not both.")
        return multiclass.evaluate_multiclass(**kwargs)
    kwargs.pop("chunks", None)
    return multiclass.evaluate_multiclass(*multi, labels, **kwargs)


@_routed(binary_test, CalibrationTest | multiclass.MulticlassTest,
         "Multiclass input goes to :func:`socal.multiclass.multiclass_test` (:mod:`socal.dispatch`).")
def calibration_test(mean=None, var=None, labels=None, **kwargs):
    multi = _multi(mean, var, kwargs.get("chunks"))
    if multi is None:
        return binary_test(mean, var, labels, **kwargs)
    counts = kwargs.pop("counts", None)
    binary_only = {"order": 2, "degree": None, "covariance": "null", "checkpoint": None, "reference": "auto"}
    if any(kwargs.get(name, default) != default for name, default in binary_only.items()):
        raise ValueError("For multiclass input calibration_test takes mean, var (covariance), labels or counts, "
                         "alpha and rng only; 'order', 'degree', 'covariance', 'reference' and 'checkpoint' are for "
                         "binary scores.")
    alpha = kwargs.get("alpha")
    return multiclass.multiclass_test(*multi, labels, counts=counts, rng=kwargs.get("rng"),
                                      alpha=0.05 if alpha is None else alpha)


@_routed(binary_ce2, CalibrationError | tuple[CalibrationError, ...],
         "Multiclass input goes to :func:`socal.multiclass.ce2`: one CalibrationError per class, one against the "
         "rest, in a tuple (:mod:`socal.dispatch`).")
def ce2(mean=None, var=None, labels=None, **kwargs):
    multi = _multi(mean, var, kwargs.get("chunks"))
    if multi is None:
        return binary_ce2(mean, var, labels, **kwargs)
    counts = kwargs.pop("counts", None)
    return multiclass.ce2(mean, var, labels, counts=counts, **kwargs)


@_routed(binary_ce1, CalibrationError | tuple[CalibrationError, ...],
         "Multiclass input (``mean`` (n, C)) goes to :func:`socal.multiclass.ce1` (:mod:`socal.dispatch`).")
def ce1(mean=None, labels=None, **kwargs):
    from ._validation import ndim_of

    if kwargs.get("chunks") is None and not isinstance(mean, (SufficientStats, Rows)) and ndim_of(mean) == 2:
        counts = kwargs.pop("counts", None)
        return multiclass.ce1(mean, labels, counts=counts, **kwargs)
    return binary_ce1(mean, labels, **kwargs)
