"""Loaders for multi-annotator (k-snapshot) data sets into one structure: per item, label counts per class.

Every loader takes a path (the data are never copied into the project; see each data set's SOURCE.md for origin and
licence) and returns a :class:`KSnapshots`.  Loading validates instead of passing problems on silently:

* duplicate (worker, item) rows are dropped keeping the first, counted in ``report`` and warned about with a
  :class:`DataWarning` (``on_duplicate="raise"`` makes them an error);
* a label outside the declared classes raises ``ValueError`` naming the value and the row;
* ragged vote counts are reported (``report["votes_per_item"]``, a histogram); ``max_votes=k`` keeps the first k
  votes of each item in file order.

:meth:`KSnapshots.binarise` gives one-vs-rest (positives, trials) counts, the input of :func:`socal.ce2`.
"""

from __future__ import annotations

import csv
import inspect
import json
import os
import pathlib
import re
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .rowkeys import mix64, text_columns
from .weights import salt

__all__ = ["KSnapshots", "DataWarning", "load", "load_weather", "load_cifar10h", "load_chaosnli", "load_rte",
           "load_temp", "load_bluebirds", "load_dog", "from_judgments", "verify_checksum", "DATASETS", "thin_counts",
           "EnsemblePredictions", "load_chaosnli_predictions"]


class DataWarning(UserWarning):
    """Something in a data file was repaired (for example duplicate worker-item rows dropped)."""


@dataclass(frozen=True)
class KSnapshots:
    """Label counts per item: ``counts[i, c]`` votes for class ``classes[c]`` on item ``items[i]``.

    ``gold[i]`` is the index of the data set's reference label (-1 where there is none); ``report`` records what
    validation found (rows read, duplicates dropped, the histogram of votes per item, ...); ``texts[i]`` is the
    item's text where the file has it (ChaosNLI: a dict of its fields, e.g. premise and hypothesis), else None.
    """

    name: str
    items: np.ndarray
    classes: tuple
    counts: np.ndarray
    gold: np.ndarray
    report: dict = field(default_factory=dict)
    texts: np.ndarray | None = None

    def thin(self, k, *, rng=0):
        """Keep ``k`` votes per item, drawn without replacement (multivariate hypergeometric, :func:`thin_counts`),
        keyed by the item ids: the same items keep the same votes in any order or chunking.  Items with fewer than
        ``k`` votes keep all of theirs.  Returns new KSnapshots."""
        counts = thin_counts(self.counts, k, rng=rng, keys=self.items)
        report = dict(self.report, thinned_to=int(k),
                      votes_per_item=dict(sorted(Counter(counts.sum(axis=1).tolist()).items())))
        return KSnapshots(self.name, self.items, self.classes, counts, self.gold, report, self.texts)

    @property
    def votes(self):
        return self.counts.sum(axis=1)

    def binarise(self, positive):
        """One-vs-rest counts (positives, trials) for the class ``positive`` (a class label or its index)."""
        if positive in self.classes:
            c = self.classes.index(positive)
        elif isinstance(positive, (int, np.integer)) and not isinstance(positive, bool) \
                and 0 <= positive < len(self.classes):
            c = int(positive)
        else:
            raise ValueError(f"The 'positive' parameter of KSnapshots.binarise must be one of the classes "
                             f"{list(self.classes)} or an index in [0, {len(self.classes) - 1}]. Got {positive!r} "
                             f"instead.")
        return self.counts[:, c].astype(float), self.votes.astype(float)

    def __repr__(self):
        return (f"KSnapshots({self.name!r}: {len(self.items)} items, {len(self.classes)} classes, votes per item "
                f"{int(self.votes.min())}-{int(self.votes.max())})")


def thin_counts(counts, k, *, rng=0, keys=None):
    """Keep ``k`` of each item's votes, drawn without replacement: multivariate hypergeometric class counts.

    Each vote gets a priority from a hash (:mod:`socal.rowkeys`) of (seed, the item's key as a string, the vote's
    place in class order), and
    the ``k`` smallest are kept: a uniformly random k-subset of the item's votes, so the kept counts are
    multivariate hypergeometric.  The priorities depend on the item's key and the seed only, never on the row's
    position, so the same items keep the same votes in any order, chunking or partitioning.

    Parameters
    ----------
    counts : array_like of int, shape (n, C)
        Votes per class per item.
    k : int >= 1
        Votes to keep per item (an item with fewer keeps all of its votes).
    rng : int or numpy.random.Generator, default 0
        The seed (a Generator: one integer is drawn from it).
    keys : sequence of length n, optional
        The items' ids; default: the rows' counts themselves.  Rows sharing a key and their counts get independent
        draws (by their occurrence among such rows in this call), so the default is a valid sample too; with
        distinct ids each item's draw depends on its id and the seed alone, the same in any order or chunking.

    Returns
    -------
    ndarray of int64, shape (n, C)

    Examples
    --------
    >>> import numpy as np
    >>> from socal.datasets import thin_counts
    >>> c = np.array([[30, 70, 0], [0, 0, 100]])
    >>> kept = thin_counts(c, 2, rng=0, keys=["a", "b"])
    >>> kept.sum(axis=1).tolist(), kept[1].tolist()
    ([2, 2], [0, 0, 2])
    """
    c = np.asarray(counts)
    if c.ndim != 2 or c.shape[1] < 2 or not np.issubdtype(c.dtype, np.number) or np.any(~np.isfinite(c)) \
            or np.any(c < 0) or np.any(c != np.round(c)):
        raise ValueError(f"The 'counts' parameter of thin_counts must be an (n, C) array of non-negative whole vote "
                         f"counts, C >= 2. Got shape {c.shape} instead.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"The 'k' parameter of thin_counts must be an int >= 1 (votes kept per item). Got {k!r} "
                         f"instead.")
    if isinstance(rng, np.random.Generator):
        seed = int(rng.integers(0, 2**63))
    elif isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        seed = int(rng)
    else:
        raise ValueError(f"The 'rng' parameter of thin_counts must be a non-negative int seed or a "
                         f"numpy.random.Generator. Got {rng!r} instead.")
    c = c.astype(np.int64)
    n, C = c.shape
    if keys is None:
        keys = [tuple(row) for row in c.tolist()]
    elif len(keys) != n:
        raise ValueError(f"The 'keys' parameter of thin_counts must have one key per item ({n}). Got {len(keys)} "
                         f"instead.")
    votes = c.sum(axis=1)
    item = np.repeat(np.arange(n), votes)
    cls = np.repeat(np.tile(np.arange(C), n), c.ravel())
    start = np.repeat(np.cumsum(votes) - votes, votes)
    place = np.arange(item.size) - start  # the vote's place among its item's votes, in class order
    cols = text_columns(np.array([str(key) for key in keys], dtype=str))  # a 64-bit hash per id, in two halves
    ids = (cols[:, 0].astype(np.uint64) << np.uint64(32)) | cols[:, 1].astype(np.uint64)
    # rows that share their key and their counts get independent draws, by their occurrence among such rows: one
    # fixed draw for all of them is no sample (with the counts as keys, 200,000 items of 10 votes have 63 distinct
    # rows, and the kept classes came out 0.68 / 0.17 / 0.15 against 0.5 / 0.3 / 0.2); equal rows are
    # interchangeable, so the kept votes are the same multiset in any order
    _, group = np.unique(np.column_stack([ids.view(np.int64), c]), axis=0, return_inverse=True)
    group = group.ravel()
    order_g = np.argsort(group, kind="stable")
    sizes = np.bincount(group)
    occurrence = np.empty(n, dtype=np.uint64)
    occurrence[order_g] = (np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)).astype(np.uint64)
    with np.errstate(over="ignore"):
        ids = np.where(occurrence > 0, mix64(ids ^ mix64(occurrence)), ids)
    with np.errstate(over="ignore"):
        prio = mix64(mix64(ids ^ salt("thinned votes", seed & 0xFFFFFFFF, seed >> 32))[item] + place.astype(np.uint64))
    order = np.lexsort((prio, item))
    rank = np.empty(item.size, dtype=np.int64)
    rank[order] = place  # sorted by (item, priority): position within the item
    keep = rank < k
    out = np.zeros((n, C), dtype=np.int64)
    np.add.at(out, (item[keep], cls[keep]), 1)
    return out


def from_judgments(name, rows, classes, *, gold=None, on_duplicate="keep-first", max_votes=None):
    """Build KSnapshots from (worker, item, label) rows (in file order); ``gold`` maps item -> label."""
    if on_duplicate not in ("keep-first", "raise"):
        raise ValueError(f"The 'on_duplicate' parameter of from_judgments ({name}) must be 'keep-first' or 'raise'. "
                         f"Got {on_duplicate!r} instead.")
    if gold is not None and not isinstance(gold, Mapping):
        raise TypeError(f"The 'gold' parameter of from_judgments ({name}) must be a mapping item -> label. Got "
                        f"{type(gold).__name__} instead.")
    if max_votes is not None and (isinstance(max_votes, bool) or not isinstance(max_votes, (int, np.integer))
                                  or max_votes < 1):
        raise ValueError(f"The 'max_votes' parameter of from_judgments ({name}) must be None or an int >= 1 (votes "
                         f"kept per item). Got {max_votes!r} instead.")
    cls_index = {c: i for i, c in enumerate(classes)}
    if len(cls_index) < 2:
        raise ValueError(f"The 'classes' parameter of from_judgments ({name}) must name at least 2 distinct "
                         f"classes. Got {list(classes)!r} instead.")
    seen, per_item, order = set(), {}, []
    dups = []
    for r, row in enumerate(rows):
        try:
            worker, item, label = row
        except (TypeError, ValueError):
            raise ValueError(f"The 'rows' parameter of from_judgments ({name}) must hold (worker, item, label) "
                             f"triples. Row {r + 1} is {row!r}.") from None
        if label not in cls_index:
            raise ValueError(f"{name}: row {r + 1} has label {label!r}, not one of the classes {list(classes)}.")
        if worker is not None:
            key = (worker, item)
            if key in seen:
                dups.append({"row": r + 1, "worker": worker, "item": item})
                if on_duplicate == "raise":
                    raise ValueError(f"{name}: row {r + 1} repeats worker {worker!r} on item {item!r}.")
                continue
            seen.add(key)
        if item not in per_item:
            per_item[item] = []
            order.append(item)
        per_item[item].append(cls_index[label])
    if not order:
        raise ValueError(f"{name}: no (worker, item, label) rows: nothing to build k-snapshots from.")
    truncated = 0
    if max_votes is not None:
        for it in order:
            truncated += max(0, len(per_item[it]) - max_votes)
            per_item[it] = per_item[it][:max_votes]
    counts = np.zeros((len(order), len(classes)), dtype=np.int64)
    for i, it in enumerate(order):
        np.add.at(counts[i], per_item[it], 1)
    g = np.full(len(order), -1)
    for i, it in enumerate(order if gold else ()):  # items without a gold label keep -1
        if it in gold:
            if gold[it] not in cls_index:  # a typo or another coding of the classes: never a silent -1
                raise ValueError(f"{name}: the gold label of item {it!r} is {gold[it]!r}, not one of the classes "
                                 f"{list(classes)}.")
            g[i] = cls_index[gold[it]]
    if dups:
        warnings.warn(f"{name}: dropped {len(dups)} duplicate (worker, item) row(s), keeping the first of each.",
                      DataWarning, stacklevel=3)
    votes = counts.sum(axis=1)
    report = {"rows": sum(1 for _ in rows) if isinstance(rows, list) else None, "duplicates_dropped": len(dups),
              "duplicates": dups[:20], "votes_per_item": dict(sorted(Counter(votes.tolist()).items())),
              "ragged": bool(votes.min() != votes.max()), "votes_truncated": truncated}
    return KSnapshots(name, np.array(order, dtype=object), tuple(classes), counts, g, report)


def _path(path, default):
    p = pathlib.Path(path)
    return p / default if p.is_dir() else p


def _existing(path, what):
    p = pathlib.Path(path)
    if not p.is_file():
        raise ValueError(f"{what}: {p} is {'a folder, not a file' if p.is_dir() else 'not found'}.")
    return p


_SHA = re.compile(r"^([0-9a-f]{64})\s+(\S+)\s*$", re.M)


def verify_checksum(path):
    """Compare ``path`` with the sha256 listed for it in a SOURCE.md beside it; True if checked, False if no
    SOURCE.md lists it.  A mismatch (a modified or truncated file) raises ``ValueError``."""
    import hashlib

    path = pathlib.Path(path)
    source = path.parent / "SOURCE.md"
    if not source.is_file():
        return False
    listed = {name: digest for digest, name in _SHA.findall(source.read_text(errors="replace"))}
    if path.name not in listed:
        return False
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != listed[path.name]:
        raise ValueError(f"{path}: its sha256 {h.hexdigest()[:12]}... differs from {listed[path.name][:12]}... in "
                         f"{source}: the file is modified or truncated (pass verify=False to load it anyway).")
    return True


def _lines(path, name):
    """(line number, text) of a text file; a last line without a newline means a cut file and is refused."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: {path} is not UTF-8 text ({exc.reason}).") from None
    if text and not text.endswith("\n"):
        n = text.count("\n") + 1
        raise ValueError(f"{name}: {path}, line {n}: the last line has no newline, so the file looks truncated.")
    return list(enumerate(text.splitlines(), start=1))


def _field(rec, i, conv, path, line, what):
    try:
        return conv(rec[i])
    except (IndexError, ValueError):
        got = rec[i] if i < len(rec) else "nothing"
        raise ValueError(f"{path}, line {line}: field {i + 1} ({what}) must be {conv.__name__}, got {got!r}; a "
                         f"malformed or cut row.") from None


def load_weather(path, *, verify=True, **kw):
    """Weather Sentiment AMT (CF_amt.csv: worker, task, label 0-4, gold, time; no header)."""
    p = _existing(_path(path, "CF_amt.csv"), "weather")
    if verify:
        verify_checksum(p)
    rows, gold = [], {}
    for line, text in _lines(p, "weather"):
        rec = next(csv.reader([text]), [])
        if not rec:
            continue
        worker, task = _field(rec, 0, str, p, line, "worker"), _field(rec, 1, str, p, line, "task")
        label, g = _field(rec, 2, int, p, line, "label"), _field(rec, 3, int, p, line, "gold")
        rows.append((worker, task, label))
        gold[task] = g
    if not rows:
        raise ValueError(f"weather: {p} holds no judgments.")
    return from_judgments("weather_sentiment_amt", rows, (0, 1, 2, 3, 4), gold=gold, **kw)


def _thinned(snap, max_votes, rng, func):
    """``snap`` with ``max_votes`` votes kept per item (:meth:`KSnapshots.thin`), or as it is for None."""
    if max_votes is None:
        return snap
    if isinstance(max_votes, bool) or not isinstance(max_votes, (int, np.integer)) or max_votes < 1:
        raise ValueError(f"The 'max_votes' parameter of {func} must be None or an int >= 1 (votes kept per item, "
                         f"drawn without replacement). Got {max_votes!r} instead.")
    return snap.thin(int(max_votes), rng=rng)


def load_cifar10h(path, *, verify=True, max_votes=None, rng=0):
    """CIFAR-10H counts (cifar10h-counts.npy, shape (10000, 10)); no worker ids, so no duplicate check.
    ``max_votes=k`` keeps k votes per image, drawn without replacement from ``rng`` (:func:`thin_counts`)."""
    p = _existing(_path(path, "cifar10h-counts.npy"), "cifar10h")
    if verify:
        verify_checksum(p)
    try:
        counts = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"cifar10h: {p} is not a readable .npy array ({exc}).") from None
    if counts.ndim != 2 or counts.shape[1] != 10 or np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError(f"cifar10h: expected a (n, 10) array of non-negative counts, got shape {counts.shape}.")
    votes = counts.sum(axis=1)
    report = {"rows": int(votes.sum()), "duplicates_dropped": 0, "ragged": bool(votes.min() != votes.max()),
              "votes_per_item": dict(sorted(Counter(votes.tolist()).items()))}
    classes = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
    snap = KSnapshots("cifar10h", np.arange(len(counts)).astype(object), classes, counts.astype(np.int64),
                      np.full(len(counts), -1), report)
    return _thinned(snap, max_votes, rng, "load_cifar10h")


def load_chaosnli(path, subset="snli", *, verify=True, max_votes=None, rng=0):
    """ChaosNLI (chaosNLI_{snli,mnli_m,alphanli}.jsonl): 100 labels per item in ``label_count``; ``texts`` holds
    each item's ``example`` fields (premise and hypothesis; alphanli's observations and hypotheses).
    ``max_votes=k`` keeps k votes per item, drawn without replacement from ``rng`` (:func:`thin_counts`)."""
    files = {"snli": "chaosNLI_snli.jsonl", "mnli": "chaosNLI_mnli_m.jsonl", "alphanli": "chaosNLI_alphanli.jsonl"}
    if subset not in files:
        raise ValueError(f"The 'subset' parameter of load_chaosnli must be one of {list(files)}. Got {subset!r}.")
    classes = ("1", "2") if subset == "alphanli" else ("e", "n", "c")
    p = _existing(_path(path, files[subset]), "chaosnli")
    if verify:
        verify_checksum(p)
    items, counts, gold, texts = [], [], [], []
    for line, text in _lines(p, "chaosnli"):
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
            lc = [int(c) for c in rec["label_count"]]
            uid = rec["uid"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{p}, line {line}: not a ChaosNLI record with 'uid' and 'label_count' "
                             f"({type(exc).__name__}: {exc}).") from None
        if len(lc) != len(classes) or min(lc) < 0:
            raise ValueError(f"{p}, line {line}: {len(lc)} counts {lc}, expected {len(classes)} counts >= 0.")
        items.append(uid)
        counts.append(lc)
        ex = rec.get("example")
        texts.append({k: v for k, v in ex.items() if k != "uid"} if isinstance(ex, dict) else None)
        old = str(rec.get("old_label", ""))[:1]
        gold.append(classes.index(old) if old in classes else -1)
    if not items:
        raise ValueError(f"chaosnli: {p} holds no records.")
    counts = np.array(counts, dtype=np.int64)
    votes = counts.sum(axis=1)
    report = {"rows": int(votes.sum()), "duplicates_dropped": 0, "ragged": bool(votes.min() != votes.max()),
              "votes_per_item": dict(sorted(Counter(votes.tolist()).items()))}
    tx = np.empty(len(texts), dtype=object)
    tx[:] = texts
    snap = KSnapshots(f"chaosnli_{subset}", np.array(items, dtype=object), classes, counts, np.array(gold), report,
                      tx)
    return _thinned(snap, max_votes, rng, "load_chaosnli")


@dataclass(frozen=True)
class EnsemblePredictions:
    """An ensemble's class probabilities joined to crowd votes by item id.

    ``probs[i, j, c]``: member j's probability of class ``votes.classes[c]`` on item ``votes.items[i]`` (the classes
    in the votes' order); ``members`` names them (file stems); ``missing`` lists the vote items no member predicts
    (left out of ``votes``).
    """

    name: str
    probs: np.ndarray
    members: tuple
    votes: KSnapshots
    missing: tuple = ()

    def __repr__(self):
        n, M, C = self.probs.shape
        return f"EnsemblePredictions({self.name!r}: {n} items, {M} members, {C} classes; {len(self.missing)} missing)"


def load_chaosnli_predictions(path, chaosnli_path, subset="snli", *, model="roberta-base", verify=True,
                              max_votes=None, rng=0):
    """A fine-tuned ensemble's predictions on the ChaosNLI items (Baan et al. 2022; ``chaosnli_predictions/``),
    joined by uid to ChaosNLI's votes (:func:`load_chaosnli`).

    The files are ``{SNLI,MNLI}_{dev,test}_{model}_{seed}.json`` (JSON lines with ``uid`` and ``probs``); each seed is
    a member, its dev and test halves together.  Their classes are (entailment, contradiction, neutral), ChaosNLI's
    (e, n, c): the probabilities are reordered to the votes' order (``probs[[0, 2, 1]]``).  Checksums are verified
    against the folder's SOURCE.md.  Items with no prediction from every member are left out and named in
    ``missing`` (MNLI: 30 of 1,599).

    Parameters
    ----------
    path : folder of the prediction files
    chaosnli_path : folder of ChaosNLI's jsonl files
    subset : {'snli', 'mnli'}
    model : {'roberta-base', 'bert-base-uncased'} (BERT: SNLI only)
    verify, max_votes, rng : as in :func:`load_chaosnli`

    Returns
    -------
    EnsemblePredictions
    """
    func = "load_chaosnli_predictions"
    tags = {"snli": "SNLI", "mnli": "MNLI"}
    if subset not in tags:
        raise ValueError(f"The 'subset' parameter of {func} must be one of {list(tags)}. Got {subset!r} instead.")
    folder = pathlib.Path(path)
    if not folder.is_dir():
        raise ValueError(f"The 'path' parameter of {func} must be the folder of the prediction files. Got "
                         f"{str(path)!r} instead.")
    files = sorted(folder.glob(f"{tags[subset]}_*_{model}_*.json"))
    seeds = sorted({f.stem.rsplit("_", 1)[1] for f in files})
    if not seeds:
        raise ValueError(f"{func}: no {tags[subset]} files for model {model!r} in {folder}.")
    votes = load_chaosnli(chaosnli_path, subset, verify=verify, max_votes=max_votes, rng=rng)
    order = np.array([0, 2, 1])  # (e, c, n) -> ChaosNLI's (e, n, c)
    per_member = []
    for seed in seeds:
        got = {}
        for half in ("dev", "test"):
            f = folder / f"{tags[subset]}_{half}_{model}_{seed}.json"
            f = _existing(f, func)
            if verify:
                verify_checksum(f)
            for line, text in _lines(f, func):
                if not text.strip():
                    continue
                try:
                    rec = json.loads(text)
                    pr = np.asarray(rec["probs"], dtype=float)
                    uid = rec["uid"]
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{f}, line {line}: not a prediction record with 'uid' and 'probs' "
                                     f"({type(exc).__name__}: {exc}).") from None
                if pr.shape != (3,) or not np.all(np.isfinite(pr)) or np.any(pr < 0):
                    raise ValueError(f"{f}, line {line}: 'probs' must be 3 non-negative numbers. Got {rec['probs']}.")
                got[uid] = pr[order] / pr.sum()
        per_member.append(got)
    have = [all(uid in g for g in per_member) for uid in votes.items]
    keep = np.flatnonzero(have)
    missing = tuple(votes.items[i] for i in np.flatnonzero(~np.array(have)))
    probs = np.stack([[g[votes.items[i]] for g in per_member] for i in keep]) if keep.size else \
        np.zeros((0, len(seeds), 3))
    kept = KSnapshots(votes.name, votes.items[keep], votes.classes, votes.counts[keep], votes.gold[keep],
                      dict(votes.report, missing_predictions=len(missing)),
                      None if votes.texts is None else votes.texts[keep])
    return EnsemblePredictions(f"{votes.name}_{model}", probs, tuple(f"{model}_{s}" for s in seeds), kept, missing)


def _snow(path, default, name, classes, *, verify=True, **kw):
    p = _existing(_path(path, default), name)
    if verify:
        verify_checksum(p)
    lines = _lines(p, name)
    if not lines:
        raise ValueError(f"{name}: {p} is empty.")
    header = lines[0][1].split("\t")
    need = ["!amt_worker_ids", "orig_id", "response", "gold"]
    missing = [c for c in need if c not in header]
    if missing:
        raise ValueError(f"{p}, line 1: column(s) {missing} missing from the header {header}.")
    idx = [header.index(c) for c in need]
    rows, gold = [], {}
    for line, text in lines[1:]:
        rec = text.split("\t")
        if len(rec) != len(header):
            raise ValueError(f"{p}, line {line}: {len(rec)} field(s), the header has {len(header)}; a malformed or "
                             f"cut row.")
        worker, item = rec[idx[0]], rec[idx[1]]
        label, g = _field(rec, idx[2], int, p, line, "response"), _field(rec, idx[3], int, p, line, "gold")
        rows.append((worker, item, label))
        gold[item] = g
    if not rows:
        raise ValueError(f"{name}: {p} holds no judgments.")
    return from_judgments(name, rows, classes, gold=gold, **kw)


def load_rte(path, **kw):
    """RTE (Snow et al. 2008; rte.standardized.tsv): labels 0/1, 10 per item."""
    return _snow(path, "rte.standardized.tsv", "snow2008_rte", (0, 1), **kw)


def load_temp(path, **kw):
    """TEMP (Snow et al. 2008; temp.standardized.tsv): labels 1/2, 10 per item."""
    return _snow(path, "temp.standardized.tsv", "snow2008_temp", (1, 2), **kw)


_PAIR = re.compile(r"(\d+)\s*:\s*(true|false)")
_BLOCK = re.compile(r"(\d+)\s*:\s*\{([^}]*)\}", re.S)


def load_bluebirds(path, *, verify=True, **kw):
    """Bluebirds (CUBAM; labels.yaml worker -> {image -> bool}, gt.yaml image -> bool), read without PyYAML (the
    files are flow mappings of integers to booleans)."""
    p = pathlib.Path(path)
    files = [_existing(p / "labels.yaml", "bluebirds"), _existing(p / "gt.yaml", "bluebirds")]
    if verify:
        for f in files:
            verify_checksum(f)
    text = files[0].read_text()
    if text.count("{") != text.count("}"):
        raise ValueError(f"{files[0]}: unbalanced braces ({text.count('{')} open, {text.count('}')} closed): a cut "
                         f"or malformed file.")
    rows = []
    for worker, inner in _BLOCK.findall(text):
        for image, val in _PAIR.findall(inner):
            rows.append((worker, image, val == "true"))
    if not rows:
        raise ValueError("bluebirds: no (worker, image, label) entries found in labels.yaml.")
    gold = {image: val == "true" for image, val in _PAIR.findall((p / "gt.yaml").read_text())}
    return from_judgments("bluebirds", rows, (False, True), gold=gold, **kw)


def _int_table(path, cols, name):
    out = []
    for line, text in _lines(path, name):
        if not text.strip():
            continue
        rec = text.split()
        if len(rec) != cols:
            raise ValueError(f"{path}, line {line}: {len(rec)} field(s), expected {cols}; a malformed or cut row.")
        out.append([_field(rec, i, int, path, line, f"column {i + 1}") for i in range(cols)])
    if not out:
        raise ValueError(f"{name}: {path} is empty.")
    return np.array(out, dtype=np.int64)


def load_dog(path, *, verify=True, **kw):
    """Dog (dog_crowd.txt: item worker label 1-4; dog_truth.txt: one truth line per crowd line)."""
    p = pathlib.Path(path)
    files = [_existing(p / "dog_crowd.txt", "dog"), _existing(p / "dog_truth.txt", "dog")]
    if verify:
        for f in files:
            verify_checksum(f)
    crowd = _int_table(files[0], 3, "dog")
    truth = _int_table(files[1], 2, "dog")
    if len(truth) != len(crowd) or np.any(truth[:, 0] != crowd[:, 0]):
        raise ValueError("dog: dog_truth.txt must have one line per dog_crowd.txt line, for the same items.")
    rows = [(int(w), int(i), int(label)) for i, w, label in crowd]
    gold = {int(i): int(t) for i, t in truth}
    return from_judgments("dog", rows, (1, 2, 3, 4), gold=gold, **kw)


DATASETS = {"weather": (load_weather, "weather_sentiment_amt"), "cifar10h": (load_cifar10h, "cifar10h"),
            "chaosnli": (load_chaosnli, "chaosnli"), "rte": (load_rte, "snow2008_rte"),
            "temp": (load_temp, "snow2008_temp"), "bluebirds": (load_bluebirds, "bluebirds"), "dog": (load_dog, "dog")}


def load(name, data_dir, **kw):
    """Load a data set by short name from ``data_dir`` (the folder holding one sub-folder per data set)."""
    if name not in DATASETS:
        raise ValueError(f"The 'name' parameter of load must be one of {list(DATASETS)}. Got {name!r} instead.")
    fn, folder = DATASETS[name]
    if not isinstance(data_dir, (str, os.PathLike)) or not pathlib.Path(data_dir).is_dir():
        raise ValueError(f"The 'data_dir' parameter of load must be a folder holding one sub-folder per data set. "
                         f"Got {str(data_dir)!r} instead.")
    # the loader's own options, and from_judgments' where the loader passes them on (its **kw): a wrong one was a
    # TypeError naming from_judgments
    params = inspect.signature(fn).parameters
    takes = [p for p, v in params.items() if p != "path" and v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)]
    if any(v.kind == v.VAR_KEYWORD for v in params.values()):
        passed = inspect.signature(from_judgments).parameters
        takes += [p for p, v in passed.items() if v.kind == v.KEYWORD_ONLY and p != "gold"]
    unknown = sorted(set(kw) - set(takes))
    if unknown:
        raise ValueError(f"load({name!r}) takes {', '.join(repr(t) for t in sorted(takes)) or 'no options'}; got "
                         f"{', '.join(repr(u) for u in unknown)}.")
    return fn(pathlib.Path(data_dir) / folder, **kw)
