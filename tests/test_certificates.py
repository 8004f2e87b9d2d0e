"""socal audit --certificates / --replay: the deciding comparisons as exact data, re-decided from the file alone;
a tampered number makes the replay fail (issue 60)."""

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("flint", reason="the certificates need python-flint")

from socal.verify.certified import compare, token, untoken  # noqa: E402

IDS = "aux-1,step2-constants,main-bound-explicit,lower-bound-exact,sandwich"


@given(st.one_of(st.fractions(), st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_a_token_rebuilds_the_same_value(x):
    y = untoken(json.loads(json.dumps(token(x))))
    assert type(y) is type(x) and (y == x)


def test_balls_and_sympy_values_rebuild_exactly():
    import sympy as sp
    from flint import arb

    b = arb(1) / 3
    back = untoken(json.loads(json.dumps(token(b))))
    assert back.mid() == b.mid() and back.rad() >= b.rad()
    e = sp.sqrt(2) / 96
    assert untoken(json.loads(json.dumps(token(e)))) == e
    assert compare(untoken(token(Fraction(1216, 3))), "<=", untoken(token(406)))[0] is True


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    from socal.cli import main

    path = tmp_path_factory.mktemp("cert") / "c.json"
    assert main(["audit", "--quick", "--only", IDS, "--no-progress", "--jobs", "1", "--certificates", str(path)]) == 0
    return path


def test_the_replay_re_decides_every_comparison_as_recorded(certificates, capsys):
    from socal.cli import main

    capsys.readouterr()
    assert main(["audit", "--replay", str(certificates)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(certificates.read_text())
    rows = sum(len(c["rows"]) for c in doc["claims"])
    assert rows > 10 and "REPLAY FAILS" not in out and "comparisons re-decided as recorded" in out
    prov = doc["provenance"]
    assert {"socal", "sympy", "mpmath", "python-flint", "commit", "mode"} <= set(prov) and prov["mode"] == "quick"
    assert {r["how"] for c in doc["claims"] for r in c["rows"]} <= {"exact", "ball", "error bound", "statistical"}


def test_a_tampered_number_makes_the_replay_fail(certificates, tmp_path, capsys):
    """The negative control: one exact input of one comparison changed so that its outcome flips."""
    from socal.cli import main

    doc = json.loads(certificates.read_text())
    exact = lambda t: t is not None and ("q" in t or "int" in t or t.get("sym", "").startswith(("Rational(",
                                                                                               "Integer(")))
    claim, i, row = next((c, i, r) for c in doc["claims"] for i, r in enumerate(c["rows"])
                         if r["data"] and r["data"]["kind"] == "compare" and r["outcome"] is True
                         and r["op"] in ("<=", "<", ">=", ">") and exact(r["data"]["lhs"]) and exact(r["data"]["rhs"])
                         and r["data"]["lhs_err"] is None and r["data"]["rhs_err"] is None)
    rhs = untoken(row["data"]["rhs"])
    lhs = untoken(row["data"]["lhs"])
    # move the right-hand side across the left one
    lhs = Fraction(int(lhs.p), int(lhs.q)) if hasattr(lhs, "q") else Fraction(lhs)
    flipped = lhs - 1 if row["op"] in ("<=", "<") else lhs + 1
    row["data"]["rhs"] = {"q": f"{flipped.numerator}/{flipped.denominator}"}
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["audit", "--replay", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "REPLAY FAILS: 1 row(s)" in out and f"{claim['id']} row {i}" in out
    assert rhs != flipped
    # a token that no longer parses is named too
    row["data"]["rhs"] = {"q": "not a number"}
    bad.write_text(json.dumps(doc))
    assert main(["audit", "--replay", str(bad)]) == 1
    assert "cannot be re-decided" in capsys.readouterr().out


def test_replay_refusals(tmp_path, capsys):
    from socal.cli import main

    (tmp_path / "x.json").write_text("[1]")
    assert main(["audit", "--replay", str(tmp_path / "x.json")]) == 2
    assert "not a file of socal audit --certificates" in capsys.readouterr().err
    assert main(["audit", "--replay", str(tmp_path / "x.json"), "--quick"]) == 2
    assert "--replay re-decides a file without running the audit, so --quick" in capsys.readouterr().err
