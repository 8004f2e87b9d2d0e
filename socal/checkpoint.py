"""Resumable streamed runs: a run's mergeable statistics saved as it goes, so that a rerun skips what was read.

Every pass over a chunked source is a left fold of per-chunk results (:class:`socal.sources.ChunkSource`), and the
passes of a run come in the same order every time (the settings fix them).  So a run's state after chunk j of its
p-th pass is (the results of passes 0 .. p-1, the fold of pass p up to chunk j), and a rerun that starts from that
state and folds chunks j+1, j+2, ... in the same way gives bit-identical numbers to a run that never stopped.
:class:`Checkpoint` keeps that state in one file, written atomically (:mod:`socal.files`) after every ``every``
chunks and at the end of each pass.

What makes a checkpoint refuse a rerun (a ValueError naming what differs):

- **the settings**: the function and every argument that changes its numbers (h, degree, ci, n_boot, the seed, the
  chunk size, ...), compared key by key;
- **the data**: a hash of each chunk's validated rows (blake2b of the scores and label counts), recorded per pass
  (the passes of one run may read different rows: :func:`socal.evaluate` tests the raw scores and estimates on the
  perturbed ones).  A rerun reads chunk j again only to check its hash: the chunks of a pass in progress that were
  folded already are read and hashed (a stream cannot be skipped without reading) but not computed on, and each
  source of a finished pass is read and hashed once per rerun.

A checkpoint file is a pickle, like joblib's caches: it holds the statistics objects as they are.  Loading a pickle
can run code, so resume only from a checkpoint your own run wrote.  The file records the format and the socal
version; a checkpoint from another version of socal is refused (its statistics may differ in layout).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from typing import Any

import numpy as np

from .files import atomic_write

__all__ = ["Checkpoint"]

FORMAT = "socal.checkpoint"
VERSION = 1


def _version():
    from . import __version__

    return __version__


def chunk_hash(m: np.ndarray, v: np.ndarray | None, a: np.ndarray, k: np.ndarray) -> str:
    """blake2b of a validated chunk's rows: its scores and label counts, with their shapes."""
    h = hashlib.blake2b(digest_size=16)
    for x in (m, v, a, k):
        if x is None:
            h.update(b"none")
            continue
        x = np.ascontiguousarray(x, dtype=float)
        h.update(repr(x.shape).encode())
        h.update(x.tobytes())
    return h.hexdigest()


class Checkpoint:
    """Where a streamed run keeps its state, and how often it saves it.

    Parameters
    ----------
    path : str or PathLike
        The checkpoint file.  Absent: a new run, which creates it.  Present: a rerun, which resumes from it (and is
        refused if its settings or its data differ).
    every : int, default 1
        Save the pass in progress after every ``every`` chunks (and always at the end of a pass).  A larger value
        costs less writing and redoes more chunks after a kill.
    rows : int, default 50_000
        For in-memory arrays: the rows per chunk the run is split into, so that it can be resumed part-way
        (a source of chunks keeps its own).  Part of the settings: a rerun must use the same.

    A run is one call of :func:`socal.ce2`, :func:`socal.ce1`, :func:`socal.calibration_test` or
    :func:`socal.evaluate` (whose test, CE2 and CE1 share one checkpoint).  Once the run has finished, its
    checkpoint holds every pass's result, and a rerun reads no chunk: it returns the same result at once.
    """

    def __init__(self, path: str | os.PathLike, *, every: int = 1, rows: int = 50_000) -> None:
        from ._validation import check_int

        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"The 'path' parameter of Checkpoint must be a path. Got {type(path).__name__} instead.")
        self.path = os.fspath(path)
        self.every = check_int(every, "every", "Checkpoint", 1, 10**9)
        self.rows = check_int(rows, "rows", "Checkpoint", 10, 10**12)
        self._state: dict[str, Any] | None = None
        self._pass = 0
        self.resumed_chunks = 0  # chunks the run did not compute again (read and hashed only)

    # -- the run's start --------------------------------------------------------------------------------------------
    def start(self, func: str, settings: dict[str, Any]) -> Checkpoint:
        """Begin (or resume) a run of ``func`` with ``settings``; refused if the file holds another run's state."""
        settings = {"func": func, "rows": self.rows, **{k: _plain(v) for k, v in settings.items()}}
        if self._state is not None:  # already started by the caller that owns the run (evaluate)
            return self
        self._pass = 0
        if os.path.exists(self.path):
            try:
                with open(self.path, "rb") as fh:
                    state = pickle.load(fh)
            except Exception as exc:  # a file that is not a checkpoint, whatever unpickling raised
                raise ValueError(f"The checkpoint {self.path} cannot be read as a socal checkpoint "
                                 f"({type(exc).__name__}: {exc}); remove it to start afresh.") from None
            if not isinstance(state, dict) or state.get("format") != FORMAT:
                raise ValueError(f"The checkpoint {self.path} is not a socal checkpoint; remove it to start afresh.")
            if state.get("version") != VERSION or state.get("socal") != _version():
                raise ValueError(f"The checkpoint {self.path} was written by socal {state.get('socal')} (format "
                                 f"{state.get('version')}), not {_version()} (format {VERSION}): its statistics may "
                                 f"differ in layout; remove it to start afresh.")
            old = state["settings"]
            differ = sorted(k for k in set(old) | set(settings) if old.get(k, "<absent>") != settings.get(k,
                                                                                                            "<absent>"))
            if differ:
                what = "; ".join(f"{k}: {old.get(k, '<absent>')!r} in the checkpoint, {settings.get(k, '<absent>')!r} "
                                 f"now" for k in differ)
                raise ValueError(f"The checkpoint {self.path} is from other settings ({what}). Rerun with the "
                                 f"checkpoint's settings, or remove it to start afresh.")
            self._state = state
        else:
            self._state = {"format": FORMAT, "version": VERSION, "socal": _version(), "settings": settings,
                           "passes": []}
        return self

    # -- one pass ---------------------------------------------------------------------------------------------------
    def next_pass(self) -> tuple[int, dict[str, Any] | None]:
        """(this pass's number, its saved state or None): a finished pass has ``done`` and ``result``; one in
        progress ``chunks`` (how many folded) and ``acc``."""
        if self._state is None:
            raise RuntimeError("Checkpoint.start was not called")
        p = self._pass
        self._pass += 1
        passes = self._state["passes"]
        return p, (passes[p] if p < len(passes) else None)

    def save_progress(self, p: int, chunks: int, rows: int, acc: Any, hashes: list[str]) -> None:
        """Pass ``p`` has folded its first ``chunks`` chunks (``rows`` rows) into ``acc``."""
        self._set(p, {"done": False, "chunks": chunks, "rows": rows, "acc": acc, "hashes": list(hashes)})

    def save_done(self, p: int, result: Any, hashes: list[str]) -> None:
        """Pass ``p`` is finished: its result, and the hashes of every chunk it read."""
        self._set(p, {"done": True, "result": result, "hashes": list(hashes)})

    def _set(self, p: int, entry: dict[str, Any]) -> None:
        passes = self._state["passes"]
        if p < len(passes):
            passes[p] = entry
        elif p == len(passes):
            passes.append(entry)
        else:
            raise RuntimeError(f"pass {p} saved before pass {len(passes)}")
        with atomic_write(self.path, "wb") as fh:
            pickle.dump(self._state, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def where(self, p: int) -> str:
        """What the file holds of pass ``p``, in words (for an error's note)."""
        passes = self._state["passes"] if self._state else []
        if p < len(passes) and not passes[p]["done"]:
            return f"the checkpoint {self.path} holds this pass up to chunk {passes[p]['chunks'] - 1}"
        done = sum(1 for e in passes if e["done"])
        return f"the checkpoint {self.path} holds {done} finished pass(es)"


def _plain(x: Any) -> Any:
    """A setting as a comparable, printable value (tuples and numpy scalars as lists and floats)."""
    if isinstance(x, (tuple, list)):
        return [_plain(y) for y in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.random.Generator):
        return repr(x.bit_generator.state)
    return x


def rng_fingerprint(rng: Any) -> Any:
    """A seed argument as a setting: an int or None as it is, a Generator by its state (taken before any draw)."""
    if isinstance(rng, np.random.Generator):
        return repr(rng.bit_generator.state)
    if isinstance(rng, np.random.SeedSequence):
        return repr((rng.entropy, rng.spawn_key))
    return _plain(rng)


def as_checkpoint(checkpoint: Any, func: str) -> Checkpoint | None:
    """None, a Checkpoint, or a path made into one (with the defaults)."""
    if checkpoint is None or isinstance(checkpoint, Checkpoint):
        return checkpoint
    if isinstance(checkpoint, (str, os.PathLike)):
        return Checkpoint(checkpoint)
    raise ValueError(f"The 'checkpoint' parameter of {func} must be a path or a socal.Checkpoint. Got "
                     f"{type(checkpoint).__name__} instead.")
