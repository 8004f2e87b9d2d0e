"""Atomic file writes: a file socal writes holds its old content or its new content, never a torn one.

Opening the target with "w" truncates it before a byte of the new content is written, so a process killed mid-save
(SIGKILL, a full disk, a lost node) leaves neither version.  :func:`atomic_write` writes a temporary file in the
target's own directory (so that the final rename never crosses a file system), flushes and fsyncs it, gives it the
permissions the target would have had, then ``os.replace``-s it over the target: on POSIX and Windows that rename is
atomic, so a reader sees the old file or the new one.  The directory is fsynced afterwards where the platform allows,
so that the rename itself survives a power cut.

A kill between the temporary file's creation and the rename leaves that file behind (``.<name>.<random>.tmp`` beside
the target: nothing can remove it once the process is gone); the target is intact.  Any exception inside the block
removes the temporary file and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["atomic_write", "write_text_atomic", "write_bytes_atomic", "save_figure"]


def _new_file_mode(path: str) -> int:
    """The permissions the target keeps (an existing file's) or would get from a plain open (0o666 less the umask)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # Windows cannot open a directory; its rename is durable on its own
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **open_kwargs: Any) -> Iterator[IO]:
    """``with atomic_write(path, "wb") as fh:`` write to ``fh``; on leaving the block the file replaces ``path``.

    ``mode`` is "w" or "wb" (text or binary); ``open_kwargs`` go to :func:`open` (encoding, newline).  An exception
    in the block leaves ``path`` untouched and removes the temporary file.
    """
    if mode not in ("w", "wb", "wt"):
        raise ValueError(f"The 'mode' parameter of atomic_write must be 'w', 'wt' or 'wb'. Got {mode!r} instead.")
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def write_text_atomic(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def save_figure(fig: Any, path: str | os.PathLike, **savefig_kwargs: Any) -> None:
    """``fig.savefig`` to ``path`` atomically, in the format its ending names (matplotlib's default, PNG, without
    one), as ``fig.savefig(path)`` would choose it."""
    ext = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format=ext or None, **savefig_kwargs)
