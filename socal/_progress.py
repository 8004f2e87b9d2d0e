"""Progress bars for long runs: counts of the real work (rows read, replicates done), visible at the end with the
elapsed time.  tqdm when it is installed; otherwise a plain one-line counter on standard error."""

from __future__ import annotations

import sys
import time

__all__ = ["tracked", "Bar"]


class _Plain:
    """The built-in fallback: one line on stderr, redrawn at most twice a second, kept at the end."""

    def __init__(self, desc, total, unit):
        self.desc, self.total, self.unit = desc or "working", total, unit
        self.n, self.t0, self.last = 0, time.perf_counter(), 0.0

    def _draw(self, end=""):
        elapsed = time.perf_counter() - self.t0
        of = f"/{self.total:,}" if self.total else ""
        sys.stderr.write(f"\r{self.desc}: {self.n:,}{of} {self.unit} [{elapsed:.1f} s]{end}")
        sys.stderr.flush()

    def update(self, k):
        self.n += k
        now = time.perf_counter()
        if now - self.last > 0.5:
            self.last = now
            self._draw()

    def close(self):
        self._draw("\n")


class Bar:
    """A progress bar over units of work (``with Bar(progress, desc, total, unit) as bar: bar.update(k)``); a no-op
    when ``progress`` is false."""

    def __init__(self, progress, desc=None, total=None, unit="rows"):
        self._impl = None
        if not progress:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:  # tqdm is an optional extra; the fallback still shows the work
            self._impl = _Plain(desc, total, unit)
        else:
            self._impl = tqdm(desc=desc, total=total, unit=" " + unit, unit_scale=unit == "rows", leave=True,
                              file=sys.stderr)

    def update(self, k):
        if self._impl is not None:
            self._impl.update(k)

    def close(self):
        if self._impl is not None:
            self._impl.close()
            self._impl = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tracked(iterable, progress, *, desc=None, total=None, unit="items"):
    """Iterate with a :class:`Bar` counting one unit per item (a plain iterator when ``progress`` is false)."""
    if not progress:
        return iterable

    def gen():
        with Bar(True, desc, total, unit) as bar:
            for item in iterable:
                yield item
                bar.update(1)

    return gen()
