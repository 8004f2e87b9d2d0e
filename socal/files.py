"""Writing results: atomic saves, and the checks an output path passes before any work.

A file socal writes holds its old content or its new content, never a torn one.

Opening the target with "w" truncates it before a byte of the new content is written, so a process killed mid-save
(SIGKILL, a full disk, a lost node) leaves neither version.  :func:`atomic_write` writes a temporary file in the
target's own directory (so that the final rename never crosses a file system), flushes and fsyncs it, gives it the
permissions the target would have had, then ``os.replace``-s it over the target: on POSIX and Windows that rename is
atomic, so a reader sees the old file or the new one.  The directory is fsynced afterwards where the platform allows,
so that the rename itself survives a power cut.

A kill between the temporary file's creation and the rename leaves that file behind (``.<name>.<random>.tmp`` beside
the target: nothing can remove it once the process is gone); the target is intact.  Any exception inside the block
removes the temporary file and leaves the target as it was.

The checks (:func:`check_output_path`, :func:`check_output_paths`, :func:`check_table_path`,
:func:`check_image_format`, :func:`require_extra`) refuse, before any work, an output that could not be written or
a writer whose optional package is missing: the commands of :mod:`socal.commands` and ``socal audit`` call them, so
a typo costs nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["atomic_write", "write_text_atomic", "write_bytes_atomic", "save_figure", "check_output_path",
           "check_output_paths", "check_table_path", "check_image_format", "require_extra"]


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


def require_extra(command, extra, *modules):
    """Fail before any work when an optional dependency of ``command`` is missing, naming the pip command."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"'socal {command}' needs {', '.join(missing)}, which is not installed; install it with: "
                          f"pip install 'socal[{extra}]'")


def check_output_paths(args, *names):
    """Refuse, before any work, an output path whose folder does not exist, that is a folder, that is the input
    file (``args.file``: writing there would replace the data with the results) or that another output names too
    (the later file would replace the earlier)."""
    import os

    given = [(name, getattr(args, name, None)) for name in names if getattr(args, name, None)]
    for i, (a, pa) in enumerate(given):
        for b, pb in given[i + 1:]:
            if os.path.abspath(pa) == os.path.abspath(pb):
                raise ValueError(f"--{a} and --{b} name the same file ({pa}): one would replace the other; give two "
                                 f"file names (nothing was computed)")
    for name in names:
        path = getattr(args, name, None)
        check_output_path(path, f"--{name}")
        source = getattr(args, "file", None)
        if path and source and os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise ValueError(f"--{name} {path} is the input file: writing it would replace the data; give another "
                             f"file name (nothing was computed)")


def check_image_format(path, flag):
    """Refuse, before any work, an image file whose extension matplotlib cannot write (it would fail only after the
    whole evaluation); a name without an extension gets matplotlib's default format."""
    import os

    from matplotlib.backend_bases import FigureCanvasBase

    ext = os.path.splitext(path)[1][1:].lower()
    kinds = FigureCanvasBase.get_supported_filetypes()
    if ext and ext not in kinds:
        raise ValueError(f"{flag} {path}: matplotlib cannot write '.{ext}' files (it writes "
                         f"{', '.join(sorted(kinds))}); nothing was computed")


def check_table_path(path, flag):
    """Refuse, before any work, a table file socal cannot write in the format its name says: a Parquet name
    without pyarrow, or a compressed Parquet name (:func:`socal.io.write_table`); and '-', which means standard
    output to Unix tools, where socal prints its report."""
    import pathlib

    if not path:
        return
    if path == "-":  # the Unix name of standard output, which carries the report: a file named '-' would surprise
        raise ValueError(f"{flag} -: standard output carries the report; give the table a file name (nothing was "
                         f"computed)")
    fmt, packed = table_format(pathlib.Path(path))
    if fmt != "parquet":
        return
    if packed is not None:
        raise ValueError(f"{flag} {path}: a Parquet file is compressed inside; drop the {pathlib.Path(path).suffix} "
                         f"ending (nothing was computed)")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{flag} {path}: writing Parquet needs pyarrow (pip install 'socal[parquet]'), or give a "
                         f".csv name (nothing was computed)") from None


def check_output_path(path, flag):
    """Raise ValueError (naming ``flag``) unless ``path`` can be written: its folder exists and is writable, it is
    not a folder, and it is not '-' (standard output to Unix tools, where socal prints its report).  Called before
    any work, so a typo costs nothing (``socal evaluate``, ``socal audit``)."""
    import os

    if not path:
        return
    if path == "-":  # the Unix name of standard output, which carries the report: a file named '-' would surprise
        raise ValueError(f"{flag} -: standard output carries the report; give a file name (nothing was computed)")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} does not exist (create it "
                         f"first; nothing was computed)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} is not writable (nothing "
                         f"was computed)")


COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}  # read as the text inside them (socal.io)


def table_format(path):
    """(format, compression module or None) of ``path`` by its suffixes, as :func:`read_chunks` reads it: 'parquet'
    for .parquet/.pq, 'tsv' for .tsv/.tab, else 'csv'; x.tsv.gz is a .tsv file, compressed."""
    suffixes = [x.lower() for x in path.suffixes]
    packed = COMPRESSED.get(suffixes.pop()) if suffixes and suffixes[-1] in COMPRESSED else None
    suffix = suffixes[-1] if suffixes else ""
    return ("parquet" if suffix in (".parquet", ".pq") else "tsv" if suffix in (".tsv", ".tab") else "csv"), packed
