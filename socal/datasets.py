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
import json
import pathlib
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

__all__ = ["KSnapshots", "DataWarning", "load", "load_weather", "load_cifar10h", "load_chaosnli", "load_rte",
           "load_temp", "load_bluebirds", "load_dog", "from_judgments", "DATASETS"]


class DataWarning(UserWarning):
    """Something in a data file was repaired (for example duplicate worker-item rows dropped)."""


@dataclass(frozen=True)
class KSnapshots:
    """Label counts per item: ``counts[i, c]`` votes for class ``classes[c]`` on item ``items[i]``.

    ``gold[i]`` is the index of the data set's reference label (-1 where there is none); ``report`` records what
    validation found (rows read, duplicates dropped, the histogram of votes per item, ...).
    """

    name: str
    items: np.ndarray
    classes: tuple
    counts: np.ndarray
    gold: np.ndarray
    report: dict = field(default_factory=dict)

    @property
    def votes(self):
        return self.counts.sum(axis=1)

    def binarise(self, positive):
        """One-vs-rest counts (positives, trials) for the class ``positive`` (a class label or its index)."""
        c = self.classes.index(positive) if positive in self.classes else int(positive)
        return self.counts[:, c].astype(float), self.votes.astype(float)

    def __repr__(self):
        return (f"KSnapshots({self.name!r}: {len(self.items)} items, {len(self.classes)} classes, votes per item "
                f"{int(self.votes.min())}-{int(self.votes.max())})")


def from_judgments(name, rows, classes, *, gold=None, on_duplicate="keep-first", max_votes=None):
    """Build KSnapshots from (worker, item, label) rows (in file order); ``gold`` maps item -> label."""
    if on_duplicate not in ("keep-first", "raise"):
        raise ValueError(f"The 'on_duplicate' parameter must be 'keep-first' or 'raise'. Got {on_duplicate!r} instead.")
    cls_index = {c: i for i, c in enumerate(classes)}
    seen, per_item, order = set(), {}, []
    dups = []
    for r, (worker, item, label) in enumerate(rows):
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
    truncated = 0
    if max_votes is not None:
        for it in order:
            truncated += max(0, len(per_item[it]) - max_votes)
            per_item[it] = per_item[it][:max_votes]
    counts = np.zeros((len(order), len(classes)), dtype=np.int64)
    for i, it in enumerate(order):
        np.add.at(counts[i], per_item[it], 1)
    g = np.array([cls_index.get(gold.get(it), -1) if gold else -1 for it in order])
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


def load_weather(path, **kw):
    """Weather Sentiment AMT (CF_amt.csv: worker, task, label 0-4, gold, time; no header)."""
    rows, gold = [], {}
    with open(_path(path, "CF_amt.csv"), newline="") as fh:
        for rec in csv.reader(fh):
            if not rec:
                continue
            worker, task, label, g = rec[0], rec[1], int(rec[2]), int(rec[3])
            rows.append((worker, task, label))
            gold[task] = g
    return from_judgments("weather_sentiment_amt", rows, (0, 1, 2, 3, 4), gold=gold, **kw)


def load_cifar10h(path):
    """CIFAR-10H counts (cifar10h-counts.npy, shape (10000, 10)); no worker ids, so no duplicate check."""
    counts = np.load(_path(path, "cifar10h-counts.npy"), allow_pickle=False)
    if counts.ndim != 2 or counts.shape[1] != 10 or np.any(counts < 0):
        raise ValueError(f"cifar10h: expected a (n, 10) array of non-negative counts, got shape {counts.shape}.")
    votes = counts.sum(axis=1)
    report = {"rows": int(votes.sum()), "duplicates_dropped": 0, "ragged": bool(votes.min() != votes.max()),
              "votes_per_item": dict(sorted(Counter(votes.tolist()).items()))}
    classes = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
    return KSnapshots("cifar10h", np.arange(len(counts)).astype(object), classes, counts.astype(np.int64),
                      np.full(len(counts), -1), report)


def load_chaosnli(path, subset="snli"):
    """ChaosNLI (chaosNLI_{snli,mnli_m,alphanli}.jsonl): 100 labels per item in ``label_count``."""
    files = {"snli": "chaosNLI_snli.jsonl", "mnli": "chaosNLI_mnli_m.jsonl", "alphanli": "chaosNLI_alphanli.jsonl"}
    if subset not in files:
        raise ValueError(f"The 'subset' parameter of load_chaosnli must be one of {list(files)}. Got {subset!r}.")
    classes = ("1", "2") if subset == "alphanli" else ("e", "n", "c")
    items, counts, gold = [], [], []
    with open(_path(path, files[subset])) as fh:
        for r, line in enumerate(fh):
            rec = json.loads(line)
            lc = rec["label_count"]
            if len(lc) != len(classes):
                raise ValueError(f"chaosnli: line {r + 1} has {len(lc)} counts, expected {len(classes)}.")
            items.append(rec["uid"])
            counts.append(lc)
            old = str(rec.get("old_label", ""))[:1]
            gold.append(classes.index(old) if old in classes else -1)
    counts = np.array(counts, dtype=np.int64)
    votes = counts.sum(axis=1)
    report = {"rows": int(votes.sum()), "duplicates_dropped": 0, "ragged": bool(votes.min() != votes.max()),
              "votes_per_item": dict(sorted(Counter(votes.tolist()).items()))}
    return KSnapshots(f"chaosnli_{subset}", np.array(items, dtype=object), classes, counts, np.array(gold), report)


def _snow(path, default, name, classes, **kw):
    rows, gold = [], {}
    with open(_path(path, default), newline="") as fh:
        for rec in csv.DictReader(fh, delimiter="\t"):
            item, label = rec["orig_id"], int(rec["response"])
            rows.append((rec["!amt_worker_ids"], item, label))
            gold[item] = int(rec["gold"])
    return from_judgments(name, rows, classes, gold=gold, **kw)


def load_rte(path, **kw):
    """RTE (Snow et al. 2008; rte.standardized.tsv): labels 0/1, 10 per item."""
    return _snow(path, "rte.standardized.tsv", "snow2008_rte", (0, 1), **kw)


def load_temp(path, **kw):
    """TEMP (Snow et al. 2008; temp.standardized.tsv): labels 1/2, 10 per item."""
    return _snow(path, "temp.standardized.tsv", "snow2008_temp", (1, 2), **kw)


_PAIR = re.compile(r"(\d+)\s*:\s*(true|false)")
_BLOCK = re.compile(r"(\d+)\s*:\s*\{([^}]*)\}", re.S)


def load_bluebirds(path, **kw):
    """Bluebirds (CUBAM; labels.yaml worker -> {image -> bool}, gt.yaml image -> bool), read without PyYAML (the
    files are flow mappings of integers to booleans)."""
    p = pathlib.Path(path)
    text = (p / "labels.yaml").read_text()
    rows = []
    for worker, inner in _BLOCK.findall(text):
        for image, val in _PAIR.findall(inner):
            rows.append((worker, image, val == "true"))
    if not rows:
        raise ValueError("bluebirds: no (worker, image, label) entries found in labels.yaml.")
    gold = {image: val == "true" for image, val in _PAIR.findall((p / "gt.yaml").read_text())}
    return from_judgments("bluebirds", rows, (False, True), gold=gold, **kw)


def load_dog(path, **kw):
    """Dog (dog_crowd.txt: item worker label 1-4; dog_truth.txt: one truth line per crowd line)."""
    p = pathlib.Path(path)
    crowd = np.loadtxt(p / "dog_crowd.txt", dtype=np.int64, ndmin=2)
    truth = np.loadtxt(p / "dog_truth.txt", dtype=np.int64, ndmin=2)
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
    return fn(pathlib.Path(data_dir) / folder, **kw)
