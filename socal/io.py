"""Reading scores and labels from files in chunks, for data larger than memory.

A reader is a re-iterable source of chunks (see :func:`socal.sources.iter_chunks`): pass it as ``chunks=`` to
:func:`socal.ce2`, :func:`socal.ce1` or :func:`socal.calibration_functions`, or to
:meth:`socal.SufficientStats.from_chunks`.  Each pass re-reads the file; memory is bounded by ``chunk_rows`` rows.

Labels come as k columns of 0/1 (``labels=[...]``), where an empty cell is a missing vote (the row then has fewer
trials; :class:`MissingVotesWarning` says how many), or as two count
columns (``positives=``, ``trials=``).  A malformed value raises ``ValueError`` naming the file, the line and the
column.  A CSV chunk is parsed by numpy's C reader; a chunk with an empty cell (or any field the C reader refuses) is
re-read row by row in Python, about ten times slower, to find missing votes and exact line numbers.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
import pathlib
import warnings
from typing import Any

import numpy as np

from .files import COMPRESSED as _COMPRESSED, atomic_write, table_format
from ._validation import VoteCounts, labels_to_counts

__all__ = ["CSVChunks", "ParquetChunks", "read_chunks", "read_all", "read_columns", "column_names", "write_table",
           "MissingVotesWarning", "EnoughLabels"]

DEFAULT_CHUNK_ROWS = 1_000_000




def _file_path(path, func, reading=True):
    """``path`` (a str, bytes or os.PathLike) as a pathlib.Path; anything else is a TypeError naming it."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"The 'path' parameter of {func} must be a file path (str or os.PathLike). Got "
                        f"{type(path).__name__} instead.")
    if reading and str(path) == "-" and not pathlib.Path(path).exists():  # the habit for standard input
        raise ValueError(f"The 'path' parameter of {func} must be a file: '-' (standard input) cannot be read, as "
                         f"the estimate passes over the rows more than once (the bootstrap's passes). Save the data "
                         f"to a file first (compressed .gz, .bz2 and .xz files are read as they are).")
    return pathlib.Path(path)


def _open_text(path):
    """A text handle on a CSV file, UTF-8 with an optional byte-order mark; .gz, .bz2 and .xz files are read
    through their decompressor, as pandas reads them."""
    kind = _COMPRESSED.get(path.suffix.lower())
    if kind is None:
        return open(path, newline="", encoding="utf-8-sig")
    import importlib

    return importlib.import_module(kind).open(path, "rt", newline="", encoding="utf-8-sig")


class MissingVotesWarning(UserWarning):
    """Empty label cells were read as missing votes (ragged counts)."""


def _check_columns(func, mean, var, labels, positives, trials):
    if not isinstance(mean, str) or not mean:
        raise ValueError(f"The 'mean' parameter of {func} must be a column name. Got {mean!r} instead.")
    if var is not None and (not isinstance(var, str) or not var):
        raise ValueError(f"The 'var' parameter of {func} must be a column name or None. Got {var!r} instead.")
    if (labels is None) == (positives is None):
        raise ValueError(f"{func} needs either 'labels' (label columns) or 'positives' and 'trials' (count columns).")
    if labels is not None:
        labels = [labels] if isinstance(labels, str) else list(labels)
        if not labels or not all(isinstance(c, str) and c for c in labels):
            raise ValueError(f"The 'labels' parameter of {func} must be a non-empty list of column names. "
                             f"Got {labels!r} instead.")
        if len(set(labels)) != len(labels):
            raise ValueError(f"The 'labels' parameter of {func} names a column twice: {labels}.")
    elif not isinstance(trials, str) or not trials or not isinstance(positives, str) or not positives:
        raise ValueError(f"The 'positives' and 'trials' parameters of {func} must both be column names.")
    # one column in two roles reads one quantity as another: positives == trials makes every label positive
    roles = [("mean", mean), ("var", var)] + ([("labels", c) for c in labels] if labels is not None else
                                              [("positives", positives), ("trials", trials)])
    seen = {}
    for role, col in roles:
        if col is not None and col in seen and seen[col] != role:
            raise ValueError(f"{func} reads column {col!r} as both {seen[col]!r} and {role!r}; every role needs its "
                             f"own column.")
        seen.setdefault(col, role)
    return labels


def _check_chunk_rows(func, chunk_rows):
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or not 1 <= chunk_rows <= 10**9:
        raise ValueError(f"The 'chunk_rows' parameter of {func} must be an int in the range [1, 1e9]. "
                         f"Got {chunk_rows!r} instead.")
    return chunk_rows


class _Reader:
    def _chunk(self, cols, where):
        """A chunk mapping from named float columns (labels with NaN for a missing vote).  A label cell other than
        0, 1 or empty, or a count that is not a whole number (positives above trials, trials below 1), is refused
        here, where ``where(r)`` can name its place in the file (the chunk's row r: 'line 2502'); the estimators
        would refuse it too, but only by chunk."""
        out = {"mean": cols[self.mean]}
        if self.var is not None:
            out["var"] = cols[self.var]
        if self.labels is not None:
            for c in self.labels:
                x = cols[c]
                bad = np.flatnonzero(~(np.isnan(x) | (x == 0.0) | (x == 1.0)))
                if bad.size:
                    raise ValueError(f"{self.path}, {where(int(bad[0]))}, column {c!r}: {x[bad[0]]:g} is not a 0/1 "
                                     f"label (an empty cell is a missing vote); {bad.size} such cell(s) in this "
                                     f"chunk.")
            y = np.column_stack([cols[c] for c in self.labels])
            missing = np.isnan(y)
            if missing.any():
                self._missing += int(missing.sum())
                out["counts"] = VoteCounts((np.where(missing, 0.0, y).sum(axis=1),
                                            (~missing).sum(axis=1).astype(float)))
            else:
                out["labels"] = y
        else:
            a, k = cols[self.positives], cols[self.trials]
            for c, x, rule in ((self.positives, a, "a count of positive labels (an integer >= 0)"),
                               (self.trials, k, "a count of labels (an integer >= 1)")):
                bad = np.flatnonzero((x != np.round(x)) | (x < (0 if c == self.positives else 1)))
                if bad.size:
                    raise ValueError(f"{self.path}, {where(int(bad[0]))}, column {c!r}: {x[bad[0]]:g} is not {rule}; "
                                     f"{bad.size} such cell(s) in this chunk.")
            over = np.flatnonzero(a > k)
            if over.size:
                raise ValueError(f"{self.path}, {where(int(over[0]))}: {a[over[0]]:g} positives ({self.positives!r}) "
                                 f"out of {k[over[0]]:g} labels ({self.trials!r}); {over.size} such row(s) in this "
                                 f"chunk.")
            out["counts"] = (a, k)
        return out

    def chunks(self):
        self._missing = 0
        try:
            yield from self._chunks()
        except (EOFError, OSError) as exc:  # a compressed file cut short or damaged after its header
            if self.path.suffix.lower() not in _COMPRESSED:
                raise
            raise ValueError(f"{self.path}: the compressed data end early or are damaged ({exc}).") from None
        if self._missing:
            warnings.warn(f"{self.path}: {self._missing} empty label cell(s) read as missing votes (those rows have "
                          f"fewer trials).", MissingVotesWarning, stacklevel=2)

    @property
    def columns(self):
        cols = [self.mean] + ([self.var] if self.var is not None else [])
        return cols + (list(self.labels) if self.labels is not None else [self.positives, self.trials])


_BOOLEANS = {"true": 1.0, "false": 0.0}  # a label column's boolean cells (lower-cased), as pandas writes them


class CSVChunks(_Reader):
    """Chunks of a CSV file with a header row (UTF-8, a byte-order mark allowed).

    Parameters
    ----------
    path : str or path
        A file ending in .gz, .bz2 or .xz is read through its decompressor.
    mean, var : str
        Column names of the perturbed scores (``var`` None for first-order use).
    labels : list of str, optional
        0/1 label columns (k >= 2 for CE2); an empty cell is a missing vote.  True and False (any case) are read
        as 1 and 0 there, as a Parquet file's boolean columns are (pandas writes booleans so).
    positives, trials : str, optional
        Instead of ``labels``: count columns.
    chunk_rows : int
        Rows per chunk (memory is about ``chunk_rows`` x (2 + k) x 8 bytes plus the fit's O(l^4)).
    delimiter : str
    """

    def __init__(self, path, *, mean, var=None, labels=None, positives=None, trials=None,
                 chunk_rows=DEFAULT_CHUNK_ROWS, delimiter=","):
        func = "CSVChunks"
        self.path = _file_path(path, func)
        if not self.path.is_file():
            raise ValueError(f"The 'path' parameter of {func} must be an existing file. Got {str(path)!r} "
                             f"({'a folder' if self.path.is_dir() else 'not found'}).")
        self.mean, self.var, self.positives, self.trials = mean, var, positives, trials
        self.labels = _check_columns(func, mean, var, labels, positives, trials)
        self.chunk_rows = _check_chunk_rows(func, chunk_rows)
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"The 'delimiter' parameter of {func} must be one character. Got {delimiter!r}.")
        self.delimiter = delimiter
        self._index = self._header()

    def _header(self):
        with _open_text(self.path) as fh:
            try:
                header = next(csv.reader(fh, delimiter=self.delimiter))
            except StopIteration:
                raise ValueError(f"{self.path} is empty (no header row).") from None
            except UnicodeDecodeError as exc:
                raise ValueError(f"{self.path} is not UTF-8 text ({exc.reason}).") from None
            except Exception as exc:  # a .gz/.bz2/.xz name on other bytes: gzip's OSError, lzma's LZMAError
                if self.path.suffix.lower() not in _COMPRESSED:
                    raise
                raise ValueError(f"{self.path} cannot be decompressed as its name says ({exc}).") from None
        header = [h.strip() for h in header]
        dup = sorted({h for h in header if header.count(h) > 1 and h in self.columns})
        if dup:
            raise ValueError(f"{self.path}: the header names column(s) {dup} more than once; rename them.")
        missing = [c for c in self.columns if c not in header]
        if missing:
            hint = ""
            if len(header) == 1 and any(d in header[0] for d in "\t;|"):
                hint = (f"  The header is one field: the file looks separated by another character than "
                        f"{self.delimiter!r} (CSVChunks' 'delimiter'; socal reads .tsv and .tab files as "
                        f"tab-separated).")
            raise ValueError(f"{self.path}: column(s) {missing} not found; the header has {header}.{hint}")
        self._width = len(header)
        return [header.index(c) for c in self.columns]

    def _plain(self, lines):
        """Whether the fast parse may read these lines: it reads the named columns alone, by position, so every
        line must hold the header's fields (its delimiters count them), or those and one empty field after a
        trailing delimiter (as spreadsheets write).  Counted line by line: a total would let a line with a field
        too many (a delimiter inside an unquoted field, its cells shifted) hide behind one with a field too few.
        Other lines (and quoted fields holding the delimiter) take the row-by-row parse, which checks each."""
        d, fields = self.delimiter, self._width - 1
        counts = set(map(str.count, lines, itertools.repeat(d)))
        if counts == {fields}:
            return True
        return counts <= {fields, fields + 1} and all(
            ln.count(d) == fields or ln.rstrip("\r\n").endswith(d) for ln in lines)

    def _parse_slow(self, lines, first_line):
        """Row-by-row parse of a chunk: exact line numbers, empty label cells as NaN."""
        names = self.columns
        out = np.empty((len(lines), len(names)))
        label_cols = set(self.labels or ())
        for r, row in enumerate(csv.reader(lines, delimiter=self.delimiter)):
            line = first_line + r
            if len(row) <= max(self._index):
                raise ValueError(f"{self.path}, line {line}: {len(row)} field(s), but column {names[-1]!r} is field "
                                 f"{max(self._index) + 1}: a short or cut row.")
            if len(row) > self._width and any(cell.strip() for cell in row[self._width:]):
                # more fields than the header names: a delimiter inside an unquoted field (a decimal comma, a
                # comma in a text) has shifted the cells, and the named columns may hold their neighbours' values
                raise ValueError(f"{self.path}, line {line}: {len(row)} field(s), but the header has {self._width}: "
                                 f"a {self.delimiter!r} inside an unquoted field (a decimal comma, a comma in a "
                                 f"text)? The cells may have shifted; quote that field.")
            for j, (name, idx) in enumerate(zip(names, self._index)):
                cell = row[idx].strip()
                if name in label_cols and (cell == "" or cell.lower() in _BOOLEANS):
                    out[r, j] = _BOOLEANS[cell.lower()] if cell else np.nan
                    continue
                try:
                    if "_" in cell or not cell.isascii():  # Python's float reads '1_0' as 10 and fullwidth or
                        raise ValueError  # Arabic-Indic digits as numbers; the fast parse (numpy's) refuses both
                    out[r, j] = float(cell)
                except ValueError:
                    raise ValueError(f"{self.path}, line {line}, column {name!r}: {cell!r} is not a number.") from None
                if not np.isfinite(out[r, j]):
                    raise ValueError(f"{self.path}, line {line}, column {name!r}: {cell!r} is not finite.")
        return out

    def _chunks(self):
        with _open_text(self.path) as fh:
            fh.readline()
            line_no = 2
            while True:
                lines = []
                for _ in range(self.chunk_rows):
                    ln = fh.readline()
                    if not ln:
                        break
                    lines.append(ln)
                if not lines:
                    if line_no == 2:  # not one row after the header
                        raise ValueError(f"{self.path} has a header row but no data rows.")
                    return
                blank = [i for i, ln in enumerate(lines) if not ln.strip()]
                last = False
                if blank:
                    # empty lines that end the file (an editor's trailing newlines) end the data; one that data
                    # follow is a hole in it
                    if any(ln.strip() for ln in lines[blank[0]:]) or any(ln.strip() for ln in fh):
                        raise ValueError(f"{self.path}, line {line_no + blank[0]}: an empty line inside the data.")
                    lines, last = lines[:blank[0]], True
                    if not lines:
                        if line_no == 2:
                            raise ValueError(f"{self.path} has a header row but no data rows.")
                        return
                text = "".join(lines)
                try:
                    if not self._plain(lines):
                        raise ValueError("fields")
                    arr = np.loadtxt(io.StringIO(text), delimiter=self.delimiter, usecols=self._index, ndmin=2,
                                     dtype=float)
                    if not np.all(np.isfinite(arr)):
                        raise ValueError("non-finite")
                except ValueError:
                    arr = self._parse_slow(lines, line_no)
                first, line_no = line_no, line_no + len(lines)
                yield self._chunk({c: arr[:, j] for j, c in enumerate(self.columns)}, lambda r: f"line {first + r}")
                if last:
                    return


class ParquetChunks(_Reader):
    """Chunks of a Parquet file (needs pyarrow: ``pip install 'socal[parquet]'``), read batch by batch."""

    def __init__(self, path, *, mean, var=None, labels=None, positives=None, trials=None,
                 chunk_rows=DEFAULT_CHUNK_ROWS):
        func = "ParquetChunks"
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("Reading Parquet needs pyarrow: pip install 'socal[parquet]'") from None
        self.path = _file_path(path, func)
        if not self.path.is_file():
            raise ValueError(f"The 'path' parameter of {func} must be an existing file. Got {str(path)!r}.")
        self.mean, self.var, self.positives, self.trials = mean, var, positives, trials
        self.labels = _check_columns(func, mean, var, labels, positives, trials)
        self.chunk_rows = _check_chunk_rows(func, chunk_rows)
        try:
            self._file = pq.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises its own ArrowInvalid for a file that is not Parquet
            raise ValueError(f"{self.path} is not a readable Parquet file ({exc}).") from None
        schema = self._file.schema_arrow
        names = schema.names
        missing = [c for c in self.columns if c not in names]
        if missing:
            raise ValueError(f"{self.path}: column(s) {missing} not found; the file has {names}.")
        import pyarrow as pa

        for c in self.columns:  # a typed file says what a column holds: text is refused, as in memory
            kind = schema.field(c).type
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)
                    or pa.types.is_decimal(kind) or pa.types.is_null(kind)):
                raise ValueError(f"{self.path}: column {c!r} holds {kind}, not numbers (convert it to a numeric "
                                 f"type when writing the file).")
        if self._file.metadata.num_rows == 0:
            raise ValueError(f"{self.path} has no rows.")

    @property
    def n_chunks(self):
        return -(-self._file.metadata.num_rows // self.chunk_rows)

    def _chunks(self):
        start = 0
        for batch in self._file.iter_batches(batch_size=self.chunk_rows, columns=self.columns):
            cols = {}
            for c in self.columns:
                col = batch.column(c)
                arr = col.to_numpy(zero_copy_only=False).astype(float)
                if c in (self.labels or ()):
                    arr = np.where(np.asarray(col.is_null()), np.nan, arr)
                elif col.null_count:
                    raise ValueError(f"{self.path}: column {c!r} has {col.null_count} missing value(s).")
                cols[c] = arr
            first, start = start, start + batch.num_rows
            yield self._chunk(cols, lambda r: f"row {first + r + 1}")


def read_chunks(path: str | os.PathLike, **kw: Any) -> CSVChunks | ParquetChunks:
    """A reader for ``path`` by its suffix: ``.parquet``/``.pq`` -> :class:`ParquetChunks`, else :class:`CSVChunks`
    (tab-separated for ``.tsv``/``.tab`` unless ``delimiter`` is given)."""
    path = _file_path(path, "read_chunks")
    fmt, _ = table_format(path)
    if fmt == "parquet":
        kw.pop("delimiter", None)
        return ParquetChunks(path, **kw)
    if fmt == "tsv":
        kw.setdefault("delimiter", "\t")
    return CSVChunks(path, **kw)


def write_table(path: str | os.PathLike, columns: dict[str, Any]) -> None:
    """Write named columns to ``path`` in the format :func:`read_chunks` reads from that name: Parquet for
    .parquet/.pq (needs pyarrow), tab-separated for .tsv/.tab, else comma-separated with a header row; a .gz, .bz2
    or .xz ending compresses the text.  So a file socal writes is read back by socal as the same columns, whatever
    its name.  Integer columns stay integers.  The file is written atomically (:func:`socal.files.atomic_write`):
    a process killed mid-write leaves the previous file at ``path``, never a torn one."""
    path = _file_path(path, "write_table", reading=False)
    fmt, packed = table_format(path)
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("Writing Parquet needs pyarrow: pip install 'socal[parquet]' (or write a .csv file)") \
                from None
        if packed is not None:
            raise ValueError(f"{path}: a Parquet file is compressed inside; drop the {path.suffix} ending.")
        with atomic_write(path, "wb") as raw:
            pq.write_table(pa.table({k: np.asarray(v) for k, v in columns.items()}), raw)
        return
    with atomic_write(path, "wb") as raw:
        if packed is None:
            fh = io.TextIOWrapper(raw, newline="", encoding="utf-8", write_through=True)
        else:
            import importlib

            fh = importlib.import_module(packed).open(raw, "wt", newline="", encoding="utf-8")
        w = csv.writer(fh, delimiter="\t" if fmt == "tsv" else ",")
        w.writerow(list(columns))
        w.writerows(zip(*(np.asarray(v).tolist() for v in columns.values())))
        fh.flush()
        if packed is not None:
            fh.close()  # writes the compressed stream's end; the raw file stays open (it was passed in)
        else:
            fh.detach()  # the raw file is atomic_write's to close


def read_all(chunks: Any) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, tuple | None]:
    """Every chunk of a reader (or a list of chunk mappings) in memory: (mean, var, labels, counts).

    ``labels`` when every chunk has label columns of one width (``counts`` is then None); otherwise ``counts`` =
    (positives, trials), label columns counted row by row (rows with missing votes come as counts from the reader).
    """
    parts = list(chunks.chunks()) if hasattr(chunks, "chunks") else list(chunks)
    if not parts:
        raise ValueError("No data rows: the source gave no chunks.")
    mean = np.concatenate([c["mean"] for c in parts])
    var = None if parts[0].get("var") is None else np.concatenate([c["var"] for c in parts])
    if all("labels" in c for c in parts) and len({c["labels"].shape[1] for c in parts}) == 1:
        return mean, var, np.concatenate([c["labels"] for c in parts]), None
    cs = [c["counts"] if "counts" in c else labels_to_counts(np.asarray(c["labels"], dtype=float)) for c in parts]
    return mean, var, None, (np.concatenate([a for a, _ in cs]), np.concatenate([k for _, k in cs]))


def read_columns(path: str | os.PathLike, names: list[str]) -> dict[str, np.ndarray]:
    """The named columns of a table, whole, as float arrays (an empty CSV cell is NaN): CSV/TSV (compressed
    too), Parquet, or .npz (its arrays by name).  For inputs that are read in one piece, as the multiclass
    evaluation is; a missing column is a ValueError naming it and the columns there are."""
    path = _file_path(path, "read_columns")
    if path.suffix.lower() == ".npz":
        with np.load(path, allow_pickle=False) as z:
            have = list(z.files)
            missing = [c for c in names if c not in have]
            if missing:
                raise ValueError(f"{path}: no array named {missing[0]!r}; the file has {have}.")
            return {c: np.asarray(z[c], dtype=float) for c in names}
    fmt, _ = table_format(path)
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("Reading Parquet needs pyarrow: pip install 'socal[parquet]'") from None
        table = pq.read_table(path)
        missing = [c for c in names if c not in table.column_names]
        if missing:
            raise ValueError(f"{path}: no column {missing[0]!r}; the columns are {table.column_names}.")
        return {c: np.asarray(table.column(c).to_numpy(zero_copy_only=False), dtype=float) for c in names}
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t" if fmt == "tsv" else ",")
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path} is empty (no header row).")
        header = [h.strip() for h in header]
        missing = [c for c in names if c not in header]
        if missing:
            raise ValueError(f"{path}: no column {missing[0]!r}; the columns are {header}.")
        idx = [header.index(c) for c in names]
        rows = [[r[i].strip() if i < len(r) else "" for i in idx] for r in reader if r]
    out = {}
    for j, c in enumerate(names):
        col = [row[j] for row in rows]
        try:
            out[c] = np.array([float(x) if x != "" else np.nan for x in col])
        except ValueError:
            bad = next(x for x in col if x != "" and not _is_float(x))
            raise ValueError(f"{path}: column {c!r} holds {bad!r}, not a number.") from None
    return out


def _is_float(x):
    try:
        float(x)
    except ValueError:
        return False
    return True


def column_names(path: str | os.PathLike) -> list[str]:
    """The column names of a CSV/TSV or Parquet file's header, or an .npz file's array names."""
    path = _file_path(path, "column_names")
    if path.suffix.lower() == ".npz":
        with np.load(path, allow_pickle=False) as z:
            return list(z.files)
    fmt, _ = table_format(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    with _open_text(path) as fh:
        header = next(csv.reader(fh, delimiter="\t" if fmt == "tsv" else ","), None)
    return [h.strip() for h in header or []]


class EnoughLabels:
    """A reader's chunks without the rows of fewer than ``least`` labels (missing votes: empty label cells), so
    that 'estimate' streams what 'evaluate' keeps in memory; every pass leaves out the same rows, and counts them
    (``dropped``, ``rows``, the data rows of the first few in ``first``)."""

    def __init__(self, reader, least, name, why="missing votes"):
        self.reader, self.least, self.name, self.why = reader, least, name, why
        self.dropped = self.rows = 0
        self.first = []

    def chunks(self):
        """The reader's chunks, each without its rows of fewer than ``least`` labels (counted as it goes)."""
        self.dropped = self.rows = 0
        self.first = []
        for chunk in self.reader.chunks():
            start, self.rows = self.rows, self.rows + len(chunk["mean"])
            if chunk.get("counts") is None:
                k = np.shape(chunk["labels"])[1]
                if k < self.least:
                    raise ValueError(f"every row of {self.name} has fewer than {self.least} labels (--min-labels): "
                                     f"it has {k} label columns")
                yield chunk
                continue
            few = chunk["counts"][1] < self.least
            if few.any():
                rows = np.flatnonzero(few)
                self.dropped += rows.size
                self.first += [start + int(r) + 1 for r in rows[: max(0, 5 - len(self.first))]]
                keep = ~few
                if not keep.any():
                    continue
                chunk = {key: (None if val is None else tuple(x[keep] for x in val) if key == "counts" else val[keep])
                         for key, val in chunk.items()}
            yield chunk
        if self.rows and self.dropped == self.rows:
            raise ValueError(f"every row of {self.name} has fewer than {self.least} labels (--min-labels)")

    def note(self):
        """The sentence that reports the rows left out (how many, of how many, the first few data rows)."""
        first = ", ".join(map(str, self.first)) + (", ..." if self.dropped > len(self.first) else "")
        return (f"left out {self.dropped} of {self.rows} rows with fewer than {self.least} labels ({self.why}; "
                f"data rows {first}); --min-labels sets the threshold (at least 2)")
