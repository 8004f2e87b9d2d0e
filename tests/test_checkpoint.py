"""socal.checkpoint: streamed runs that resume after a failure or a kill with bit-identical numbers (issue 63)."""

import os
import pathlib
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import socal
from socal import Checkpoint

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data():
    m, v, y = socal.synthetic.toy_population().sample(6000, h=1 / 16, rng=0)
    return m, v, y


def chunks_of(m, v, y, rows=1000):
    return [{"mean": m[i:i + rows], "var": v[i:i + rows], "labels": y[i:i + rows]} for i in range(0, len(m), rows)]


class Failing:
    """A chunk source that raises on its ``at``-th chunk read overall (counting every pass), as a broken reader or a
    lost connection would; ``at=None`` never fails."""

    def __init__(self, chunks, at):
        self.parts, self.at, self.read = chunks, at, 0

    def __call__(self):
        for c in self.parts:
            if self.at is not None and self.read == self.at:
                raise ConnectionError("the source went away")
            self.read += 1
            yield c


KW = dict(h=1 / 16, ci=0.9, n_boot=40, rng=3)


@pytest.mark.parametrize("at", [2, 9, 23])
def test_a_ce2_that_fails_at_chunk_j_resumes_to_the_uninterrupted_numbers(data, tmp_path, at):
    """The source raises at its at-th chunk (in the statistics pass, the first deviations pass or a bootstrap pass):
    the error keeps its type and gets a note naming the chunk and the rows read; the checkpoint left behind is
    valid, and a rerun with it gives the numbers of a run that never failed, to the bit, and of a run with no
    checkpoint at all."""
    parts = chunks_of(*data)
    plain = socal.ce2(chunks=parts, **KW).to_dict()
    path = tmp_path / "ce2.ckpt"
    with pytest.raises(ConnectionError) as err:
        socal.ce2(chunks=Failing(parts, at), checkpoint=path, **KW)
    note = " ".join(err.value.__notes__)
    chunk = at % len(parts)
    assert f"ce2 stopped at chunk {chunk} of its source ({chunk * 1000:,} rows read in this pass" in note
    assert str(path) in note
    with open(path, "rb") as fh:
        assert pickle.load(fh)["format"] == "socal.checkpoint"
    cp = Checkpoint(path)
    resumed = socal.ce2(chunks=parts, checkpoint=cp, **KW).to_dict()
    assert resumed == plain
    assert cp.resumed_chunks == at % len(parts)  # the chunks of the pass in progress, not computed again
    again = Checkpoint(path)
    assert socal.ce2(chunks=parts, checkpoint=again, **KW).to_dict() == plain and again.resumed_chunks == 0


def test_every_pass_saved_and_a_finished_run_returns_without_computing(data, tmp_path, monkeypatch):
    parts = chunks_of(*data)
    path = tmp_path / "ce1.ckpt"
    first = socal.ce1(chunks=parts, checkpoint=path, **KW).to_dict()
    with open(path, "rb") as fh:
        state = pickle.load(fh)
    assert len(state["passes"]) >= 4 and all(p["done"] and len(p["hashes"]) == 6 for p in state["passes"])
    from socal import sources

    monkeypatch.setattr(sources, "_run", lambda *a: pytest.fail("a finished pass was computed again"))
    assert socal.ce1(chunks=parts, checkpoint=path, **KW).to_dict() == first


def test_the_calibration_test_resumes_bit_identically(data, tmp_path):
    m, v, _, y = socal.synthetic.toy_population().sample_raw(6000, rng=0)
    parts = chunks_of(m, v, y)
    plain = socal.calibration_test(chunks=parts)
    path = tmp_path / "t.ckpt"
    with pytest.raises(ConnectionError):
        socal.calibration_test(chunks=Failing(parts, 4)(), checkpoint=Checkpoint(path, every=2))
    cp = Checkpoint(path, every=2)
    res = socal.calibration_test(chunks=parts, checkpoint=cp)
    assert res.to_dict() == plain.to_dict() and cp.resumed_chunks == 4


def test_a_checkpoint_from_other_settings_or_other_data_is_refused_naming_what_differs(data, tmp_path):
    m, v, y = data
    parts = chunks_of(m, v, y)
    path = tmp_path / "c.ckpt"
    socal.ce2(chunks=parts, checkpoint=path, **KW)
    with pytest.raises(ValueError, match=r"other settings \(h: 0.0625 in the checkpoint, 0.03125 now\)"):
        socal.ce2(chunks=parts, checkpoint=path, **{**KW, "h": 1 / 32})
    with pytest.raises(ValueError, match=r"n_boot: 40 in the checkpoint, 60 now; rng: 3 in the checkpoint, 4 now"):
        socal.ce2(chunks=parts, checkpoint=path, **{**KW, "n_boot": 60, "rng": 4})
    flipped = y.copy()
    flipped[4321, 0] = 1 - flipped[4321, 0]
    with pytest.raises(ValueError, match="chunk 4 of ce2's source does not hash"):
        socal.ce2(chunks=chunks_of(m, v, flipped), checkpoint=path, **KW)
    with pytest.raises(ValueError, match="gave 5 chunks, the checkpoint recorded 6"):
        socal.ce2(chunks=parts[:5], checkpoint=path, **KW)
    with pytest.raises(ValueError, match="from other settings .*func: 'ce2' in the checkpoint, 'ce1' now"):
        socal.ce1(chunks=parts, checkpoint=path, **KW)
    (tmp_path / "junk").write_text("not a checkpoint")
    with pytest.raises(ValueError, match="cannot be read as a socal checkpoint"):
        socal.ce2(chunks=parts, checkpoint=tmp_path / "junk", **KW)


def test_checkpoint_refusals(data, tmp_path):
    m, v, y = data
    with pytest.raises(ValueError, match="'checkpoint' parameter of ce2 must be a path or a socal.Checkpoint"):
        socal.ce2(m, v, y, checkpoint=3)
    with pytest.raises(ValueError, match="'every' parameter of Checkpoint"):
        Checkpoint(tmp_path / "x", every=0)
    dask = pytest.importorskip("dask.array", reason="the dask refusal needs dask")
    with pytest.raises(ValueError, match="a dask run recomputes the partitions"):
        socal.ce2(dask.from_array(m, chunks=2000), dask.from_array(v, chunks=2000),
                  dask.from_array(y, chunks=(2000, 2)), checkpoint=tmp_path / "d.ckpt")


def test_evaluate_over_arrays_resumes_and_matches_its_uninterrupted_self(data, tmp_path, monkeypatch):
    """evaluate's test, CE2 and CE1 share one checkpoint; a failure inside CE1 (its third pass) resumes to the same
    Evaluation.  The rows are split into Checkpoint.rows; the numbers equal evaluate's without a checkpoint to
    round-off (another chunking) and the uninterrupted checkpointed run's to the bit."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(6000, rng=1)
    kw = dict(h=1 / 16, n_boot=40, rng=5)
    whole = socal.evaluate(m, v, y, **kw)
    ref = socal.evaluate(m, v, y, checkpoint=Checkpoint(tmp_path / "ref.ckpt", rows=1500), **kw)
    assert ref.ce2.estimate == pytest.approx(whole.ce2.estimate, abs=1e-12)
    from socal import sources

    real, calls = sources._run, []

    def dies(fn, bar, index, chunk):
        calls.append(type(fn).__name__)
        if len(calls) == 50:
            raise MemoryError("the worker ran out of memory")
        return real(fn, bar, index, chunk)

    monkeypatch.setattr(sources, "_run", dies)
    with pytest.raises(MemoryError):
        socal.evaluate(m, v, y, checkpoint=Checkpoint(tmp_path / "run.ckpt", rows=1500), **kw)
    monkeypatch.setattr(sources, "_run", real)
    cp = Checkpoint(tmp_path / "run.ckpt", rows=1500)
    again = socal.evaluate(m, v, y, checkpoint=cp, **kw)
    assert again.to_dict() == ref.to_dict() and np.array_equal(again.mean, ref.mean)
    assert str(again) == str(ref)


def _evaluate_cli(csv, ckpt):
    return [sys.executable, "-m", "socal", "evaluate", str(csv), "--mean", "mean", "--var", "var", "--labels",
            "y1,y2", "--chunk-rows", "2000", "--n-boot", "60", "--checkpoint", str(ckpt), "--no-progress"]


@pytest.mark.parametrize("kills", [1, pytest.param(4, marks=pytest.mark.slow, id="4-kills")])
def test_socal_evaluate_killed_and_rerun_prints_what_an_uninterrupted_run_prints(tmp_path, kills):
    """SIGKILL at a random point of the run (once its checkpoint holds a random number of its passes, fewer than
    all), then the same command: the same output, to the character, as a run that was never killed.  The test
    proves that the kill landed mid-run: the process was still running and the file it left holds fewer passes
    than a finished run's."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    csv = tmp_path / "demo.csv"
    subprocess.run([sys.executable, "-m", "socal", "demo", "--n", "12000", "--write", str(csv)], check=True,
                   env=env, capture_output=True)
    ref = subprocess.run(_evaluate_cli(csv, tmp_path / "ref.ckpt"), check=True, env=env, capture_output=True,
                         text=True).stdout
    with open(tmp_path / "ref.ckpt", "rb") as fh:
        whole = len(pickle.load(fh)["passes"])  # the passes of a run that finished
    rng = np.random.default_rng(63)
    for r in range(kills):
        ckpt = tmp_path / f"run{r}.ckpt"
        proc = subprocess.Popen(_evaluate_cli(csv, ckpt), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        target = int(rng.integers(1, whole))  # kill once the checkpoint holds this many passes (of `whole`)
        before, t0 = 0, time.monotonic()
        while before < target and proc.poll() is None and time.monotonic() - t0 < 300:
            if ckpt.exists():
                with open(ckpt, "rb") as fh:
                    before = len(pickle.load(fh)["passes"])
            time.sleep(0.005)
        # the kill lands mid-run: the process is still running, and its checkpoint does not yet hold every pass
        # (proved below from the file the kill left; a kill after the last save would prove nothing)
        assert proc.poll() is None, "the run finished before the kill: the test proved nothing"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        with open(ckpt, "rb") as fh:
            held = len(pickle.load(fh)["passes"])  # the file loads after the kill: atomic saves
        assert before <= held < whole, f"the kill landed after the last of {whole} passes was saved ({held})"
        out = subprocess.run(_evaluate_cli(csv, ckpt), check=True, env=env, capture_output=True, text=True).stdout
        print(f"kill {r}: the checkpoint held {held} pass(es); the rerun's output is identical: {out == ref}")
        assert out == ref
