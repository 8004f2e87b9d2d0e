"""Input validation: one module, one message style.

Every public function validates its arguments here once and passes clean float64 arrays on to private functions
that hold only the math.  Messages follow one sentence shape::

    The 'degree' parameter of ce2 must be an int in the range [0, 200]. Got -1 instead.

Round-off at a domain edge.  A score computed in floating point can land a hair outside its interval (a mean of
1 + 1e-12, a variance of -1e-17, a float32 1.0000001).  Values within ``edge_tolerance(dtype)`` =
max(1e-9, 4 eps(dtype)) of an end of [0, 1] or [0, 1/4], or above a raw variance's bound m (1 - m), are accepted
and clipped onto it; anything further out is refused.  For float64 input the tolerance is 1e-9; for float32
(eps = 1.19e-7) it is 4.8e-7.

Signed zeros.  In a non-negative range -0.0 (what -x * 0, or -x rounded to 0, gives) is read as 0.0.  The two are
the same number, but not the same bits, and the bootstrap's and the folds' random numbers are keyed by the bits of
each row (:mod:`socal.rowkeys`): a variance column with -0.0 where another has 0.0 drew other labels and moved the
interval by 1e-3.  Adding +0.0 maps -0.0 to 0.0 and leaves every other value's bits as they are.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_array",
    "check_scores",
    "check_mean",
    "check_labels",
    "VoteCounts",
    "check_bandwidth",
    "bandwidth_axes",
    "check_int",
    "check_float",
    "check_choice",
    "check_rng",
    "check_probability",
    "edge_tolerance",
    "percent_hint",
    "check_aligned",
]

MAX_TRIALS = 2**53  # labels per item: whole numbers above 2^53 are not exact in float64

# Slack allowed when a variance is compared with m(1-m) or 1/4: a float computed as mean - mean**2 may overshoot by
# a few ulps.
FEASIBILITY_SLACK = 1e-12


class InputError(ValueError):
    """A ValueError that names the argument and the rule, with ``kind`` the rule broken ('ndim', 'finite', or
    None): a caller that adds a hint reads ``kind``, never the message's text (issue 74)."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = kind


def _fail(name, func, rule, got, kind=None):
    return InputError(f"The '{name}' parameter of {func} must be {rule}. Got {got} instead.", kind)


def _describe(x):
    x = np.asarray(x)
    if x.ndim == 0:
        return repr(x.item())
    return f"an array of shape {x.shape}"


def edge_tolerance(dtype):
    """How far outside a closed domain a float of ``dtype`` may fall and still be clipped onto its end."""
    dtype = np.dtype(dtype)
    eps = np.finfo(dtype).eps if np.issubdtype(dtype, np.floating) else 0.0
    return max(1e-9, 4.0 * float(eps))


def check_array(x, name, func, *, ndim=1, finite=True, lo=None, hi=None, rule=None, min_len=1, clip_edges=False):
    """Return ``x`` as a float64 array after checking its shape, finiteness and range.

    With ``clip_edges``, values within :func:`edge_tolerance` of ``lo`` or ``hi`` are clipped onto them.
    """
    if x is None:
        raise _fail(name, func, "an array of real numbers", "None")
    if isinstance(x, np.ma.MaskedArray):  # np.asarray would read the masked entries' hidden values
        masked = int(np.count_nonzero(np.ma.getmaskarray(x)))
        if masked:
            raise _fail(name, func, "an array without masked entries (drop those rows, or fill them with "
                        "np.ma.filled; a masked label cell is a missing vote: pass counts)",
                        f"a masked array with {masked} masked value(s)")
        x = np.ma.getdata(x)
    x = from_frame(x)
    src_dtype = getattr(x, "dtype", None)
    if src_dtype is None and isinstance(getattr(x, "dtypes", None), Iterable):  # a DataFrame: its worst column
        src_dtype = next((d for d in x.dtypes if np.dtype(d).kind in "OUSVcM"), None)
    if src_dtype is not None and (np.dtype(src_dtype).kind in "OUSVc" or np.dtype(src_dtype).kind == "M"):
        what = " (Complex data not supported)" if np.dtype(src_dtype).kind == "c" else ""
        raise _fail(name, func, "an array of real numbers" + what, f"an array of dtype {np.dtype(src_dtype)}")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        lengths = _ragged_lengths(x)
        if lengths:  # numpy's own words ("inhomogeneous shape after 1 dimensions") name no argument and no rule
            hint = (" (items with different numbers of votes? pass counts=(positives, trials))" if name == "labels"
                    else "")
            raise _fail(name, func, f"a rectangular array{' (n, k)' if ndim == 2 else ''} of real numbers",
                        f"a {type(x).__name__} whose rows have different lengths ({', '.join(map(str, lengths))})"
                        f"{hint}") from None
        raise _fail(name, func, "an array of real numbers", type(x).__name__) from None
    if ndim == 1 and arr.ndim == 0:
        raise _fail(name, func, "a one-dimensional array", "a scalar")
    if arr.ndim != ndim:
        raise _fail(name, func, f"a {ndim}-dimensional array", f"an array of shape {arr.shape}", kind="ndim")
    if arr.shape[0] < min_len:
        raise _fail(name, func, f"an array with at least {min_len} row{'s' if min_len != 1 else ''}",
                    f"an array of shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise _fail(name, func, "finite (no NaN or inf)", f"{bad} non-finite value(s)", kind="finite")
    if lo is not None or hi is not None:
        low = -np.inf if lo is None else lo
        high = np.inf if hi is None else hi
        if clip_edges:
            tol = edge_tolerance(src_dtype if src_dtype is not None else np.float64)
            near = ((arr < low) & (arr >= low - tol)) | ((arr > high) & (arr <= high + tol))
            if np.any(near):
                arr = np.clip(arr, low, high)  # round-off at the edge: clipped (module docstring)
        out = (arr < low) | (arr > high)
        if np.any(out):
            first = float(arr[out].flat[0])
            raise _fail(name, func, rule or f"in [{low}, {high}]",
                        f"{int(np.count_nonzero(out))} value(s) outside it, e.g. {first!r}")
        if low >= 0 and np.signbit(arr).any():  # in a non-negative range a sign bit is -0.0's
            arr = arr + 0.0  # -0.0 -> 0.0, every other value as it was (module docstring, 'Signed zeros')
    return arr


def from_frame(x):
    """polars Series and DataFrames as numpy arrays; pandas objects with extension dtypes (nullable Float64, Int64, boolean) as float arrays, pd.NA as NaN (then
    refused, or read as a missing vote, by the caller's rule); other input unchanged."""
    if type(x).__module__.split(".")[0] == "polars" and hasattr(x, "to_numpy"):
        # a polars Series or DataFrame: its dtypes are polars' own (np.dtype reads them as object); to_numpy gives
        # numbers as float or int (nulls as NaN, then refused by the caller's rule) and text as strings (refused)
        out = x.to_numpy()
        if out.dtype.kind == "O":
            try:
                out = out.astype(np.float64)
            except (TypeError, ValueError):
                out = out.astype(str)
        return out
    dtype = getattr(x, "dtype", None)
    dtypes = getattr(x, "dtypes", None)  # a DataFrame: one dtype per column
    if dtype is None and dtypes is not None and hasattr(dtypes, "__iter__") and not isinstance(dtypes, np.dtype):
        dtype = next((d for d in dtypes if not isinstance(d, np.dtype)), None)  # its first extension dtype, if any
    if dtype is None or isinstance(dtype, np.dtype) or not hasattr(x, "to_numpy"):
        return x
    values = getattr(dtype, "categories", None)  # a categorical: what its values are
    if type(dtype).__name__ == "StringDtype" or (values is not None and values.dtype.kind in "OSU"):
        # text, even text that reads as numbers, is refused as a numpy array of strings is (pandas 3 reads CSV
        # columns as its string dtype, so parsing it here made a Series of "0.5" pass where np.array(["0.5"])
        # did not)
        return np.asarray(x, dtype=str)
    try:
        return x.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        return np.asarray(x, dtype=object)


def check_mean(mean, func, name="mean"):
    """A vector of mean predictions in [0, 1] (round-off at the ends clipped)."""
    try:
        return check_array(mean, name, func, lo=0.0, hi=1.0, rule="in [0, 1]", clip_edges=True)
    except ValueError as exc:
        raise ValueError(str(exc) + percent_hint(mean)) from None


def _ragged_lengths(x):
    """The distinct lengths of a list's rows when they differ (a ragged list numpy cannot make an array of), else
    an empty list; a row that is not a sequence is "a number" (a scalar beside lists)."""
    if not isinstance(x, (list, tuple)) or not x:
        return []
    lengths = {len(r) if isinstance(r, (list, tuple, np.ndarray)) else -1 for r in x}
    return [("a number" if n < 0 else n) for n in sorted(lengths)] if len(lengths) > 1 else []


def ndim_of(x):
    """np.ndim, or -1 for a ragged list (whose np.ndim raises numpy's "inhomogeneous shape" error)."""
    try:
        return np.ndim(x)
    except ValueError:
        return -1


def percent_hint(x, ndim=1):
    """' (percentages? divide by 100)' when every value lies in [0, 100] and some above 1, and ' (logits? ...)'
    when some are negative and some positive (log-odds are signed; probabilities and percentages never are); only
    for an array of the expected ``ndim``, whose failure is then its values (a scalar 1.5 passed for an array is
    refused for its shape, and the hint would send the user the wrong way)."""
    if ndim_of(x) != ndim or np.asarray(x).dtype.kind not in "iuf":
        return ""
    arr = np.asarray(x, dtype=np.float64)
    if not (arr.size and np.all(np.isfinite(arr))):
        return ""
    if arr.min() >= 0 and 1 < arr.max() <= 100:
        return " (percentages? divide by 100)"
    if arr.min() < 0 < arr.max():
        return " (logits? map them to probabilities with scipy.special.expit)"
    return ""


def _pandas_index(x):
    """The index of a pandas Series or DataFrame, else None (numpy arrays, lists, dask collections: their rows are
    their positions; dask's partitions are checked where they are read)."""
    if type(x).__module__.split(".")[0] != "pandas":
        return None
    return getattr(x, "index", None)


def check_aligned(func, named):
    """A ValueError unless the pandas objects among ``named`` ((name, object) pairs; a pair of arrays, as
    ``counts``, counts as its items) share one index.  socal reads rows by position, as numpy and scikit-learn do:
    two Series whose indexes differ (one sorted, one filtered) would be paired row by row, not label by label,
    where pandas itself would align them, and the answer would be a plausible wrong one."""
    flat = []
    for name, obj in named:
        if isinstance(obj, (tuple, list)) and len(obj) == 2 and name == "counts":
            flat += [(f"{name}[{i}]", x) for i, x in enumerate(obj)]
        else:
            flat.append((name, obj))
    first = None
    for name, obj in flat:
        index = _pandas_index(obj)
        if index is None:
            continue
        if first is None:
            first = (name, index)
        elif not index.equals(first[1]):
            raise ValueError(f"The '{name}' parameter of {func} has another pandas index than '{first[0]}': socal "
                             f"pairs rows by position, as numpy and scikit-learn do, not by index label. Align them "
                             f"first (e.g. {name}.loc[{first[0]}.index]), or pass .to_numpy() if the positions "
                             f"already match.")


def check_scores(mean, var, func, *, raw=False, names=("mean", "var")):
    """Validate the score pair ``(mean, var)``; ``names`` are the caller's names of the two parameters (evaluate's
    ``raw_mean`` and ``raw_var``), which the messages use.

    ``raw=False`` (perturbed scores, the inputs of the estimators): ``var`` in [0, 1/4].
    ``raw=True`` (the predictor's own scores, the inputs of the perturbation): ``var`` in [0, m(1-m)].
    Two pandas objects must share their index (:func:`check_aligned`).
    """
    mname, vname = names
    check_aligned(func, ((mname, mean), (vname, var)))
    m = check_mean(mean, func, mname)
    if var is None:
        raise ValueError(f"The '{vname}' parameter of {func} must be an array of variances in [0, 1/4]. Got None "
                         f"instead (for the first-order error of the mean alone, use ce1).")
    v = check_array(var, vname, func, lo=0.0, hi=0.25, rule="in [0, 1/4]", clip_edges=True)
    if m.shape != v.shape:
        raise _fail(vname, func, f"an array of the same shape as '{mname}' {m.shape}", f"shape {v.shape}")
    if raw:
        # round-off above the bound, as at the domain's ends: a variance computed in float32 (a GPU ensemble's) as
        # a hair above m (1 - m) is clipped onto it, anything further is refused
        q = m * (1.0 - m)
        dtypes = [getattr(x, "dtype", None) for x in (mean, var)]  # as check_array's: float64 where there is none
        tol = max(edge_tolerance(d if isinstance(d, np.dtype) and d.kind == "f" else np.float64) for d in dtypes)
        near = (v > q) & (v <= q + tol)
        if np.any(near):
            v = np.where(near, q, v)
        over = v > q
        if np.any(over):
            i = int(np.flatnonzero(over)[0])
            raise _fail(vname, func, f"at most {mname}*(1-{mname}) for raw scores (the feasible region)",
                        f"{int(np.count_nonzero(over))} value(s) above it, e.g. var={float(v[i])!r} at "
                        f"mean={float(m[i])!r}")
    return m, v


class VoteCounts(tuple):
    """(positives, trials) that a file reader counted from label columns with empty cells (missing votes): a tuple
    like any ``counts``, marked so that a row left with too few votes is explained as such."""

    __slots__ = ()


def check_labels(labels, n, func, *, counts=None, min_k=2):
    """Return per-item positive counts ``a`` and trial counts ``k`` (both float64 arrays of length n).

    ``labels`` is an (n, k) array of 0/1 with k >= ``min_k``, or, when ``counts`` is the tuple ``(positives, trials)``,
    ``labels`` must be None.
    """
    if counts is not None:
        if labels is not None:
            raise ValueError(f"Pass either 'labels' or 'counts' to {func}, not both.")
        if not isinstance(counts, (tuple, list)) or len(counts) != 2:
            shape = np.shape(counts) if isinstance(counts, np.ndarray) else None
            got = f"{type(counts).__name__} of shape {shape}" if shape else (
                f"{type(counts).__name__} of length {len(counts)}" if isinstance(counts, (tuple, list))
                else type(counts).__name__)
            hint = ""
            if shape and len(shape) == 2 and 2 in shape:
                hint = "c[:, 0], c[:, 1]" if shape[1] == 2 else "c[0], c[1]"
                hint = f" An array of both columns? pass counts=({hint})."
            raise ValueError(str(_fail("counts", func, "a pair (positives, trials) of arrays", got)) + hint)
        a = check_array(counts[0], "counts[0] (positives)", func, lo=0.0, hi=MAX_TRIALS,
                        rule=f"in [0, {MAX_TRIALS}]")
        why = (" (a k-snapshot needs k >= 2)" if min_k == 2 else "") + (
            "; these counts were read from label columns with empty cells (missing votes): leave out the rows with "
            f"fewer than {min_k} votes ('socal estimate' does, --min-labels)" if isinstance(counts, VoteCounts) else "")
        k = check_array(counts[1], "counts[1] (trials)", func, lo=float(min_k), hi=MAX_TRIALS,
                        rule=f"in [{min_k}, {MAX_TRIALS}]{why}")
        for arr, nm in ((a, "counts[0] (positives)"), (k, "counts[1] (trials)")):
            if np.any(arr != np.round(arr)):
                raise _fail(nm, func, "whole numbers", "non-integer values")
        if a.shape != (n,) or k.shape != (n,):
            raise _fail("counts", func, f"two arrays of length {n} (one entry per score)",
                        f"shapes {a.shape} and {k.shape}")
        if np.any(a > k):
            raise _fail("counts[0] (positives)", func, "at most counts[1] (trials)",
                        f"{int(np.count_nonzero(a > k))} item(s) with more positives than trials")
        return a, k
    if labels is None:
        raise ValueError(f"{func} needs 'labels' (an (n, k) array of 0/1) or 'counts' (positives, trials).")
    if min_k == 1 and ndim_of(labels) == 1 and not isinstance(labels, (str, bytes)):
        # one label per item as a vector (scikit-learn's y), where first order takes k >= 1: its (n, 1) column
        labels = np.asarray(from_frame(labels))[:, None]
    try:
        y = check_array(labels, "labels", func, ndim=2)
    except InputError as exc:
        if min_k == 2 and ndim_of(labels) == 1 and exc.kind == "ndim":  # one label per item
            raise ValueError(f"{exc} A k-snapshot needs k >= 2 labels per item, an (n, k) array; with one label "
                             f"per item only the first-order error can be measured (ce1).") from None
        if exc.kind == "finite":  # NaN labels are usually missing votes
            raise ValueError(f"{exc} (missing votes? pass counts=(positives, trials) with each item's own number of "
                             f"labels instead)") from None
        raise
    if y.shape[0] != n:
        hint = " (transposed? labels are (n, k): one row per item)" if y.ndim == 2 and y.shape[1] == n else ""
        raise _fail("labels", func, f"an array with {n} rows (one per score)", f"an array of shape {y.shape}{hint}")
    if y.shape[1] < min_k:
        raise _fail("labels", func, f"an (n, k) array with k >= {min_k} labels per item"
                    + (" (a k-snapshot)" if min_k == 2 else ""),
                    f"an array of shape {y.shape}")
    if np.any((y != 0.0) & (y != 1.0)):
        bad = float(y[(y != 0.0) & (y != 1.0)].flat[0])
        raise _fail("labels", func, "0 or 1", f"the value {bad!r}")
    return labels_to_counts(y)


def labels_to_counts(y):
    """(positives, trials) per row of a validated (n, k) 0/1 label array: the row sums (-0.0 labels sum to -0.0,
    read as 0.0 as check_array reads them) and k."""
    return y.sum(axis=1) + 0.0, np.full(y.shape[0], float(y.shape[1]))


H_MAX = 1e6  # a bandwidth this wide is a uniform perturbation; the domain stops there


def check_bandwidth(h, func, *, allow_none=False, per_axis=False):
    """h in (0, 1e6]: the perturbation bandwidth (floats and numpy scalars; not bool).

    With ``per_axis``, also a pair (h_mean, h_var): one bandwidth per axis of R = [0, 1] x [0, 1/4], returned as a
    tuple of two floats (a single float is returned as it is and applies to both axes).
    """
    if h is None and allow_none:
        return None
    if per_axis and isinstance(h, (tuple, list, np.ndarray)) and np.ndim(h) == 1 and len(h) == 2:
        try:
            return tuple(check_bandwidth(x.item() if isinstance(x, np.generic) else x, func) for x in h)
        except ValueError:
            raise _fail("h", func, f"a positive float in the range (0, {H_MAX:g}] or a pair (h_mean, h_var) of such "
                        f"floats (the perturbation bandwidths)", repr(h)) from None
    if isinstance(h, bool) or not isinstance(h, numbers.Real) or not np.isfinite(h) or not 0 < h <= H_MAX:
        rule = f"a positive float in the range (0, {H_MAX:g}]" + (" or a pair (h_mean, h_var) of such floats"
                                                                  if per_axis else "")
        raise _fail("h", func, rule + " (the perturbation bandwidth)", repr(h))
    return float(h)


def bandwidth_axes(h):
    """(h_mean, h_var) of a validated bandwidth: a float applies to both axes."""
    if isinstance(h, tuple):
        return h
    return float(h), float(h)


def check_int(x, name, func, lo, hi, *, allow_none=False):
    if x is None and allow_none:
        return None
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not (lo <= x <= hi):
        raise _fail(name, func, f"an int in the range [{lo}, {hi}]", repr(x))
    return int(x)


def check_n_jobs(n_jobs, func):
    """joblib's convention: a positive count of workers, or -1 for every core (-2 all but one, ...); 0 is none."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0 or abs(n_jobs) > 1024:
        raise _fail("n_jobs", func, "a non-zero int in [-1024, 1024] (joblib's convention: -1 uses every core)",
                    repr(n_jobs))
    return int(n_jobs)


def check_sizes(sizes, name, func, lo, hi):
    """A non-empty sequence of distinct ints in [lo, hi], as a tuple in the given order."""
    try:
        items = tuple(sizes)
    except TypeError:
        raise _fail(name, func, f"a non-empty sequence of ints in [{lo}, {hi}]", repr(sizes)) from None
    if not items or len(set(items)) != len(items) or any(
            isinstance(x, bool) or not isinstance(x, numbers.Integral) or not lo <= x <= hi for x in items):
        raise _fail(name, func, f"a non-empty sequence of distinct ints in [{lo}, {hi}]", repr(sizes))
    return tuple(int(x) for x in items)


def check_float(x, name, func, lo, hi, *, lo_open=False, hi_open=False, allow_none=False):
    if x is None and allow_none:
        return None
    ok = isinstance(x, numbers.Real) and not isinstance(x, bool) and np.isfinite(x)
    if ok:
        ok = (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
    if not ok:
        raise _fail(name, func, _float_rule(lo, hi, lo_open, hi_open), repr(x))
    return float(x)


def _float_rule(lo, hi, lo_open, hi_open):
    """What :func:`check_float` asks for, in words: an infinite end is no end (infinity itself is refused: every
    float checked must be finite)."""
    if math.isinf(lo) and math.isinf(hi):
        return "a finite float"
    if math.isinf(hi):
        return f"a finite float {'>' if lo_open else '>='} {lo}"
    if math.isinf(lo):
        return f"a finite float {'<' if hi_open else '<='} {hi}"
    return f"a float in the range {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def check_probability(q, name, func):
    return check_array(q, name, func, ndim=np.ndim(q), lo=0.0, hi=1.0, rule="in [0, 1]", min_len=0) \
        if np.ndim(q) else check_float(q, name, func, 0.0, 1.0)


def check_replicates(n_boot, func, *, ci=None, upper=None):
    """``n_boot`` in [20, 1e6], and at least 2 / (1 - ci) with an interval and 1 / (1 - upper) with a bound.

    The interval's ends are the bootstrap's (1 -/+ ci)/2 quantiles and the bound its 1 - upper quantile: with fewer
    replicates less than one is expected beyond an end, which is then an extreme replicate or lies between two
    (ci = 0.999 with 200 replicates gave the range of the 200, labelled a 99.9% interval)."""
    n_boot = check_int(n_boot, "n_boot", func, 20, 1_000_000)
    for name, level, tails in (("ci", ci, 2.0), ("upper", upper, 1.0)):
        # relative round-off allowance: 1 - level carries the level's rounding, relative 1e-16 / (1 - level)
        fewest = None if level is None else math.ceil(tails / (1.0 - level) * (1.0 - 1e-9))
        if fewest is not None and fewest > 1_000_000:  # no n_boot reaches it: the level is what to change
            raise _fail(name, func, f"at most {1 - tails / 1e6:g} (its tail quantiles need {tails:g} / (1 - {name}) "
                        f"bootstrap replicates, and n_boot is capped at 1,000,000)", repr(level))
        if fewest is not None and n_boot < fewest:
            raise _fail("n_boot", func, f"at least {tails:g} / (1 - {name}) = {fewest} for {name}={level!r} (the "
                        f"{'interval' if name == 'ci' else 'bound'} is read off the bootstrap's tail quantiles, and "
                        f"with fewer replicates less than one lies beyond {'each end' if name == 'ci' else 'it'})",
                        n_boot)
    return n_boot


def check_shape(size, name, func):
    """An int or a tuple (or list) of ints, each >= 0 (numpy's ``size``), as a tuple."""
    dims = (size,) if isinstance(size, numbers.Integral) else tuple(size) if isinstance(size, list) else size
    if not isinstance(dims, tuple) or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0
                                          for d in dims):
        raise _fail(name, func, "an int >= 0 or a tuple of such ints (the draws' shape)", repr(size))
    return tuple(int(d) for d in dims)


def check_bool(x, name, func):
    """True or False (numpy's bool too); not 0, 1, None or a string, whose truth a typo would decide."""
    if not isinstance(x, (bool, np.bool_)):
        raise _fail(name, func, "True or False", repr(x))
    return bool(x)


def check_choice(x, name, func, choices):
    if x not in choices:
        raise _fail(name, func, "one of " + ", ".join(repr(c) for c in choices), repr(x))
    return x


RENAMED = "deprecated"  # scikit-learn's default for a renamed parameter: "not given"


def user_stacklevel():
    """The ``stacklevel`` that points a warning raised by the caller of this function at the first frame outside
    the socal package: the user's line, however many socal calls (the shape dispatch, a recalibrator's fit) lie
    between."""
    import inspect
    import os

    root = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = inspect.currentframe().f_back, 1  # the caller's frame: the warn call's own, stacklevel 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def renamed_ridge(func, ridge, alpha):
    """The ridge a fit uses, from ``ridge`` and its former name ``alpha``.

    ``alpha`` was the relative ridge in the estimators, ``calibration_functions``, the plots and the recalibrators,
    and the significance level in ``calibration_test``: ``ce2(..., alpha=0.05)`` fitted with ridge 0.05 without a
    word (issue 74).  The ridge is now ``ridge`` everywhere; ``alpha`` left at :data:`RENAMED` is "not given", and
    given it is taken as the ridge with a FutureWarning that says so (so a call meaning the level is told what it
    did).  Both given is a ValueError: there is no telling which the caller meant."""
    if isinstance(alpha, str) and alpha == RENAMED:
        return ridge
    if ridge is not None:
        raise ValueError(f"The 'alpha' parameter of {func} is the former name of 'ridge'; pass 'ridge' alone. Got "
                         f"ridge={ridge!r} and alpha={alpha!r}.")
    import warnings

    warnings.warn(f"The 'alpha' parameter of {func} is the relative ridge of the fit (lambda = alpha tr(G)/d), not a "
                  f"significance level, and is renamed 'ridge'; 'alpha' will be removed in socal 0.3. Pass "
                  f"ridge={alpha!r}.", FutureWarning, stacklevel=user_stacklevel())
    return alpha


def warn_renamed_attribute(owner, old, new):
    """The FutureWarning of an attribute read under its former name (``alpha`` for the ridge)."""
    import warnings

    warnings.warn(f"{owner}.{old} is renamed {owner}.{new} (the relative ridge of the fit); '{old}' will be removed in "
                  f"socal 0.3.", FutureWarning, stacklevel=user_stacklevel())


NONE_SEED = 0  # what rng=None means in every socal function: this fixed seed


def check_rng(rng, func=None, name="rng"):
    """A ``numpy.random.Generator`` from a Generator, a seed, or None; ``func`` names the caller and ``name`` the
    parameter.

    ``rng=None`` has one meaning in socal: a fixed seed (:data:`NONE_SEED`), so a call that leaves ``rng`` out
    gives the same numbers every time, whatever the function (issue 74: it was a fixed seed in the estimators and
    fresh entropy in ``evaluate`` and ``perturb``).  Fresh entropy is asked for by passing one:
    ``rng=np.random.default_rng()``.  (numpy's and scikit-learn's None is fresh entropy; socal's results are
    meant to be reproduced from the call alone, so an omitted seed is a seed.)"""
    where = f"The '{name}' parameter of {func}" if func else f"The '{name}' parameter"
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng < 0:
        raise ValueError(f"{where} must be a numpy.random.Generator, an int seed >= 0 or None. Got {int(rng)} "
                         f"instead.")
    if rng is None:
        return np.random.default_rng(NONE_SEED)
    if isinstance(rng, (numbers.Integral, np.random.SeedSequence)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    hint = (" (the legacy RandomState: pass np.random.default_rng(seed), or the seed itself)"
            if isinstance(rng, np.random.RandomState) else "")
    raise ValueError(f"{where} must be a numpy.random.Generator, an int seed or None. Got {type(rng).__name__} "
                     f"instead{hint}.")


class Rule:
    """One parameter's rule in a declarative table (scikit-learn's ``_parameter_constraints`` habit): ``check(value,
    name, func, validated)`` returns the validated value or raises the ValueError that names the parameter and the
    rule; ``validated`` holds the parameters of the table checked before this one, for a rule that depends on
    another (``n_boot`` reads ``ci`` and ``upper``).  ``doc`` states the rule in words."""

    __slots__ = ("check", "doc")

    def __init__(self, check, doc):
        self.check, self.doc = check, doc

    def __repr__(self):
        return f"Rule({self.doc})"


def level_rule(allow_none=True):
    """A level in the open interval (0, 1) (``ci``, ``upper``, ``alpha``); None where it may be left out."""
    return Rule(lambda x, name, func, _: check_float(x, name, func, 0.0, 1.0, lo_open=True, hi_open=True,
                                                     allow_none=allow_none),
                "a float in (0, 1)" + (" or None" if allow_none else ""))


def int_rule(lo, hi, allow_none=False):
    """An int in [lo, hi] (not bool)."""
    return Rule(lambda x, name, func, _: check_int(x, name, func, lo, hi, allow_none=allow_none),
                f"an int in [{lo}, {hi}]" + (" or None" if allow_none else ""))


def float_rule(lo, hi, *, lo_open=False, hi_open=False, allow_none=False):
    """A finite float in the given range."""
    return Rule(lambda x, name, func, _: check_float(x, name, func, lo, hi, lo_open=lo_open, hi_open=hi_open,
                                                     allow_none=allow_none),
                _float_rule(lo, hi, lo_open, hi_open) + (" or None" if allow_none else ""))


def bool_rule():
    """True or False."""
    return Rule(lambda x, name, func, _: check_bool(x, name, func), "True or False")


def choice_rule(*choices, words=None):
    """One of ``choices``; ``words`` is the rule as the message says it (default: 'one of ...')."""
    def check(x, name, func, _):
        if isinstance(x, bool) or x not in choices:  # True == 1: a bool is never an int choice
            raise _fail(name, func, words or "one of " + ", ".join(repr(c) for c in choices), repr(x))
        return x

    return Rule(check, words or "one of " + ", ".join(repr(c) for c in choices))


def bandwidth_rule(*, allow_none=False, per_axis=True):
    """A bandwidth (:func:`check_bandwidth`)."""
    return Rule(lambda x, name, func, _: check_bandwidth(x, func, allow_none=allow_none, per_axis=per_axis),
                "a positive float or a pair (h_mean, h_var)" + (" or None" if allow_none else ""))


def replicates_rule():
    """``n_boot``: an int in [20, 1e6] reaching the tails of the levels validated before it
    (:func:`check_replicates`)."""
    return Rule(lambda x, name, func, got: check_replicates(x, func, ci=got.get("ci"), upper=got.get("upper")),
                "an int in [20, 1000000], at least 2 / (1 - ci) and 1 / (1 - upper)")


def check_parameters(table, func, values):
    """The validated values of a public call's parameters, by the declarative ``table`` (name -> :class:`Rule`), in
    the table's order and before any pass over the data: a typo costs nothing, and no pass runs on settings that
    would be refused after it.  Parameters the table does not name are returned as they are; internal callers pass
    the validated values on and do not check them again."""
    out = dict(values)
    done = {}
    for name, rule in table.items():
        if name in values:
            done[name] = out[name] = rule.check(values[name], name, func, done)
    return out
