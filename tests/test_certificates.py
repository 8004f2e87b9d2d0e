"""socal audit --certificates / --replay: the deciding comparisons as exact data, re-decided from the file alone;
a tampered number makes the replay fail (issue 60)."""

import json
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("flint", reason="the certificates need python-flint")

from socal.verify.certified import compare, token, untoken  # noqa: E402

IDS = "aux-1,step2-constants,main-bound-explicit,lower-bound-exact,sandwich,lower-bound,sampler,main-bound-mc,posreal"


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
    assert "REPLAY FAILS: 3 finding(s)" in out and f"{claim['id']} row {i}" in out
    assert f"{claim['id']}: the rows' digest differs" in out
    assert f"{claim['id']}: the claim: recorded {claim['verdict']}, its rows give" in out  # the verdict, re-derived
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


def _tampered(certificates, tmp_path, edit):
    doc = json.loads(certificates.read_text())
    edit(doc)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return path


def test_replay_catches_a_deleted_row_an_edited_verdict_and_a_malformed_file(certificates, tmp_path, capsys):
    """Issue 71's tampers that replayed with exit 0: a row deleted (the claim's recorded count and digest), a claim's
    verdict changed with its parts untouched (re-derived by the audit's own combine), a claim without 'rows' (one
    line, no traceback).  Negative control: the untouched file replays with exit 0."""
    from socal.cli import main

    capsys.readouterr()
    assert main(["audit", "--replay", str(certificates)]) == 0
    with_parts = next(c for c in json.loads(certificates.read_text())["claims"] if c["parts"] and c["rows"])

    def drop_row(doc):
        next(c for c in doc["claims"] if c["id"] == with_parts["id"])["rows"].pop()

    def flip_verdict(doc):
        c = next(c for c in doc["claims"] if c["id"] == with_parts["id"])
        c["verdict"] = "FAILS" if c["verdict"] != "FAILS" else "HOLDS"

    capsys.readouterr()
    assert main(["audit", "--replay", str(_tampered(certificates, tmp_path, drop_row))]) == 1
    assert f"{with_parts['id']}: {len(with_parts['rows']) - 1} rows where the file records" in capsys.readouterr().out
    assert main(["audit", "--replay", str(_tampered(certificates, tmp_path, flip_verdict))]) == 1
    assert f"{with_parts['id']}: recorded verdict" in capsys.readouterr().out
    assert main(["audit", "--replay", str(_tampered(certificates, tmp_path,
                                                    lambda d: d["claims"][0].pop("rows")))]) == 2
    err = capsys.readouterr().err
    assert "malformed: claim 0" in err and "has no 'rows'" in err and "Traceback" not in err


def test_monte_carlo_rows_carry_their_counts_and_a_flipped_outcome_fails(certificates, tmp_path, capsys):
    """Issue 71: a Monte Carlo row records the counts or statistics and the rule that decides it (binomial counts of
    replicates above twice the bound, the KS p-values against their Bonferroni level, an interval's end against a
    rate), so replay re-decides it.  Flipping its outcome, or editing its counts and level so that the rule flips
    (the quick audit's few replicates cannot reject at 1e-3 whatever the counts), fails; the untouched file replays
    (control)."""
    from socal.cli import main
    from socal.verify.certified import Ledger, statistical_outcome

    doc = json.loads(certificates.read_text())
    mc = [(c["id"], i, r) for c in doc["claims"] for i, r in enumerate(c["rows"]) if r["how"] == "statistical"]
    assert {r["data"]["kind"] for _, _, r in mc} >= {"binomial", "min_p", "below"}
    assert all(statistical_outcome(r["data"]) == r["outcome"] for _, _, r in mc)
    cid, i, _ = next(x for x in mc if x[2]["data"]["kind"] == "binomial")

    def flip(d):
        row = next(c for c in d["claims"] if c["id"] == cid)["rows"][i]
        row["outcome"] = not row["outcome"]

    def all_above(d):  # every replicate above twice the bound, read at level 0.5: the binomial rule rejects
        row = next(c for c in d["claims"] if c["id"] == cid)["rows"][i]
        row["data"]["counts"] = [[r, r] for _, r in row["data"]["counts"]]
        row["data"]["alpha"] = 0.5

    for edit in (flip, all_above):
        capsys.readouterr()
        assert main(["audit", "--replay", str(_tampered(certificates, tmp_path, edit))]) == 1
        assert f"{cid} row {i}" in capsys.readouterr().out
    with pytest.raises(ValueError, match="contradicts its own data"):  # a row cannot record what its data deny
        Ledger().statistical("x", True, "", {"kind": "min_p", "pvalues": [1e-9], "alpha": 0.01})


def test_identity_rows_keep_both_sides_and_an_edited_side_fails(certificates, tmp_path, capsys):
    """Issue 71: identity rows stored the residual already simplified to 0, so replay checked 0 = 0.  Each now keeps
    the two sides as given and replay simplifies their difference; a side edited (one more mu) fails."""
    import sympy as sp

    from socal.cli import main

    doc = json.loads(certificates.read_text())
    ids = [(c["id"], i, r) for c in doc["claims"] for i, r in enumerate(c["rows"])
           if r["data"] and r["data"]["kind"] == "identity"]
    assert ids and all("lhs" in r["data"] or r["data"]["expr"] != "Integer(0)" for _, _, r in ids)
    cid, i, row = next(x for x in ids if "lhs" in x[2]["data"] and "mu" in x[2]["data"]["lhs"])

    def edit(d):
        r = next(c for c in d["claims"] if c["id"] == cid)["rows"][i]
        r["data"]["lhs"] = sp.srepr(sp.sympify(r["data"]["lhs"]) + sp.Symbol("mu", positive=True))

    capsys.readouterr()
    assert main(["audit", "--replay", str(_tampered(certificates, tmp_path, edit))]) == 1
    assert f"{cid} row {i}" in capsys.readouterr().out


def test_every_verdict_is_re_derived_from_rows_and_an_edited_one_fails(certificates, tmp_path, capsys):
    """Issue 71: a verdict is an output of replay.  Each check states the rule from its rows to each verdict
    (Ledger.decide); replay recomputes it from the re-decided rows.  A parts-less claim's verdict edited, a part's
    verdict edited (with the claim's verdict set to what the edited parts combine to, so only the rule can see it),
    and a rule edited (the digest) each fail; the untouched file replays (control)."""
    from socal.cli import main
    from socal.verify._core import Part, combine
    from socal.verify.verdicts import Verdict

    capsys.readouterr()
    assert main(["audit", "--replay", str(certificates)]) == 0
    n = len(IDS.split(","))
    assert f"Verdicts: {n} of {n} claims re-derived from their rows" in capsys.readouterr().out

    def flip_plain(d):
        c = next(c for c in d["claims"] if c["id"] == "sandwich")
        assert not c["parts"] and c["verdict"] == "HOLDS"
        c["verdict"] = "FAILS"

    def flip_part(d):
        c = next(c for c in d["claims"] if c["id"] == "lower-bound")
        p = next(p for p in c["parts"] if p["verdict"] == "GAP")
        p["verdict"] = "HOLDS"
        c["verdict"] = combine([Part(q["part"], Verdict(q["verdict"]), "", q["role"]) for q in c["parts"]]).value

    def edit_rule(d):
        c = next(c for c in d["claims"] if c["id"] == "sandwich")
        c["rules"][0]["holds"] = c["verdict"] = "VACUOUS"

    for edit, says in ((flip_plain, "sandwich: the claim: recorded FAILS, its rows give HOLDS"),
                       (flip_part, "lower-bound: 'n = 1, 2, 3"), (edit_rule, "sandwich: the rows' digest differs")):
        capsys.readouterr()
        assert main(["audit", "--replay", str(_tampered(certificates, tmp_path, edit))]) == 1
        assert says in capsys.readouterr().out


def test_rule_modes():
    """Ledger.decide's clauses: 'any' fires on a False row (None: INCONCLUSIVE), 'all' when every row is False,
    'true' when every row is True, 'undecided' on a None row; the first clause that fires decides."""
    from socal.verify.certified import rule_verdict

    outs = [True, False, None, True]
    assert rule_verdict([[[0, 3], "FAILS"]], outs, "HOLDS") == "HOLDS"
    assert rule_verdict([[[0, 1], "FAILS"]], outs, "HOLDS") == "FAILS"
    assert rule_verdict([[[1, 2], "FAILS"]], outs, "HOLDS") == "FAILS"  # a certified False beats an undecided row
    assert rule_verdict([[[0, 2], "FAILS"]], outs, "HOLDS") == "INCONCLUSIVE"
    assert rule_verdict([[[1], "VACUOUS", "all"]], outs, "HOLDS") == "VACUOUS"
    assert rule_verdict([[[0, 1], "VACUOUS", "all"]], outs, "HOLDS") == "HOLDS"
    assert rule_verdict([[[1, 2], "VACUOUS", "all"]], outs, "HOLDS") == "INCONCLUSIVE"
    assert rule_verdict([[[0, 3], "VACUOUS", "true"]], outs, "HOLDS") == "VACUOUS"
    assert rule_verdict([[[0, 1], "VACUOUS", "true"]], outs, "HOLDS") == "HOLDS"
    assert rule_verdict([[[2], "INCONCLUSIVE", "undecided"], [[1], "FAILS"]], outs, "HOLDS") == "INCONCLUSIVE"
    assert rule_verdict([[[1], "GAP"], [[2], "INCONCLUSIVE", "undecided"]], outs, "HOLDS") == "GAP"


def test_a_check_whose_rule_and_verdict_disagree_decides_nothing():
    """Claim.run compares each rule with the verdict it decides: a check that says HOLDS where its own rule says
    FAILS is a bug in the check, and its result is INCONCLUSIVE with the disagreement named; the consistent check
    is the control."""
    from socal.verify import Result, Verdict, claim, get, unregister
    from socal.verify.certified import Ledger

    @claim("test-rule-mismatch", "a test", "1 <= 0", paper={"say": "HOLDS"}, wrong={"say": "FAILS"})
    def check(*, quick=False, say):
        led = Ledger()
        led.check("1 <= 0", 1, "<=", 0)
        led.decide()
        return Result(Verdict(say), "said")

    try:
        bad, good = get("test-rule-mismatch").run(), get("test-rule-mismatch").run(which="wrong")
    finally:
        unregister("test-rule-mismatch")
    assert bad.verdict is Verdict.INCONCLUSIVE and "recorded HOLDS, its rows give FAILS" in bad.summary
    assert good.verdict is Verdict.FAILS and good.rules


def test_the_tamper_table_catches_every_tamper(certificates):
    """Issue 71's must-show: every tamper of socal.verify.tamper on the file gives exit 1 (or 2 for the malformed
    one), and the untouched file exit 0 (the control row)."""
    from socal.verify.tamper import TAMPERS, main, tamper_table

    rows = {name: (what, code, finding) for name, what, code, finding in tamper_table(certificates)}
    assert set(rows) == set(TAMPERS) and rows["none (control)"][1] == 0
    for name in ("a Monte Carlo outcome flipped", "a claim's verdict changed (no parts)",
                 "a claim's verdict changed (parts untouched)", "a part's verdict changed (claim re-combined)",
                 "a row deleted", "a row added", "an exact number moved across its bound",
                 "an identity's expression edited", "a rule edited"):
        assert rows[name][1] == 1, (name, rows[name])
    assert rows["a malformed file (a claim without rows)"][1] == 2
    assert "re-decided" in rows["a Monte Carlo outcome flipped"][2]
    assert rows["a ball cover's boxes merged into one"][1] == 1
    assert "recorded True, re-decided None" in rows["a ball cover's boxes merged into one"][2]
    assert main([str(certificates)]) == 0


def test_a_check_that_raises_keeps_its_rows_and_no_rules():
    """A check that crashes after stating a rule decides nothing: INCONCLUSIVE with the error, and no rule for a
    verdict it never gave (the rule would otherwise be compared with the crash's INCONCLUSIVE)."""
    from socal.verify import claim, get, unregister
    from socal.verify.certified import Ledger

    @claim("test-rule-crash", "a test", "1 <= 2", paper={"boom": True}, wrong={"boom": False})
    def check(*, quick=False, boom):
        led = Ledger()
        led.check("1 <= 2", 1, "<=", 2)
        led.decide()
        if boom:
            raise RuntimeError("planted")
        from socal.verify import Result, Verdict
        return Result(Verdict.FAILS, "wrong on purpose")

    try:
        crashed = get("test-rule-crash").run()
    finally:
        unregister("test-rule-crash")
    assert crashed.verdict.value == "INCONCLUSIVE" and "RuntimeError: planted" in crashed.summary
    assert crashed.rules == [] and len(crashed.certificate) == 1


def test_every_row_carries_the_data_to_re_decide_it(certificates, capsys):
    """Issue 71's must-show: 0 rows "recorded only", ball covers included (posreal's 1,877 boxes are in the file as
    a tree that replay walks again).  Negative control: a row without data is counted as recorded only."""
    from socal.cli import main

    doc = json.loads(certificates.read_text())
    assert all(r.get("data") for c in doc["claims"] for r in c["rows"])
    capsys.readouterr()
    assert main(["audit", "--replay", str(certificates)]) == 0
    assert "; 0 recorded only" in capsys.readouterr().out
    posreal = next(c for c in doc["claims"] if c["id"] == "posreal")
    posreal["rows"][-1]["data"] = None
    from socal.verify.certificates import replay

    bad = certificates.with_name("no-data.json")
    bad.write_text(json.dumps(doc))
    _, text = replay(bad)
    assert "; 1 recorded only" in text


def test_a_cover_replays_from_its_tree_alone():
    """A ball cover re-decided from its tree: the same boxes re-certified give True; a tree that does not fit the
    region (one letter short or long, or a foreign letter) is refused; a box the predicate cannot certify (the
    control: Re sech > 0 claimed past the pole at Im z = pi/2) gives None."""
    from socal.verify.strip import certify, cover_data, replay_cover

    region = (-1.0, 1.0, -1.4, 1.4)
    cert = certify(lambda z: z.sech().real > 0, *region, max_depth=12)
    data = cover_data("Re sech(z) > 0", {}, region, cert)
    assert cert["certified"] and len(data["tree"]) > 4 and replay_cover(data) is True
    for tree in (data["tree"][:-1], data["tree"] + "0", data["tree"].replace("0", "2", 1)):
        with pytest.raises(ValueError, match="tree"):
            replay_cover({**data, "tree": tree})
    past = cover_data("Re sech(z) > 0", {}, (-1.0, 1.0, -1.4, 1.7), {**cert, "tree": data["tree"]})
    assert replay_cover(past) is None
    with pytest.raises(ValueError, match="unknown cover predicate"):
        cover_data("Re exp(z) > 0", {}, region, cert)
    for broken in ({**data, "predicate": "Re exp(z) > 0"}, {**data, "region": [0, 1]}, {k: data[k] for k in ("tree",)}):
        with pytest.raises(ValueError, match="cover's data is malformed"):
            replay_cover(broken)


def test_the_last_argued_parts_are_decided_by_rows(tmp_path):
    """Issue 71: the parts whose verdicts were the argument's now have rules over rows (33 of 33 claims re-derived):
    main-bound's conclusion, rate-dependence's two comparisons and experiments-as-run's Experiments 3-4.  Each rule
    gives the recorded verdict on the recorded rows, and another verdict where the rows say otherwise (the control:
    the argument's steps holding give HOLDS; a failed comparison FAILS; perturbed experiments INCONCLUSIVE)."""
    from socal.cli import main
    from socal.verify.certified import rule_verdict
    from socal.verify.claims_steps import perturbation_imports

    path = tmp_path / "c.json"
    assert main(["audit", "--quick", "--only", "main-bound,rate-dependence,experiments-as-run", "--no-progress",
                 "--jobs", "1", "--certificates", str(path)]) == 0
    doc = {c["id"]: c for c in json.loads(path.read_text())["claims"]}

    def rule(cid, start):
        c = doc[cid]
        r = next(r for r in c["rules"] if (r["target"] or "").startswith(start))
        part = next(p for p in c["parts"] if p["part"].startswith(start))
        outs = [row["outcome"] for row in c["rows"]]
        assert rule_verdict(r["clauses"], outs, r["holds"]) == part["verdict"]
        return r, outs

    r, outs = rule("main-bound", "the rate E|CE2-hat")
    assert r["holds"] == "HOLDS" and rule_verdict(r["clauses"], outs, r["holds"]) == "GAP"
    steps, covering = r["clauses"][0][0], r["clauses"][1][0]
    assert [outs[i] for i in steps] == [False, False] and [outs[i] for i in covering] == [True, True]
    fixed = list(outs)
    for i in steps:
        fixed[i] = True
    for i in covering:
        fixed[i] = False
    assert rule_verdict(r["clauses"], fixed, r["holds"]) == "HOLDS"

    r, outs = rule("rate-dependence", "[abs-vs-quarter")
    assert rule_verdict(r["clauses"], outs, r["holds"]) == "GAP"
    assert rule_verdict(r["clauses"], [False] * len(outs), r["holds"]) == "FAILS"
    r, outs = rule("rate-dependence", "[abs-lower")
    assert rule_verdict(r["clauses"], outs, r["holds"]) == "HOLDS"
    assert rule_verdict(r["clauses"], [False] * len(outs), r["holds"]) == "FAILS"

    r, outs = rule("experiments-as-run", "Experiment 3")
    assert rule_verdict(r["clauses"], outs, r["holds"]) == "GAP"
    assert rule_verdict(r["clauses"], [True] * len(outs), r["holds"]) == "INCONCLUSIVE"
    # the row's count: Experiments 3 and 4 never import socal.perturb; Experiments 1 and 2 do (the control)
    assert [perturbation_imports(m) for m in ("decision", "real_labels")] == [0, 0]
    assert perturbation_imports("recalibration") >= 1 and perturbation_imports("rate") >= 1
    with pytest.raises(ValueError, match="no module"):
        perturbation_imports("no_such_experiment")


def test_interval_rows_re_decide_from_their_data():
    """The two interval kinds exp1-slopes records: 'interval_in' (both ends inside the range) and 'interval_meets'
    (not wholly on one side), each with a case on either side of its edge."""
    from socal.verify.certified import replay_row, statistical_outcome

    def out(kind, iv, rng):
        data = {"kind": kind, "interval": iv, "range": rng}
        got = statistical_outcome(data)
        assert replay_row({"data": data, "outcome": got}) == got  # what --replay does with a row of the file
        return got

    assert out("interval_in", [-0.75, -0.65], [-0.8, -0.6]) and not out("interval_in", [-0.85, -0.65], [-0.8, -0.6])
    assert out("interval_meets", [-0.85, -0.79], [-0.8, -0.6])
    assert not out("interval_meets", [-0.95, -0.81], [-0.8, -0.6]) and not out("interval_meets", [-0.5, 0], [-0.8, -0.6])
