"""socal.io on files as people write them: malformed, compressed, shifted or mislabelled rows are named with their line;
nothing is read silently wrong."""

import os

import numpy as np
import pytest

import socal


def _csv(path, rows, header="mean,var,y1,y2", end="\n"):
    path.write_text(header + "\n" + "\n".join(rows) + end)
    return path


def _read(path, **kw):
    from socal.io import read_all, read_chunks

    return read_all(read_chunks(path, mean="mean", var="var", labels=["y1", "y2"], chunk_rows=1000, **kw))


def test_csv_files_as_people_write_them(tmp_path):
    """Trailing empty lines (an editor's) were "an empty line inside the data"; a header without rows reached the
    estimator as "the source gave no chunks"; a tab-separated .tsv was one column; a label 2 was named by chunk, not
    line.  Each is now read, or refused with the line."""
    rng = np.random.default_rng(0)
    m = rng.uniform(0.1, 0.9, 2500)
    rows = [f"{a},{a * (1 - a) / 4},{int(a > 0.5)},{int(a > 0.3)}" for a in m]
    plain = _read(_csv(tmp_path / "a.csv", rows))
    for end in ("\n\n\n", "\n \n", "\r\n\r\n"):  # empty lines that end the file end the data
        got = _read(_csv(tmp_path / "b.csv", rows, end=end))
        assert np.array_equal(got[0], plain[0]) and np.array_equal(got[2], plain[2])
    got = _read(_csv(tmp_path / "c.csv", rows[:1000], end="\n\n"))  # the empty lines at a chunk's boundary
    assert got[0].size == 1000
    with pytest.raises(ValueError, match="line 1002: an empty line inside the data"):
        _read(_csv(tmp_path / "d.csv", rows[:1000] + [""] + rows[1000:]))  # a hole in the next chunk's start
    with pytest.raises(ValueError, match="line 4: an empty line inside the data"):
        _read(_csv(tmp_path / "e.csv", rows[:2] + ["", ""] + rows[2:3]))
    for empty in ("", "\n\n"):
        with pytest.raises(ValueError, match="has a header row but no data rows"):
            _read(_csv(tmp_path / "f.csv", [], end=empty))
    tsv = tmp_path / "g.tsv"
    _csv(tsv, [r.replace(",", "\t") for r in rows], header="mean\tvar\ty1\ty2")
    assert np.array_equal(_read(tsv)[0], plain[0])
    semi = _csv(tmp_path / "h.csv", [r.replace(",", ";") for r in rows], header="mean;var;y1;y2")
    with pytest.raises(ValueError, match="separated by another character than ','"):
        _read(semi)
    assert np.array_equal(_read(semi, delimiter=";")[0], plain[0])
    bad = rows.copy()
    bad[1800] = "0.5,0.01,2,0"
    with pytest.raises(ValueError, match=r"line 1802, column 'y1': 2 is not a 0/1 label"):
        _read(_csv(tmp_path / "i.csv", bad))


def test_count_columns_are_checked_with_their_line(tmp_path):
    from socal.io import read_all, read_chunks

    rows = [f"0.{i % 9 + 1},0.01,{i % 3},3" for i in range(2500)]
    for r, bad, match in ((2100, "0.5,0.01,1.5,3", r"line 2102, column 'a': 1.5 is not a count of positive labels"),
                          (1500, "0.5,0.01,5,3", r"line 1502: 5 positives \('a'\) out of 3 labels \('k'\)"),
                          (10, "0.5,0.01,0,0", r"line 12, column 'k': 0 is not a count of labels")):
        text = rows.copy()
        text[r] = bad
        path = _csv(tmp_path / f"c{r}.csv", text, header="m,v,a,k")
        with pytest.raises(ValueError, match=match):
            read_all(read_chunks(path, mean="m", var="v", positives="a", trials="k", chunk_rows=1000))
    good = read_all(read_chunks(_csv(tmp_path / "ok.csv", rows, header="m,v,a,k"), mean="m", var="v",
                                positives="a", trials="k", chunk_rows=1000))
    assert good[3][0].sum() == sum(i % 3 for i in range(2500))


def test_a_parquet_column_of_text_or_a_file_without_rows_is_named(tmp_path):
    """Parquet is typed: a column of strings was parsed as numbers (as pandas text was), and a file without rows
    reached the estimator as "the source gave no chunks"."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from socal.io import read_all, read_chunks

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"m": rng.uniform(0.1, 0.9, 300), "v": 0.01, "y1": rng.integers(0, 2, 300),
                      "y2": rng.integers(0, 2, 300)})

    def read(frame, name):
        frame.to_parquet(tmp_path / name)
        return read_all(read_chunks(tmp_path / name, mean="m", var="v", labels=["y1", "y2"]))

    with pytest.raises(ValueError, match="column 'm' holds (large_)?string, not numbers"):
        read(d.assign(m=d.m.astype(str)), "a.parquet")
    with pytest.raises(ValueError, match="column 'y1' holds (large_)?string, not numbers"):
        read(d.assign(y1=d.y1.astype(str)), "b.parquet")
    with pytest.raises(ValueError, match="c.parquet has no rows"):
        read(d.iloc[:0], "c.parquet")
    plain = read(d, "d.parquet")  # the control, and numbers in a bool or categorical column read as numbers
    for frame in (d.assign(y1=d.y1.astype(bool)), d.assign(y1=d.y1.astype("category"))):
        assert np.array_equal(read(frame, "e.parquet")[2], plain[2])


def test_one_column_in_two_roles_is_refused(tmp_path):
    """--positives pos --trials pos read every item as all-positive and the evaluation ran; a column given as the
    mean and as a label (or as the mean and the variance) is refused alike."""
    from socal.io import read_chunks

    path = tmp_path / "c.csv"
    path.write_text("m,v,pos,tri\n" + "0.5,0.1,1,2\n" * 20)
    for kw, roles in ((dict(positives="pos", trials="pos"), "'positives' and 'trials'"),
                      (dict(var="m", positives="pos", trials="tri"), "'mean' and 'var'"),
                      (dict(positives="m", trials="tri"), "'mean' and 'positives'")):
        with pytest.raises(ValueError, match=f"reads column '.*' as both {roles}; every role needs its own column"):
            read_chunks(path, **{"mean": "m", "var": "v", **kw})
    with pytest.raises(ValueError, match="reads column 'y1' as both 'mean' and 'labels'"):
        read_chunks(path, mean="y1", var="v", labels=["y1", "y2"])
    assert read_chunks(path, mean="m", var="v", positives="pos", trials="tri") is not None  # the control


@pytest.mark.parametrize("ext", [".gz", ".bz2", ".xz"])
def test_compressed_csv_files_are_read_as_the_text_inside(tmp_path, ext):
    """demo.csv.gz was refused as "not UTF-8 text (invalid start byte)"; a compressed CSV (or TSV) is now read
    through its decompressor, the same numbers as the plain file, and a misnamed or cut file is a ValueError
    naming it.  A path of another type than str, bytes or os.PathLike is a TypeError naming 'path' (an int gave
    pathlib's message)."""
    import bz2
    import gzip
    import lzma

    from socal import io

    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[ext]
    m, v, y = socal.synthetic.toy_population().sample(300, h=1 / 16, rng=0)
    text = "m,v,y1,y2\n" + "".join(f"{float(a)!r},{float(b)!r},{c},{d}\n"
                                     for a, b, c, d in zip(m, v, y[:, 0], y[:, 1]))
    plain = tmp_path / "s.csv"
    plain.write_text(text)
    (tmp_path / f"s.csv{ext}").write_bytes(compress(text.encode()))
    (tmp_path / f"s.tsv{ext}").write_bytes(compress(text.replace(",", "\t").encode()))
    kw = dict(mean="m", var="v", labels=["y1", "y2"])
    ref = io.read_all(io.read_chunks(plain, **kw))
    for name in (f"s.csv{ext}", f"s.tsv{ext}"):
        got = io.read_all(io.read_chunks(tmp_path / name, **kw))
        assert all(np.array_equal(a, b) for a, b in zip(got[:3], ref[:3]))
    (tmp_path / f"bad.csv{ext}").write_bytes(b"m,v,y1,y2\n0.5,0.1,1,0\n")
    with pytest.raises(ValueError, match="cannot be decompressed"):
        io.read_chunks(tmp_path / f"bad.csv{ext}", **kw)
    whole = compress((text * 20).encode())
    (tmp_path / f"cut.csv{ext}").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="cut.csv"):
        io.read_all(io.read_chunks(tmp_path / f"cut.csv{ext}", **kw))
    with pytest.raises(TypeError, match="'path' parameter of read_chunks must be a file path"):
        io.read_chunks(3, **kw)
    assert io.read_chunks(os.fsencode(plain), **kw).path == plain


def test_a_reader_row_left_with_one_vote_is_explained_as_missing_votes(small, tmp_path):
    """ce2(chunks=read_chunks(csv_with_an_empty_cell)) said only "'counts[1] (trials)' ... must be in [2, ...]": the
    reader had turned the label columns into counts.  The message now says where the counts came from and what to
    do; counts a caller passes keep the plain message."""
    from socal import io

    m, v, y = small
    rows = [f"{float(a)!r},{float(b)!r},{c},{d}" for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])]
    rows[4] = rows[4].rsplit(",", 1)[0] + ","
    path = tmp_path / "votes.csv"
    path.write_text("m,v,y1,y2\n" + "\n".join(rows) + "\n")
    reader = io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"])
    with pytest.raises(ValueError, match="read from label columns with empty cells \\(missing votes\\)"):
        socal.ce2(chunks=reader, debias=False)
    with pytest.raises(ValueError) as exc:
        socal.ce2(m, v, counts=(y.sum(axis=1), np.r_[1, np.full(len(m) - 1, 2)]), debias=False)
    assert "missing votes" not in str(exc.value)


def test_csv_label_cells_true_and_false_read_as_one_and_zero(small, tmp_path):
    """pandas writes boolean label columns as True/False; the CSV reader refused them ("'True' is not a number")
    while the same data as Parquet were read.  Only label columns take them; other words stay refused."""
    from socal import io

    m, v, y = small
    words = {0: ["False", "false", "FALSE"], 1: ["True", "true", "TRUE"]}
    plain, boolean = tmp_path / "plain.csv", tmp_path / "bool.csv"
    rows = [(f"{float(a)!r},{float(b)!r}", int(c), int(d)) for a, b, c, d in zip(m, v, y[:, 0], y[:, 1])]
    plain.write_text("m,v,y1,y2\n" + "\n".join(f"{s},{c},{d}" for s, c, d in rows) + "\n")
    boolean.write_text("m,v,y1,y2\n" + "\n".join(f"{s},{words[c][i % 3]},{words[d][(i + 1) % 3]}"
                                                 for i, (s, c, d) in enumerate(rows)) + "\n")
    kw = dict(mean="m", var="v", labels=["y1", "y2"])
    a, b = io.read_all(io.read_chunks(plain, **kw)), io.read_all(io.read_chunks(boolean, **kw))
    assert np.array_equal(a[2], b[2]) and np.array_equal(a[0], b[0])
    other = tmp_path / "yes.csv"
    other.write_text("m,v,y1,y2\n0.5,0.1,yes,no\n")
    with pytest.raises(ValueError, match="'yes' is not a number"):
        io.read_all(io.read_chunks(other, **kw))
    mean_word = tmp_path / "meanword.csv"
    mean_word.write_text("m,v,y1,y2\nTrue,0.1,1,0\n")
    with pytest.raises(ValueError, match="column 'm': 'True' is not a number"):
        io.read_all(io.read_chunks(mean_word, **kw))


@pytest.mark.parametrize("row,fine", [
    ("0,5,0,1,1,0", False),  # decimal commas: m read as 0, v as 5, the labels as 0, 1 (the old reading)
    ("0.5,0.1,1,0,a note, with a comma", False),  # an unquoted comma in a text column after the named ones
    ("0.5,0.1,1,0,", True),  # a trailing delimiter (as spreadsheets write): the extra field is empty
    ('0.5,0.1,1,0,"a note, quoted"', True),
])
def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path, row, fine):
    """A row with more fields than the header was read by position without a word: a comma inside an unquoted field
    (a decimal comma, a text) shifts the cells, and the named columns then hold their neighbours' values (pandas
    refuses such rows: "Expected 5 fields, saw 6").  Empty extra fields (trailing delimiters) stay accepted."""
    path = tmp_path / "s.csv"
    path.write_text("m,v,y1,y2,note\n0.4,0.05,0,0,ok\n" + row + "\n")
    reader = socal.io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"])
    if fine:
        m, v, y, _ = socal.io.read_all(reader)
        assert m.tolist() == [0.4, 0.5] and v.tolist() == [0.05, 0.1] and y.tolist() == [[0, 0], [1, 0]]
    else:
        with pytest.raises(ValueError, match=r"s\.csv, line 3: 6 field\(s\), but the header has 5: a ',' inside an "
                                             r"unquoted field"):
            socal.io.read_all(reader)


def test_a_shifted_row_cannot_hide_behind_a_short_one(tmp_path):
    """The fast CSV parse was taken when the file's delimiters totalled the header's fields on every line, so a row
    with a decimal comma (a field too many, its cells shifted) next to a row without its last, unnamed field read
    m = 0, v = 4 in silence.  Lines are now counted one by one; the shifted one is refused by its line number."""
    path = tmp_path / "s.csv"
    path.write_text("m,v,y1,y2,note\n0,4,0.05,0,0,ok\n0.5,0.1,1,0\n")
    with pytest.raises(ValueError, match=r"s\.csv, line 2: 6 field\(s\), but the header has 5"):
        socal.io.read_all(socal.io.read_chunks(path, mean="m", var="v", labels=["y1", "y2"]))


def test_a_trailing_delimiter_on_every_line_takes_the_fast_parse(tmp_path, monkeypatch):
    """A file whose every line ends with the delimiter (a spreadsheet export) was parsed row by row: 5.3 s against
    1.2 s for 200,000 rows.  The empty last field is now allowed in the fast parse; the arrays are those of the
    same file without it."""
    rows = ["0.4,0.05,0,1", "0.5,0.1,1,0", "0.25,0.0,1,1"]
    plain, trailing = tmp_path / "p.csv", tmp_path / "t.csv"
    plain.write_text("\n".join(["m,v,y1,y2"] + rows) + "\n")
    trailing.write_text("\n".join(["m,v,y1,y2"] + [r + "," for r in rows]) + "\n")

    def slow(*args):
        raise AssertionError("the row-by-row parse was taken")

    want = socal.io.read_all(socal.io.read_chunks(plain, mean="m", var="v", labels=["y1", "y2"]))
    monkeypatch.setattr(socal.io.CSVChunks, "_parse_slow", slow)
    got = socal.io.read_all(socal.io.read_chunks(trailing, mean="m", var="v", labels=["y1", "y2"]))
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(a, b)
