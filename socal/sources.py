"""Where the rows come from: one validated in-memory chunk, a re-iterable stream of chunks, or dask partitions.

Every pass over the data (the statistics, the deviations at a fitted map, the bootstrap passes) is written once as
``fn(index, m, v, a, k) -> mergeable`` and run by a source's :meth:`map_reduce`: a loop for local data, a tree
reduction of per-partition results for dask (run by whatever dask scheduler is active, a distributed cluster
included).  ``index`` is the chunk's position; passes that draw random numbers seed them from it.
"""

from __future__ import annotations

import sys

from ._progress import Bar
from .sufficient import iter_chunks, validate_chunk

__all__ = ["ArraySource", "ChunkSource", "DaskSource", "is_dask", "merge_all"]


def merge_all(parts):
    """Merge a sequence of mergeable results pairwise (a balanced tree, as dask does)."""
    parts = list(parts)
    if not parts:
        raise ValueError("No data: the source gave no chunks.")
    while len(parts) > 1:
        parts = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def _run(fn, bar, index, chunk):
    """One call of a pass, with the bar: a pass with a ``bar`` attribute counts its own work (replicates, row
    blocks); any other counts the chunk's rows when it is done."""
    if hasattr(fn, "bar"):
        fn.bar = bar
        return fn(index, *chunk)
    out = fn(index, *chunk)
    bar.update(chunk[0].shape[0])
    return out


def _total(fn, rows):
    """The bar's total for a pass over ``rows`` rows (a pass may count other units: ``fn.work(rows)``)."""
    return fn.work(rows) if hasattr(fn, "work") else rows


class ArraySource:
    """Validated in-memory arrays: one chunk."""

    def __init__(self, m, v, a, k):
        self.chunk = (m, v, a, k)

    def map_reduce(self, fn, *, show=False, desc=None):
        with Bar(show, desc, _total(fn, self.chunk[0].shape[0]), getattr(fn, "unit", "rows")) as bar:
            return _run(fn, bar, 0, self.chunk)


class ChunkSource:
    """A re-iterable source of chunks (see :func:`socal.sufficient.iter_chunks`); validated chunk by chunk."""

    def __init__(self, source, func, ndim, responses=None):
        self.source, self.func, self.ndim, self.min_k = source, func, ndim, responses or ndim
        self.total = getattr(source, "n_chunks", None) or (len(source) if hasattr(source, "__len__") else None)

    def map_reduce(self, fn, *, show=False, desc=None):
        acc = None
        with Bar(show, desc, None, getattr(fn, "unit", "rows")) as bar:  # rows: unknown until read
            for i, chunk in enumerate(iter_chunks(self.source, self.func, self.ndim, self.min_k)):
                part = _run(fn, bar, i, chunk)
                acc = part if acc is None else acc.merge(part)
        if acc is None:
            raise ValueError(f"The 'chunks' source of {self.func} gave no chunks.")
        return acc


def is_dask(*objs):
    """True when any argument is a dask collection (checked without importing dask unless it is loaded)."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return any(is_dask_collection(o) for o in objs if o is not None)


def _partitions(x, rows_chunks=None):
    """Delayed row blocks of a dask array (rechunked to ``rows_chunks``), Series or DataFrame."""
    import dask.array as da

    if isinstance(x, da.Array):
        if rows_chunks is not None:
            x = x.rechunk((rows_chunks,) + tuple(-1 for _ in range(x.ndim - 1)))
        elif x.ndim > 1:
            x = x.rechunk({i: -1 for i in range(1, x.ndim)})
        return list(x.to_delayed().ravel()), x.chunks[0]
    return list(x.to_delayed()), None


def _apply(fn, func, ndim, min_k, index, mean, var, labels, pos, trials):
    import numpy as np

    if np.asarray(mean).shape[0] == 0:  # an empty partition (after a filter, say) adds nothing
        e = np.empty(0)
        return fn(index, e, None if ndim == 1 else e, e, e)
    counts = None if pos is None else (np.asarray(pos), np.asarray(trials))
    chunk = {"mean": np.asarray(mean), "var": None if var is None else np.asarray(var),
             "labels": None if labels is None else np.asarray(labels), "counts": counts}
    return fn(index, *validate_chunk(chunk, f"{func} (partition {index})", ndim, min_k))


def _merge2(a, b):
    return a.merge(b)


class DaskSource:
    """Dask arrays, Series or DataFrame columns; row partitions aligned to those of ``mean``."""

    def __init__(self, mean, var, labels, counts, func, ndim, responses=None):
        try:
            import dask  # noqa: F401
        except ImportError:  # pragma: no cover - is_dask() is only true when dask is loaded
            raise ImportError("dask collections need dask: pip install 'socal[dask]'") from None
        self.func, self.ndim, self.min_k = func, ndim, responses or ndim
        m_parts, rows = _partitions(mean)
        cols = {"mean": m_parts}
        others = {"var": var, "labels": labels}
        if counts is not None:
            if not isinstance(counts, (tuple, list)) or len(counts) != 2:
                raise ValueError(f"The 'counts' parameter of {func} must be a pair (positives, trials).")
            others.update(pos=counts[0], trials=counts[1])
        for name, x in others.items():
            if x is None or (name == "var" and ndim == 1):
                cols[name] = [None] * len(m_parts)
                continue
            parts, _ = _partitions(x, rows)
            if len(parts) != len(m_parts):
                raise ValueError(f"The '{name}' parameter of {func} must have the same row partitions as 'mean' "
                                 f"({len(m_parts)}). Got {len(parts)} instead.")
            cols[name] = parts
        cols.setdefault("pos", [None] * len(m_parts))
        cols.setdefault("trials", [None] * len(m_parts))
        self.cols = cols

    def map_reduce(self, fn, *, show=False, desc=None):
        from dask import delayed

        c = self.cols
        parts = [delayed(_apply, pure=True)(fn, self.func, self.ndim, self.min_k, i, c["mean"][i], c["var"][i], c["labels"][i],
                                            c["pos"][i], c["trials"][i]) for i in range(len(c["mean"]))]
        while len(parts) > 1:  # tree reduction
            parts = [delayed(_merge2, pure=True)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        return parts[0].compute()
