"""Progress bars for long runs: tqdm when it is installed and asked for, a plain iterator otherwise."""

from __future__ import annotations

__all__ = ["progress"]


def progress(iterable, show, *, desc=None, total=None):
    if not show:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is an optional extra; without it the run is silent
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False)
