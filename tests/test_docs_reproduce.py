"""The docs' real-data tables are what their commands print (issue 69, Deliver 4).

Each generated block in docs/*.md sits between ``<!-- socal reproduce real-models PART -->`` and ``<!-- end -->``,
and ``socal reproduce real-models PART`` prints it.  The default suite reruns the RoBERTa sections of the one-class
report (``report(quick=True)``: each of its sections must be the doc's section of the same heading) and checks that
every block names a part that exists; the full blocks (67 s, 90 s and 6 min) are compared under ``-m slow``.  On
another floating-point platform the numbers are compared to the notebooks' tolerance (:func:`compare_outputs`).
Negative control: a documented number edited (to 1.5 x + 1) is reported."""

import pathlib
import re

import pytest

from tests.fingerprint import SAME_PLATFORM
from tests.test_notebooks import compare_outputs

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BLOCK = re.compile(r"<!-- socal reproduce real-models (\w+) -->\n(.*?)\n<!-- end -->", re.S)


def blocks():
    """[(doc file name, part, text)] of every generated block in docs/*.md and README.md."""
    out = []
    for path in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        out += [(path.name, part, text) for part, text in BLOCK.findall(path.read_text())]
    return out


def sections(text):
    """{heading: section text} of markdown split at its '## ' and '### ' headings."""
    parts = re.split(r"(?m)^(?=#{2,3} )", text)
    return {p.splitlines()[0]: p.strip("\n") for p in parts if p.startswith("#")}


def differences(documented, printed):
    """What differs between a documented block and the command's output (empty: they agree)."""
    if SAME_PLATFORM:
        if documented.strip("\n") == printed.strip("\n"):
            return []
        a, b = documented.strip("\n").splitlines(), printed.strip("\n").splitlines()
        bad = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(a) != len(b):
            bad.append((min(len(a), len(b)), f"{len(a)} lines", f"{len(b)} lines"))
        return [f"line {i + 1}: documented {x!r}, printed {y!r}" for i, x, y in bad]
    return compare_outputs(documented, printed, monte_carlo=True)


def _data():
    if not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent (the datasets are never copied into the project)")
    return str(DATA)


def test_every_generated_block_names_a_part_and_the_three_parts_are_in_the_docs():
    from socal.experiments.real_models import PARTS

    found = blocks()
    assert {part for _, part, _ in found} == set(PARTS), found
    assert all(text.strip() for _, _, text in found)


def test_the_roberta_sections_of_the_one_class_report_are_what_the_command_prints():
    from socal.experiments.real_models import report

    documented = sections(next(text for _, part, text in blocks() if part == "report"))
    printed = sections(report(_data(), quick=True))
    assert printed and set(printed) <= set(documented)
    for heading, text in printed.items():
        assert differences(documented[heading], text) == [], heading


def test_an_edited_number_is_reported():
    """Negative control of the comparison: the block's first decimal number changed to 1.5 x + 1."""
    _, _, text = next(b for b in blocks() if b[1] == "report")
    match = re.search(r"(?<![\d.])(\d+\.(\d+))(?![\d.])", text)
    number, decimals = match.group(1), len(match.group(2))
    wrong = f"{float(number) * 1.5 + 1:.{decimals}f}"  # beyond any platform's tolerance
    edited = text[:match.start()] + wrong + text[match.end():]
    assert differences(text, text) == []
    found = differences(text, edited)
    assert found and any(number in d or "number" in d for d in found), found


@pytest.mark.slow
@pytest.mark.parametrize("part", ["report", "multiclass", "recalibration"])
def test_every_documented_block_is_what_its_command_prints(part):
    from socal.experiments.real_models import PARTS

    printed = PARTS[part](_data())
    for name, p, text in blocks():
        if p == part:
            assert differences(text, printed) == [], name


def _table_rows(cells, reps, table="--size"):
    """The rows ``benchmarks/multiclass.py --size --cells ... --reps ...`` prints (one process, its seeds); ``table``
    '--power' for the power table's rows."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "multiclass.py"), table, "--reps", str(reps),
                          "--cells", ",".join(map(str, cells)), "--jobs", "1"], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    return [line for line in out.splitlines() if line.startswith("| ") and "---" not in line
            and not line.startswith("| population")]


@pytest.mark.slow
def test_the_multiclass_size_table_is_what_its_command_prints():
    """Issue 69, Deliver 4, for a benchmark table: two rows of docs/multiclass.md's size table (C = 3, balanced and
    rare, M = 3, ddof = 0: cells 0 and 4 of the full table, 100 replicates each), rerun by the command named beside
    the table with those cells' seeds, are in the docs character for character.  Negative control: a row with one
    rate edited is not."""
    docs = (ROOT / "docs" / "multiclass.md").read_text()
    rows = _table_rows([0, 4], 100)
    assert len(rows) == 2
    for row in rows:
        assert row in docs, row
    edited = re.sub(r"\| (0\.\d{3}) \|", lambda m: f"| {float(m.group(1)) + 0.01:.3f} |", rows[0], count=1)
    assert edited != rows[0] and edited not in docs


@pytest.mark.slow
def test_the_multiclass_power_table_is_what_its_command_prints():
    """The same for the power table: its first row (tempered means, C = 3, k = 2; cell 0 of the full table, 40
    replicates), rerun by the command named beside the table with that cell's seeds, is in docs/multiclass.md
    character for character; the row with one rate edited is not (the control)."""
    docs = (ROOT / "docs" / "multiclass.md").read_text()
    rows = _table_rows([0], 40, "--power")
    assert len(rows) == 1 and rows[0] in docs, rows
    edited = re.sub(r"\| (0\.\d{3}|1\.000) \|", lambda m: f"| {abs(float(m.group(1)) - 0.025):.3f} |", rows[0], count=1)
    assert edited != rows[0] and edited not in docs
