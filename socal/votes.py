"""Crowd labels as they come, turned into socal's counts.

Two layouts are common.  A *long* table has one row per (item, annotator, label), the format of crowd-kit and
peerannot; a *wide* table has one row per item and one column per annotator, with an empty cell where an annotator
did not label that item (cleanlab's ``labels`` matrix).  Both become :class:`socal.datasets.KSnapshots`: per item,
votes per class, whose ``binarise(c)`` gives the binary functions' ``counts=(positives, trials)`` and whose
``counts`` are the multiclass functions' (n, C) ``counts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._typing import ArrayLike

from ._validation import from_frame

__all__ = ["votes_from_long", "votes_from_wide"]


def _column(x, name, func):
    if x is None:
        raise ValueError(f"The '{name}' parameter of {func} must be a column (one value per row). Got None instead.")
    arr = _as_array(x)
    if arr.ndim != 1:
        raise ValueError(f"The '{name}' parameter of {func} must be 1-dimensional (one value per row). Got shape "
                         f"{arr.shape} instead.")
    return arr


def _as_array(x):
    """A column or table as a numpy array that keeps its empty cells visible: pandas and polars objects through
    ``to_numpy`` (text as objects, so that a missing value stays None or NA rather than the string 'nan')."""
    mod = type(x).__module__.split(".")[0]
    if mod in ("pandas", "polars") and hasattr(x, "to_numpy"):
        out = x.to_numpy()
        if out.dtype.kind in "OUS" or mod == "pandas" and out.dtype.kind not in "fiub":
            out = np.asarray(x.to_numpy(dtype=object) if mod == "pandas" else out, dtype=object)
        return out
    return np.asarray(from_frame(x))


def _missing(arr):
    """True where a cell is empty: NaN, None, pandas' NA, or an empty string."""
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind in "OUS":
        out = np.zeros(arr.shape, bool)
        for i, x in enumerate(arr.ravel()):
            out.flat[i] = x is None or (isinstance(x, float) and np.isnan(x)) or (isinstance(x, str) and x == "") \
                or type(x).__name__ in ("NAType", "NaTType")
        return out
    return np.zeros(arr.shape, bool)


def _classes(values, classes, func):
    present = list(dict.fromkeys(values.tolist()))
    if classes is None:
        try:
            classes = sorted(present)
        except TypeError:
            classes = present
    classes = list(classes)
    if len(set(classes)) != len(classes):
        raise ValueError(f"The 'classes' parameter of {func} must not repeat a class. Got {classes!r} instead.")
    index = {c: j for j, c in enumerate(classes)}
    unknown = [c for c in present if c not in index]
    if unknown:
        raise ValueError(f"The 'classes' parameter of {func} must list every label that occurs. Got labels "
                         f"{unknown[:5]!r} that are not in {classes!r}.")
    if len(classes) < 2:
        raise ValueError(f"{func} needs labels of at least 2 classes (pass classes= to name the ones that did not "
                         f"occur). Got only {classes!r}.")
    return classes, index


def votes_from_long(item: ArrayLike, label: ArrayLike, annotator: ArrayLike | None = None, *,
                    classes: Sequence | None = None, items: Sequence | None = None,
                    name: str = "long table") -> Any:  # socal.datasets.KSnapshots (loaded on use)
    """Votes per class per item from a long table: one row per (item, annotator, label).

    Parameters
    ----------
    item, label : columns of equal length (arrays, lists, pandas or polars Series).  Rows with an empty label are
        dropped (a missing vote).
    annotator : column, optional.  When given, an annotator who labelled an item twice is refused (a vote counted
        twice is not an independent label), naming the item and the annotator.
    classes : the class labels in order (default: the sorted labels that occur; give it to fix the order or name a
        class that never occurs).  For binary data ``classes=(0, 1)`` makes ``binarise(1)`` the positives.
    items : the item ids in the order wanted (default: the order of first appearance).  An item listed here without
        any label is refused, as is an item whose every label is empty: it has no votes to count.

    Returns
    -------
    KSnapshots, with ``report`` holding the rows read and dropped.
    """
    func = "votes_from_long"
    it = _column(item, "item", func)
    lab = _column(label, "label", func)
    if it.shape != lab.shape:
        raise ValueError(f"The 'item' and 'label' parameters of {func} must have one value per row each. Got "
                         f"{it.size} and {lab.size} rows instead.")
    ann = None if annotator is None else _column(annotator, "annotator", func)
    if ann is not None and ann.shape != it.shape:
        raise ValueError(f"The 'annotator' parameter of {func} must have one value per row ({it.size}). Got "
                         f"{ann.size} instead.")
    if _missing(it).any():
        raise ValueError(f"The 'item' parameter of {func} must name an item on every row. Got "
                         f"{int(_missing(it).sum())} empty item id(s).")
    order = list(dict.fromkeys(it.tolist())) if items is None else list(items)
    pos = {x: j for j, x in enumerate(order)}
    if items is not None:
        extra = [x for x in dict.fromkeys(it.tolist()) if x not in pos]
        if extra:
            raise ValueError(f"The 'items' parameter of {func} must list every item of the table. Got rows for "
                             f"{extra[:5]!r} that are not in it.")
    keep = ~_missing(lab)
    dropped = int((~keep).sum())
    it, lab = it[keep], lab[keep]
    if ann is not None:
        ann = ann[keep]
        seen = {}
        for x, a in zip(it.tolist(), ann.tolist()):
            if (x, a) in seen:
                raise ValueError(f"{func}: annotator {a!r} labelled item {x!r} more than once; keep one label per "
                                 f"annotator and item (or leave out 'annotator' to count every row as a vote).")
            seen[(x, a)] = True
    labels = lab.astype(float) if lab.dtype.kind == "f" and np.all(lab == np.round(lab)) else lab
    if labels.dtype.kind == "f":
        labels = labels.astype(np.int64)
    classes, index = _classes(labels, classes, func)
    counts = np.zeros((len(order), len(classes)), np.int64)
    rows = np.fromiter((pos[x] for x in it.tolist()), np.int64, count=it.size)
    cols = np.fromiter((index[c] for c in labels.tolist()), np.int64, count=labels.size)
    np.add.at(counts, (rows, cols), 1)
    empty = np.flatnonzero(counts.sum(axis=1) == 0)
    if empty.size:
        raise ValueError(f"{func}: {empty.size} item(s) have no label, e.g. item {order[int(empty[0])]!r} (every "
                         f"label of theirs empty, or listed in 'items' without a row). Leave them out: an item "
                         f"without votes says nothing about calibration.")
    report = {"rows": int(keep.size), "dropped_empty_labels": dropped, "items": len(order)}
    from .datasets import KSnapshots  # on use: importing socal loads no data-set module

    return KSnapshots(name, np.asarray(order, dtype=object), tuple(classes), counts,
                      np.full(len(order), -1, np.int64), report)


def votes_from_wide(table: ArrayLike, *, classes: Sequence | None = None, items: Sequence | None = None,
                    name: str = "wide table") -> Any:  # socal.datasets.KSnapshots (loaded on use)
    """Votes per class per item from a wide table: one row per item, one column per annotator, an empty cell (NaN,
    None, pandas' NA or an empty string) where an annotator did not label that item.

    ``table``: a 2-D array, a pandas or polars DataFrame.  ``classes``, ``items`` as in :func:`votes_from_long`
    (``items`` default: a pandas DataFrame's index, else 0..n-1).  A row with no label at all is refused."""
    func = "votes_from_wide"
    if table is None:
        raise ValueError(f"The 'table' parameter of {func} must be a 2-D table. Got None instead.")
    index = getattr(table, "index", None)
    arr = _as_array(table)
    if arr.ndim != 2:
        raise ValueError(f"The 'table' parameter of {func} must be 2-D (items x annotators). Got shape {arr.shape} "
                         f"instead.")
    n, J = arr.shape
    if items is None:
        items = list(index) if index is not None and len(index) == n and not callable(index) else list(range(n))
    elif len(items) != n:
        raise ValueError(f"The 'items' parameter of {func} must have one id per row ({n}). Got {len(items)}.")
    item_col = np.repeat(np.arange(n), J)
    lab = arr.ravel()
    miss = _missing(lab)
    if (~miss.reshape(n, J)).sum(axis=1).min(initial=1) == 0:
        bad = int(np.flatnonzero((~miss.reshape(n, J)).sum(axis=1) == 0)[0])
        raise ValueError(f"{func}: row {bad} (item {items[bad]!r}) has no label in any column; leave it out: an item "
                         f"without votes says nothing about calibration.")
    out = votes_from_long(item_col, lab, classes=classes, items=list(range(n)), name=name)
    return type(out)(name, np.asarray(items, dtype=object), out.classes, out.counts, out.gold,
                      dict(out.report, annotators=J))
