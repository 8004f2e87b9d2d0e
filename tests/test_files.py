"""socal.files: every file socal writes holds its old or its new content, whatever moment the writer dies (issue 63).

The kill test runs a process that saves one kind of file to one path in a loop (tests/_kill_writers.py), kills it
with SIGKILL at a random moment after its first save, and loads the file.  The negative controls write the same
content through a plain truncating open(): they must leave a torn file at least once, or the test could not fail.
The default suite kills each writer 3 times (the controls 6); ``-m slow`` 12 times, as the issue measured.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

import socal
from socal.files import atomic_write, write_text_atomic

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "_kill_writers.py"
pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX-only")


def _load(writer, path):
    """Read the file back as its socal reader does; True when it reads whole."""
    try:
        if writer.endswith("stats"):
            socal.SufficientStats.load(path)
        elif writer.endswith("platt"):
            socal.SecondOrderPlatt.load(path)
        elif writer == "table":
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            assert lines[0] == "mean,y" and len(lines) == 200_001 and lines[-1].endswith(",1")
        elif writer == "figure":
            data = pathlib.Path(path).read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[-12:-4] == b"\x00\x00\x00\x00IEND"
        else:
            assert json.loads(pathlib.Path(path).read_text())["version"] in (0, 1)
        return True
    except (ValueError, AssertionError, OSError, IndexError):
        return False


def kill_count(writer, path, kills, rng):
    """How many of ``kills`` SIGKILLs at random moments left ``path`` unreadable."""
    bad = 0
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for _ in range(kills):
        proc = subprocess.Popen([sys.executable, str(SCRIPT), writer, str(path)], stdout=subprocess.PIPE, env=env)
        try:
            assert proc.stdout.readline().strip() == b"ready", f"{writer}: the writer did not start"
            # a random moment within a few saves (the slowest, the figure, takes about 0.2 s)
            try:
                proc.wait(timeout=float(rng.uniform(0.0, 0.3)))
            except subprocess.TimeoutExpired:
                pass
            assert proc.poll() is None, f"{writer}: the writer exited by itself"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
        bad += not _load(writer, path)
    return bad


WRITERS = ["stats", "platt", "table", "json", "figure"]


KILLS = [3, pytest.param(12, marks=pytest.mark.slow, id="12-kills")]  # 12: the count, under -m slow


@pytest.mark.parametrize("kills", KILLS)
@pytest.mark.parametrize("writer", WRITERS)
def test_a_kill_mid_save_leaves_a_file_that_loads(writer, tmp_path, kills):
    """SufficientStats.save, SecondOrderPlatt.save, io.write_table (the CLI's --out), the figure (--plot) and
    write_text_atomic (the audit's --json and --markdown, the experiments' JSON) survive SIGKILL at any moment."""
    if writer == "figure":
        pytest.importorskip("matplotlib", reason="the figure writer needs matplotlib")
    path = tmp_path / {"stats": "s.npz", "platt": "p.json", "table": "t.csv", "json": "a.json",
                       "figure": "f.png"}[writer]
    bad = kill_count(writer, path, kills, np.random.default_rng(list(writer.encode())))
    print(f"{writer}: {bad} of {kills} kills left an unreadable file")
    assert bad == 0
    leftovers = [p for p in tmp_path.iterdir() if p != path]
    assert len(leftovers) <= kills and all(p.name.startswith("." + path.name + ".") for p in leftovers)


@pytest.mark.parametrize("kills", [6, pytest.param(12, marks=pytest.mark.slow, id="12-kills")])
@pytest.mark.parametrize("writer", ["plain-stats", "plain-json"])
def test_negative_control_a_truncating_write_is_torn_by_the_same_kills(writer, tmp_path, kills):
    """The same content and the same kills through open(path, "w"): the file is torn at least once.  Were it not,
    the test above could not tell an atomic writer from a plain one."""
    path = tmp_path / ("s.npz" if writer == "plain-stats" else "a.json")
    bad = kill_count(writer, path, kills, np.random.default_rng(list(writer.encode())))
    print(f"{writer}: {bad} of {kills} kills left an unreadable file")
    assert bad >= 1


def test_an_exception_inside_the_block_leaves_the_target_and_no_temporary(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(path, "w") as fh:
            fh.write("new, half")
            raise RuntimeError("the writer failed")
    assert path.read_text() == "old" and sorted(tmp_path.iterdir()) == [path]


def test_the_target_keeps_its_permissions_and_a_new_file_gets_the_umasks(tmp_path):
    old = tmp_path / "old.json"
    old.write_text("{}")
    os.chmod(old, 0o640)
    write_text_atomic(old, "{}")
    assert (old.stat().st_mode & 0o777) == 0o640
    mask = os.umask(0o022)
    try:
        new = tmp_path / "new.json"
        write_text_atomic(new, "{}")
        assert (new.stat().st_mode & 0o777) == 0o644  # as open(new, "w") would give, not mkstemp's 0o600
    finally:
        os.umask(mask)


def test_atomic_write_refuses_a_mode_that_is_not_a_write():
    with pytest.raises(ValueError, match="'mode' parameter of atomic_write"):
        with atomic_write("x", "a"):
            pass


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.csv.gz", "t.tsv.bz2", "t.csv.xz"])
def test_write_table_still_writes_what_read_chunks_reads(tmp_path, name):
    from socal.io import read_all, read_chunks, write_table

    m = np.linspace(0.1, 0.9, 50)
    write_table(tmp_path / name, {"mean": m, "var": m * (1 - m) / 4, "y1": np.arange(50) % 2, "y2": np.ones(50)})
    got = read_all(read_chunks(tmp_path / name, mean="mean", var="var", labels=["y1", "y2"]))
    assert np.array_equal(got[0], m) and np.array_equal(got[2][:, 0], np.arange(50) % 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
