"""The notebooks run, and their key outputs equal the committed ones (issue 15).

Each notebook is executed from a fresh kernel in a copy of ``notebooks/`` (so the committed files are untouched);
the text it prints (stdout and plain-text results, figures ignored) is compared with the committed outputs: words
exactly, integers exactly, decimals to 2 units in the last printed digit plus 0.1% (BLAS round-off may flip a last
digit; a changed degree selection or seed handling moves numbers far more).  On a floating-point platform other than
the one the committed outputs were made on (:mod:`tests.fingerprint`), decimals also get a Monte Carlo allowance:
there the keyed random numbers are other draws.  Numbers a notebook prints
that are not reproducible by design (wall-clock seconds) are masked by the notebook's entry in ``MASKS``.

Fast notebooks run in the default suite; the long ones (full experiments, the full audit) under ``-m slow``.
"""

import pathlib
import re
import shutil

import pytest

from tests.fingerprint import fingerprint, notebook_platform

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
DATA = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"

FAST = ["00_estimate.ipynb", "04_real_labels.ipynb"]
SLOW = ["01_rate.ipynb", "02_recalibration.ipynb", "03_decision.ipynb", "05_audit.ipynb", "06_real_models.ipynb"]
MASKS = {"05_audit.ipynb": [r"\d+(\.\d+)? ?s\b", r"seconds?[^\n]*"]}
TIMEOUT = {"05_audit.ipynb": 1800, "02_recalibration.ipynb": 1800, "01_rate.ipynb": 1800}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _text(nb, masks=()):
    """The printed text of a notebook's code cells, in order."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                parts.append(out["text"])
            elif out.get("output_type") in ("execute_result", "display_data"):
                data = out.get("data", {})
                text = data.get("text/markdown") or data.get("text/plain", "")
                if "<Figure" not in text and "object>" not in text:
                    parts.append(text)
    text = "\n".join(parts)
    for pattern in masks:
        text = re.sub(pattern, "<masked>", text)
    return text


def _tokens(text):
    """Numbers (value, decimals printed) and the words between them."""
    out, pos = [], 0
    for m in _NUMBER.finditer(text):
        out.append(("w", " ".join(text[pos:m.start()].split())))
        s = m.group()
        mant = s.split("e")[0].split("E")[0]
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        exp = int(s.lower().split("e")[1]) if "e" in s.lower() else 0
        # integers (counts, degrees, seeds) must match exactly; decimals to 2 units in their last printed digit
        out.append(("n", float(s), 0.0 if ("." not in mant and exp == 0) else 10.0 ** (exp - decimals)))
        pos = m.end()
    out.append(("w", " ".join(text[pos:].split())))
    return out


# absolute, relative: how far a keyed Monte Carlo number may move on another platform.  Other draws can also flip a
# choice the data leave close: on a third machine (2026-11-28) Lepski's rule kept degree 11 where the recorded
# platform kept degree 6 in 00_estimate's evaluate cell, and its estimate moved by 0.0070, its printed terms by
# 0.0047-0.0051 (the interval's ends by 0.0001); every other committed number moved by 0.0016 or less there
MONTE_CARLO = (0.008, 0.05)
# a number printed with its standard error, "x ± s" (a statistic over few seeds, as notebook 01's slopes): on another
# platform x may move by SE_FACTOR times the committed s as well.  Other draws are a partial reseed, so x moves by up
# to sqrt(2) s as a Monte Carlo statistic; 4 s is 2.8 of those SDs (0.5% two-sided under normality).  On a third
# machine (2026-11-29) notebook 01's CV slope at h = 1/16 printed -0.79 where the recorded platform printed -0.71:
# its jackknife SE over the 3 seeds is 0.09 (0.02-0.20 over the run's slopes).  The s itself, an SE from few seeds, may
# move by its own size
SE_FACTOR = 4


def _standard_errors(tokens):
    """{index of x: s} for every number printed as 'x ± s'."""
    return {i: tokens[i + 2][1] for i in range(len(tokens) - 2)
            if tokens[i][0] == "n" and tokens[i + 1] == ("w", "±") and tokens[i + 2][0] == "n"}


def compare_outputs(committed, fresh, monte_carlo=False):
    """A list of differences between two printed texts (empty when they agree to the tolerance).

    Decimals agree to 2 units in their last printed digit plus 0.1%; with ``monte_carlo`` (the outputs were made on
    another floating-point platform, :mod:`tests.fingerprint`) to :data:`MONTE_CARLO` as well, the size by which a
    bootstrap interval's end or a Monte Carlo mean moves when its keyed draws are other draws, and a number printed
    with its standard error ("x ± s") by :data:`SE_FACTOR` times s.  Words and integers (degrees, counts, seeds)
    agree exactly either way."""
    a, b = _tokens(committed), _tokens(fresh)
    if [t[0] for t in a] != [t[0] for t in b]:
        return [f"the printed text changed shape:\n--- committed\n{committed[:2000]}\n--- fresh\n{fresh[:2000]}"]
    se = _standard_errors(a) if monte_carlo else {}
    diffs = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] == "w" and x[1] != y[1]:
            diffs.append(f"text {x[1]!r} became {y[1]!r}")
        elif x[0] == "n":
            unit = max(x[2], y[2])
            tol = 2 * unit + (1e-3 * abs(x[1]) if unit else 0)
            if monte_carlo and unit:
                tol += MONTE_CARLO[0] + MONTE_CARLO[1] * abs(x[1])
                tol += SE_FACTOR * se.get(i, 0.0) + (abs(x[1]) if i - 2 in se else 0.0)
            if abs(x[1] - y[1]) > tol:
                diffs.append(f"number {x[1]!r} became {y[1]!r}")
    return diffs


def _run(name, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="notebook execution needs the test extra (nbclient, nbformat)")
    nbclient = pytest.importorskip("nbclient", reason="notebook execution needs the test extra (nbclient)")
    pytest.importorskip("ipykernel", reason="notebook execution needs ipykernel")
    pytest.importorskip("matplotlib", reason="the notebooks draw figures")
    if name in ("04_real_labels.ipynb", "06_real_models.ipynb") and not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent (the datasets are never copied into the project)")
    monkeypatch.setenv("SOCAL_DATA", str(DATA))  # the copy runs elsewhere: tell notebook 04 where the data are
    work = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, work)
    committed = nbformat.read(NOTEBOOKS / name, as_version=4)
    nb = nbformat.read(work / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=TIMEOUT.get(name, 600), kernel_name="python3",
                                     resources={"metadata": {"path": str(work)}})
    client.execute()
    masks = MASKS.get(name, ())
    old, new = _text(committed, masks), _text(nb, masks)
    assert old.strip(), f"{name}: the committed notebook has no printed output to compare"
    diffs = compare_outputs(old, new, monte_carlo=notebook_platform(committed) != fingerprint())
    assert not diffs, f"{name}: fresh outputs differ from the committed ones:\n" + "\n".join(diffs[:20])


@pytest.mark.parametrize("name", FAST)
def test_fast_notebook_reproduces_its_outputs(name, tmp_path, monkeypatch):
    _run(name, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_slow_notebook_reproduces_its_outputs(name, tmp_path, monkeypatch):
    _run(name, tmp_path, monkeypatch)


def test_every_notebook_is_tested():
    assert sorted(FAST + SLOW) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def test_comparison_catches_a_changed_number_and_word():
    """The negative control of the comparison itself."""
    assert compare_outputs("degree=4 CE2=0.1421", "degree=4 CE2=0.1422") == []  # one last-digit flip
    assert compare_outputs("degree=4 CE2=0.1421", "degree=6 CE2=0.1421")  # a changed selection
    assert compare_outputs("CE2=0.1421", "CE2=0.1521")
    assert compare_outputs("holds claim", "FAILS claim")
    assert compare_outputs("a 1 b", "a 1 b 2")
    # on another platform: a Lepski flip's move (measured: 0.1205 -> 0.1275) passes, a larger one does not
    assert compare_outputs("CE2 0.1205", "CE2 0.1275", monte_carlo=True) == []
    assert compare_outputs("CE2 0.1205", "CE2 0.1275")
    assert compare_outputs("CE2 0.1205", "CE2 0.1405", monte_carlo=True)
    assert compare_outputs("CE2 0.1205 at degree 11", "CE2 0.1205 at degree 16", monte_carlo=True)


def test_monte_carlo_tolerance_is_a_tolerance_not_a_pass():
    """The other-platform comparison lets a bootstrap interval's end move by its Monte Carlo size and no further: the
    README's recalibrated interval as printed on this project's two build machines agrees, one end moved by 0.01
    does not, a changed word or integer does not, and the exact comparison tells the two machines apart."""
    a, b = "90% interval [0.0200, 0.0499], degree=4", "90% interval [0.0184, 0.0498], degree=4"
    assert compare_outputs(a, b) != []  # exact: the machines differ
    assert compare_outputs(a, b, monte_carlo=True) == []
    assert compare_outputs(a, "90% interval [0.0300, 0.0499], degree=4", monte_carlo=True) != []
    assert compare_outputs(a, "90% interval [0.0184, 0.0498], degree=5", monte_carlo=True) != []
    assert compare_outputs(a, "95% interval [0.0184, 0.0498], degree=4", monte_carlo=True) != []


def test_a_standard_error_widens_its_own_number_only():
    """On another platform a number printed as "x ± s" may move by SE_FACTOR s (notebook 01's CV slope: -0.71 on
    the recorded platform, -0.79 on a third), and its s by its own size; the same move is refused on the same
    platform, without a ± after the number, or beyond 4 s; the words around it still agree exactly."""
    a = "h = 1/16  poly-cv  slope -0.71 ± 0.09"
    assert compare_outputs(a, "h = 1/16  poly-cv  slope -0.79 ± 0.12", monte_carlo=True) == []
    assert compare_outputs(a, "h = 1/16  poly-cv  slope -0.79 ± 0.12") != []  # the same platform: exact
    assert compare_outputs("slope -0.71", "slope -0.79", monte_carlo=True) != []  # no SE printed: no allowance
    assert compare_outputs(a, "h = 1/16  poly-cv  slope -1.20 ± 0.09", monte_carlo=True) != []  # beyond 4 s + 0.04
    assert compare_outputs(a, "h = 1/16  poly-cv  slope -0.71 ± 0.30", monte_carlo=True) != []  # s beyond 2 s
    assert compare_outputs(a, "h = 1/64  poly-cv  slope -0.79 ± 0.12", monte_carlo=True) != []
    assert compare_outputs("CE2 0.1205 ± 0.0010 at degree 11", "CE2 0.1205 ± 0.0010 at degree 12",
                           monte_carlo=True) != []


def test_a_notebook_names_the_platform_it_was_run_on():
    """A notebook re-executed on another platform records its own (``python -m tests.fingerprint --stamp``); the
    others fall back to the platform of every committed output."""
    from tests import fingerprint as fp

    nbformat = pytest.importorskip("nbformat", reason="reading notebooks needs the test extra (nbformat)")
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        recorded = fp.notebook_platform(nbformat.read(path, as_version=4))
        assert isinstance(recorded, str) and len(recorded) == 16, path.name
    assert fp.notebook_platform(nbformat.v4.new_notebook()) == fp.RECORDED
    # every notebook was re-executed on 1c1b1a43fbf01452 when the keys began to round (2026-11-29) and carries its
    # stamp; 01 had been re-executed on it alone before: without the stamp a notebook re-executed on one platform
    # would be compared exactly against its digits on the other
    assert fp.NOTEBOOK_KEY in nbformat.read(NOTEBOOKS / "01_rate.ipynb", as_version=4).metadata


def test_platform_fingerprint_is_recorded_and_stable():
    """The committed outputs name their platform, and the fingerprint is a function of the platform alone (two calls
    agree; it does not read socal)."""
    from tests import fingerprint

    assert fingerprint.RECORDED is not None and len(fingerprint.RECORDED) == 16
    assert fingerprint.fingerprint() == fingerprint.fingerprint()
    assert "socal" not in fingerprint.fingerprint.__code__.co_names
