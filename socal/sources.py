"""Where the rows come from, and the rule every row passes: one validated in-memory chunk, a re-iterable stream of
chunks, or dask partitions.

Every pass over the data (the statistics, the deviations at a fitted map, the bootstrap passes, the calibration
test's sums) is written once as ``fn(index, m, v, a, k) -> mergeable`` and run by a source's :meth:`map_reduce`: a
loop for local data, a tree reduction of per-partition results for dask (run by whatever dask scheduler is active, a
distributed cluster included).  ``index`` is the chunk's position.

Rows are validated here, once, whatever their origin (:func:`check_rows`): scores in their domain, labels 0/1 or
counts with enough labels per item.  What passes is float arrays (m, v or None, a, k).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np

from ._progress import Bar
from ._validation import check_aligned, check_labels, check_mean, check_scores

__all__ = ["ArraySource", "ChunkSource", "DaskSource", "Rows", "is_dask", "check_rows", "iter_chunks", "validate_chunk",
           "input_kind", "KINDS"]


class Rows:
    """Rows a public call has validated already (means, variances or None, positives, trials as floats): an internal
    caller passes them on in place of ``mean`` so that the callee reads them as they are, without validating them
    again (:func:`socal.evaluate` hands its rows to the test, CE2 and CE1 this way)."""

    __slots__ = ("m", "v", "a", "k")

    def __init__(self, m, v, a, k):
        for name, value in zip(self.__slots__, (m, v, a, k)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Rows are frozen: validated once, they are handed on as they are (cannot set {name!r}).")

    def astuple(self):
        """(m, v, a, k), as :func:`check_rows` returns them."""
        return self.m, self.v, self.a, self.k


def check_rows(func, ndim, mean, var, labels, counts=None, min_k=None, *, raw=False):
    """Validated rows (m, v, a, k): 2-D checks the score pair (mean in [0, 1], var in [0, 1/4], or with ``raw`` a
    predictor's raw scores, var <= m (1 - m)), 1-D the mean alone (a ``var`` the rows carry is not read: one file
    serves CE2 and CE1); then the labels (0/1, at least ``min_k`` per item, default ``ndim``) or ``counts``.
    ``func`` names the caller in the messages."""
    if ndim == 2:
        m, v = check_scores(mean, var, func, raw=raw)
    else:
        m, v = check_mean(mean, func), None
    check_aligned(func, (("mean", mean), ("labels", labels), ("counts", counts)))  # var: in check_scores
    a, k = check_labels(labels, m.shape[0], func, counts=counts, min_k=min_k or ndim)
    return m, v, a, k


def _run(fn, bar, index, chunk):
    """One call of a pass, with the bar: a pass that counts its own work (replicates, row blocks; its class says
    ``counts_own_work``) is handed the bar as an argument; any other's chunk rows are counted when it is done.  (The
    source used to set the bar as an attribute of the pass it ran.)"""
    if getattr(fn, "counts_own_work", False):
        return fn(index, *chunk, bar=bar)
    out = fn(index, *chunk)
    bar.update(chunk[0].shape[0])
    return out


def _total(fn, rows):
    """The bar's total for a pass over ``rows`` rows (a pass may count other units: ``fn.work(rows)``)."""
    return fn.work(rows) if hasattr(fn, "work") else rows


class ArraySource:
    """Validated in-memory arrays: one chunk.  A pass with a ``whole`` attribute is told that its chunk is every
    row (nothing will be merged into its result)."""

    def __init__(self, m, v, a, k):
        self.chunk = (m, v, a, k)

    def map_reduce(self, fn, *, progress=False, desc=None):
        """Run the pass ``fn`` on the one chunk of validated rows."""
        if hasattr(fn, "whole"):
            fn.whole = True
        with Bar(progress, desc, _total(fn, self.chunk[0].shape[0]), getattr(fn, "unit", "rows")) as bar:
            return _run(fn, bar, 0, self.chunk)


class ChunkSource:
    """A re-iterable source of chunks (see :func:`iter_chunks`); validated chunk by chunk.  With ``one_pass`` (a
    caller that reads the data once, as the calibration test does) a one-shot iterator or generator is taken too.

    With a started :class:`socal.checkpoint.Checkpoint`, each pass resumes where the checkpoint left it (chunks
    already folded are read and hashed, not computed on) and saves its fold every ``checkpoint.every`` chunks; a
    finished pass is not read again.  Whatever a pass raises (the source, a chunk's validation, the computation)
    gets a note naming the chunk, the rows the pass had read, and what the checkpoint holds."""

    def __init__(self, source, func, ndim, responses=None, one_pass=False, checkpoint=None):
        self.source, self.func, self.ndim, self.min_k = source, func, ndim, responses or ndim
        self.one_pass = one_pass
        self.checkpoint = checkpoint
        self.verified = False  # with a checkpoint: whether this source's chunks were hashed against it
        self.total = getattr(source, "n_chunks", None) or (len(source) if hasattr(source, "__len__") else None)

    @classmethod
    def from_arrays(cls, m, v, a, k, func, ndim, responses=None, *, rows, checkpoint=None):
        """Validated in-memory rows as chunks of ``rows`` rows (a checkpointed run over arrays)."""
        n = m.shape[0]
        chunks = [{"mean": m[i:i + rows], "var": None if v is None else v[i:i + rows],
                   "counts": (a[i:i + rows], k[i:i + rows])} for i in range(0, max(n, 1), rows)]
        return cls(chunks, func, ndim, responses, checkpoint=checkpoint)

    def _hashes(self, cp, expected):
        """(index, chunk, hash) of each chunk, checked against ``expected`` (the pass's hashes in the checkpoint)
        where it has one; ``expected`` is extended with the hashes of chunks read for the first time."""
        from .checkpoint import chunk_hash

        for i, chunk in enumerate(iter_chunks(self.source, self.func, self.ndim, self.min_k, self.one_pass)):
            digest = chunk_hash(*chunk)
            if i < len(expected) and expected[i] != digest:
                raise ValueError(f"The data differ from the checkpoint {cp.path}'s: chunk {i} of {self.func}'s "
                                 f"source does not hash as it did when the checkpoint was written. Rerun on the same "
                                 f"data in the same chunks, or remove the checkpoint to start afresh.")
            if i == len(expected):
                expected.append(digest)
            yield i, chunk, digest

    def map_reduce(self, fn, *, progress=False, desc=None):
        """Run the pass ``fn`` on every chunk and fold the results with ``merge`` (resuming from the checkpoint, if
        any; see the class)."""
        cp = self.checkpoint
        p, saved = cp.next_pass() if cp is not None else (None, None)
        if saved is not None and saved["done"]:
            if not self.verified:  # a finished pass is not computed again, but its data are checked once per source
                n = -1
                for n, _, _ in self._hashes(cp, list(saved["hashes"])):
                    pass
                _same_count(cp, self.func, n + 1, len(saved["hashes"]))
                self.verified = True
            return saved["result"]
        start = saved["chunks"] if saved is not None else 0
        acc = saved["acc"] if saved is not None else None
        rows = saved["rows"] if saved is not None else 0
        hashes = list(saved["hashes"]) if saved is not None else []
        i = -1
        try:
            with Bar(progress, desc, None, getattr(fn, "unit", "rows")) as bar:  # rows: unknown until read
                if cp is None:
                    chunks = enumerate(iter_chunks(self.source, self.func, self.ndim, self.min_k, self.one_pass))
                else:
                    chunks = ((j, c) for j, c, _ in self._hashes(cp, hashes))
                while True:
                    i += 1  # the chunk being read (an error names it)
                    try:
                        _, chunk = next(chunks)
                    except StopIteration:
                        break
                    if i < start:
                        cp.resumed_chunks += 1
                        continue
                    part = _run(fn, bar, i, chunk)
                    acc = part if acc is None else acc.merge(part)
                    rows += chunk[0].shape[0]
                    if cp is not None and (i + 1) % cp.every == 0:
                        cp.save_progress(p, i + 1, rows, acc, hashes)
            if cp is not None and i < start:
                _same_count(cp, self.func, i, start)
        except Exception as exc:
            where = f"; {cp.where(p)}" if cp is not None else ""
            exc.add_note(f"socal: {self.func} stopped at chunk {i} of its source ({rows:,} rows read in this pass "
                         f"before it{where}).")
            raise
        if acc is None:
            raise ValueError(f"The 'chunks' source of {self.func} gave no chunks.")
        if cp is not None:
            self.verified = True  # every chunk of this source was hashed against the checkpoint's
            cp.save_done(p, acc, hashes)
        return acc


def _same_count(cp, func, got, recorded):
    if got != recorded:
        raise ValueError(f"The data differ from the checkpoint {cp.path}'s: {func}'s source gave {got} chunks, the "
                         f"checkpoint recorded {recorded}. Rerun on the same data, or remove the checkpoint to start "
                         f"afresh.")


def is_dask(*objs):
    """True when any argument is a dask collection (checked without importing dask unless it is loaded)."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return any(is_dask_collection(o) for o in objs if o is not None)


KINDS = ("validated", "prebuilt", "chunks", "dask", "arrays")


def input_kind(func, data, chunks, prebuilt=()):
    """Which kind of input a public call was given, from its data arguments ``data`` (``mean`` first, counts last)
    and ``chunks``: the one place every call (the binary and multiclass estimators and tests) decides it, so each
    refuses a mixture with the same words.  In order:

    - 'validated': :class:`Rows` another public call validated (``data[0]``, the call's ``mean``);
    - 'prebuilt': mergeable statistics, an instance of a type in ``prebuilt`` (``data[0]``; what else the call
      needs with them is the caller's rule);
    - 'chunks': a chunk source, with every data argument None;
    - 'dask': any data argument a dask collection (a counts pair counts by its parts);
    - 'arrays': in-memory arrays.

    A ValueError names the rule when arrays and ``chunks`` are both given, or neither."""
    first = data[0]
    if isinstance(first, Rows):
        return "validated"
    if prebuilt and isinstance(first, tuple(prebuilt)):
        return "prebuilt"
    if chunks is not None:
        if any(x is not None for x in data):
            raise ValueError(f"Pass either arrays or 'chunks' to {func}, not both.")
        return "chunks"
    if first is None:
        kinds = "".join(f" or {t.__name__}" for t in prebuilt)
        raise ValueError(f"The 'mean' parameter of {func} must be an array of means in [0, 1]{kinds} (or pass "
                         f"'chunks'). Got None instead.")
    last = data[-1]  # counts: a (positives, trials) pair counts by its parts
    pair = list(last) if isinstance(last, (tuple, list)) and len(last) == 2 else [last]
    return "dask" if is_dask(*data[:-1], *pair) else "arrays"


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


def _known_rows(x):
    """A dask array's row count, or None where it is unknown (after a filter) or ``x`` has no shape."""
    shape = getattr(x, "shape", ())  # a dask Series' shape holds a lazy Scalar: not known here
    known = len(shape) and isinstance(shape[0], (int, float, np.integer, np.floating)) and np.isfinite(shape[0])
    return int(shape[0]) if known else None


def _aligned(func, *named):
    """The inputs as given where they are dask collections (or None), and in-memory arrays among them as dask
    arrays in the row blocks of the first dask array: mixing dask and numpy inputs works as the arrays alone would.
    With no dask array to take the blocks from (dask DataFrame columns), an in-memory input is a ValueError."""
    from dask import is_dask_collection

    template = next((x for _, x in named if is_dask_collection(x) and hasattr(x, "chunks")
                     and isinstance(x.chunks, tuple)), None)
    out = []
    for name, x in named:
        if x is None or is_dask_collection(x):
            rows, first = _known_rows(x), _known_rows(template)
            if rows is not None and first is not None and rows != first:
                raise ValueError(f"The '{name}' parameter of {func} must have one row per item ({first}, as the "
                                 f"first dask array). Got {rows} rows instead.")
            out.append(x)
            continue
        if template is None:
            raise ValueError(f"The '{name}' parameter of {func} is in memory while other inputs are dask DataFrame "
                             f"columns: pass every input as a dask collection, or every one in memory.")
        import dask.array as da

        arr = np.asarray(x)
        if arr.ndim == 0 or arr.shape[0] != template.shape[0]:
            raise ValueError(f"The '{name}' parameter of {func} must have one row per item ({template.shape[0]}, as "
                             f"the dask inputs). Got shape {arr.shape} instead.")
        out.append(da.from_array(arr, chunks=(template.chunks[0],) + tuple(-1 for _ in range(arr.ndim - 1))))
    return out


def _apply(fn, func, ndim, min_k, index, mean, var, labels, pos, trials):
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
        if counts is not None and isinstance(counts, (tuple, list)) and len(counts) == 2:
            pos, trials = _aligned(func, ("mean", mean), ("var", var), ("labels", labels),
                                   ("counts[0] (positives)", counts[0]), ("counts[1] (trials)", counts[1]))[3:]
            counts = (pos, trials)
        mean, var, labels = _aligned(func, ("mean", mean), ("var", var), ("labels", labels))[:3]
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
            array = isinstance(getattr(x, "chunks", None), tuple)  # a dask array (a Series keeps its partitions)
            unknown = [rows is not None and any(np.isnan(r) for r in rows), array and any(np.isnan(x.chunks[0]))]
            if rows is not None and array and unknown[0] != unknown[1]:  # dask cannot cut known blocks at unknown ends
                which = ("'mean'", f"{name!r}") if unknown[0] else (f"{name!r}", "'mean'")
                raise ValueError(f"The '{name}' parameter of {func} cannot be split into the row blocks of 'mean': "
                                 f"the row blocks of {which[0]} have unknown sizes (a dask array after a filter) "
                                 f"and those of {which[1]} do not. Filter every input with the same mask, or call "
                                 f".compute_chunk_sizes() on {which[0]}.")
            parts, _ = _partitions(x, rows)
            if len(parts) != len(m_parts):
                raise ValueError(f"The '{name}' parameter of {func} must have the same row partitions as 'mean' "
                                 f"({len(m_parts)}). Got {len(parts)} instead.")
            cols[name] = parts
        cols.setdefault("pos", [None] * len(m_parts))
        cols.setdefault("trials", [None] * len(m_parts))
        self.cols = cols

    def map_reduce(self, fn, *, progress=False, desc=None):
        """Run the pass ``fn`` on every partition and tree-reduce the results with ``merge`` on the active dask
        scheduler."""
        from dask import delayed

        c = self.cols
        parts = [delayed(_apply, pure=True)(fn, self.func, self.ndim, self.min_k, i, c["mean"][i], c["var"][i],
                                            c["labels"][i], c["pos"][i], c["trials"][i]) for i in range(len(c["mean"]))]
        while len(parts) > 1:  # tree reduction
            parts = [delayed(_merge2, pure=True)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        return parts[0].compute()


def iter_chunks(source, func, ndim=2, min_k=None, one_pass=False):
    """Validated chunks (m, v, a, k) from a re-iterable source (with ``one_pass``, any iterable: the caller reads it
    once).

    A source is a list (or any re-iterable) of chunks, a zero-argument callable returning an iterator of chunks, or
    an object with a ``chunks()`` method (the readers of :mod:`socal.io`).  A chunk is a mapping with keys 'mean',
    'var' (2-D) and 'labels' or 'counts', or a tuple (mean, var, labels).
    """
    if hasattr(source, "chunks") and callable(source.chunks):
        it = source.chunks()
    elif callable(source):
        it = source()
    elif isinstance(source, Mapping):  # one chunk where a list of them belongs: iterating it would read its keys
        raise TypeError(f"The 'chunks' parameter of {func} must be a list of chunks. Got one chunk (a mapping with "
                        f"keys {sorted(map(str, source))}): pass [chunk], or the arrays themselves.")
    elif isinstance(source, (str, bytes, np.ndarray)) or not hasattr(source, "__iter__"):
        raise TypeError(f"The 'chunks' parameter of {func} must be a list of chunks, a callable returning an "
                        f"iterator of chunks, or a socal.io reader. Got {type(source).__name__} instead.")
    else:
        it = iter(source)
        if it is source and not one_pass:
            raise TypeError(f"The 'chunks' parameter of {func} must be re-iterable (the estimate makes more than one "
                            f"pass): pass a list, a callable returning a fresh iterator, or a socal.io reader, not a "
                            f"one-shot iterator or generator.")
    for i, chunk in enumerate(it):
        yield validate_chunk(chunk, f"{func} (chunk {i})", ndim, min_k)


def validate_chunk(chunk, func, ndim, min_k=None):
    """One chunk (a mapping with 'mean', 'var', 'labels' or 'counts', or a tuple (mean, var, labels)) as validated
    float arrays (m, v, a, k); ``func`` names the caller in the messages."""
    if isinstance(chunk, Mapping):
        unknown = set(chunk) - {"mean", "var", "labels", "counts"}
        if unknown:
            raise ValueError(f"A chunk of {func} has unknown key(s) {sorted(unknown)}; the keys are 'mean', 'var', "
                             f"'labels' or 'counts'.")
        mean, var, labels, counts = chunk.get("mean"), chunk.get("var"), chunk.get("labels"), chunk.get("counts")
    elif isinstance(chunk, tuple) and len(chunk) == 3:
        (mean, var, labels), counts = chunk, None
    else:
        hint = (" (the arrays of one chunk where a list of chunks belongs? pass chunks=[(mean, var, labels)], or "
                "the arrays themselves)" if isinstance(chunk, np.ndarray) else "")
        raise TypeError(f"A chunk of {func} must be a mapping with keys 'mean', 'var', 'labels' or 'counts', or a "
                        f"tuple (mean, var, labels). Got {type(chunk).__name__} instead{hint}.")
    if is_empty_chunk(mean, var, labels, counts):
        e = np.empty(0)
        return e, (None if ndim == 1 else e), e, e
    return check_rows(func, ndim, mean, var, labels, counts, min_k)


def is_empty_chunk(mean, var, labels, counts):
    """Whether every given input of a chunk has 0 rows: such a chunk (a filter's, a reader's last batch) adds
    nothing, as an empty dask partition does, wherever chunks are added (sources, ``update`` of the statistics)."""
    given = [x for x in (mean, var, labels, *(counts if isinstance(counts, (tuple, list)) else ())) if x is not None]
    return mean is not None and all(np.ndim(x) >= 1 and np.shape(x)[0] == 0 for x in given)
