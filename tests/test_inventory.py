"""The inventory of the paper's checkable statements (issue 14): every reference resolves, every claim of the
registry is inventoried, every unchecked statement says why, and socal audit --coverage prints the counts."""

import pathlib

from socal.cli import main
from socal.verify._core import REGISTRY
from socal.verify.registry import load_claims
from socal.verify.inventory import ISSUES, KINDS, STATEMENTS, coverage

load_claims()
TESTS = pathlib.Path(__file__).resolve().parent
REPRODUCE = {"rate", "recalibration", "decision", "real-labels"}


def test_every_reference_resolves():
    ids = [s.id for s in STATEMENTS]
    assert len(ids) == len(set(ids)), "duplicate statement ids"
    for s in STATEMENTS:
        assert s.kind in KINDS, s
        assert s.location and s.quote, s
        if s.check is None:
            assert len(s.reason) > 30, f"{s.id}: an unchecked statement needs its reason"
        elif s.check.startswith("reproduce:"):
            assert s.check.split(":", 1)[1] in REPRODUCE, s
        elif s.check.startswith("test:"):
            assert (TESTS / s.check.split(":", 1)[1]).is_file(), s
        else:
            assert s.check in REGISTRY, f"{s.id}: unknown claim {s.check}"


def test_every_own_claim_is_inventoried():
    own = {cid for cid, c in REGISTRY.items() if c.check.__module__.startswith(("socal.verify", "verify"))}
    used = {s.check for s in STATEMENTS if s.check}
    assert own <= used, f"claims not in the inventory: {sorted(own - used)}"


def test_coverage_counts_and_cli(capsys):
    cov = coverage(REGISTRY)
    assert cov["statements"] == len(STATEMENTS) >= 100
    assert cov["audit claims"] + cov["reproduced"] + cov["unit tests"] + cov["not checkable"] == cov["statements"]
    assert all(v > 0 for v in cov["by kind"].values())
    assert main(["audit", "--coverage"]) == 0
    out = capsys.readouterr().out
    assert f"inventory: {len(STATEMENTS)} checkable statements" in out
    assert f"typos and inconsistencies: {len(ISSUES)}" in out
    assert "not checked: remark-ce1" in out
    # findings are not typos: each names a registered claim whose verdict is not HOLDS as the paper states it, and no
    # typo names a claim (issue 25: 'lemma 4' was a correct reference, the three findings were listed as typos)
    from socal.verify.inventory import FINDINGS

    assert FINDINGS and all(cid in REGISTRY for _, _, cid in FINDINGS)
    assert not any(cid in text for _, text in ISSUES for cid in REGISTRY if len(cid) > 8)
    assert not any("lemma 4" in text for _, text in ISSUES)


def test_readme_quotes_the_coverage_output():
    from socal.verify.inventory import format_coverage

    readme = (TESTS.parent / "docs" / "audit.md").read_text()
    for line in format_coverage(coverage(REGISTRY)).splitlines()[:2]:
        assert line in readme, f"docs/audit.md's coverage block is out of date: {line}"
    base = __import__("json").loads((TESTS / "audit_baseline.json").read_text())
    n_claims, n_numbers = len(base["claims"]), sum(len(c["numbers"]) for c in base["claims"])
    assert f"(the quick audit: {n_claims} claims, {n_numbers} numbers)" in readme


def test_readme_threshold_table_matches_the_baseline():
    import json

    readme = (TESTS.parent / "docs" / "audit.md").read_text()
    base = {c["id"]: c for c in json.loads((TESTS / "audit_baseline.json").read_text())["claims"]}
    th = base["main-bound"]["evidence"]["thresholds"]

    def short(x):
        mant, exp = f"{x:.3g}".split("e")
        return f"{mant}e{int(exp)}"

    assert list(th["h=1/16"]) == ["paper", "sharp (P_l)", "[0, 1]-valued", "sharp + repaired approximation",
                                  "[0, 1]-valued + repaired approximation"]
    for name in th["h=1/16"]:
        a, b = th["h=1/16"][name], th["h=1/64"][name]
        row = (f"| {name} | {short(a['n_nonvacuous'])} | {short(a['n_nonvacuous (best degree)'])} "
               f"(l = {a['n_nonvacuous (best degree): l']}) | {short(b['n_nonvacuous'])} | "
               f"{short(b['n_nonvacuous (best degree)'])} (l = {b['n_nonvacuous (best degree): l']}) | "
               f"{short(a['n_below_0.1'])} | {short(a['n_below_0.1 (best degree)'])} |")
        assert row in readme, row


def test_every_rate_and_comparison_states_its_sides_and_is_checked_in_every_parameter():
    """Issue 25, deliverable 3: each rate statement and each comparison of rates says which side is an upper bound,
    a lower bound, exact or observed; each one about a bound (not an observation) is a part of rate-dependence,
    which checks it in n, h, d and the degree cap, or is unchecked with its reason."""
    import re

    from socal.verify import get
    from socal.verify.inventory import SIDE_WORDS

    rates = [s for s in STATEMENTS if s.kind in ("rate", "comparison")]
    for s in rates:
        words = s.sides.split(" vs ")
        assert s.sides and all(w in SIDE_WORDS for w in words), f"{s.id}: sides {s.sides!r}"
        assert s.kind != "comparison" or len(words) == 2, f"{s.id}: a comparison has two sides"
    parts = get("rate-dependence").run(quick=True).parts
    named = {i.strip() for p in parts for m in re.findall(r"^\[([^]]+)\]", p.name) for i in m.split(",")}
    about_bounds = {s.id for s in rates if "observed" not in s.sides and s.check}
    ids = {s.id for s in STATEMENTS}
    assert named <= ids, f"rate-dependence names unknown statements: {sorted(named - ids)}"
    assert about_bounds <= named, f"rate statements not checked in every parameter: {sorted(about_bounds - named)}"


def test_the_audit_page_quotes_every_experiments_bound_per_constant_set():
    """docs/audit.md's table of the bound at each experiment, per constant set, is the pinned quick audit's numbers
    (the bound at the experiment's n, then from which n it is non-vacuous at that degree or its floor), regenerated
    here cell by cell, not typed."""
    import json

    readme = (TESTS.parent / "docs" / "audit.md").read_text()
    base = {c["id"]: c for c in json.loads((TESTS / "audit_baseline.json").read_text())["claims"]}
    ex = base["experiments-as-run"]["evidence"]

    def short(x):
        mant, exp = f"{x:.3g}".split("e")
        return f"{mant}e{int(exp)}"

    def num(x):
        return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"

    labels = {"Exp 1, h=1/16 (cap 44)": "Exp 1, h = 1/16, cap 44", "Exp 1, h=1/64 (cap 88)": "Exp 1, h = 1/64, cap 88",
              "Exp 2 (degree 12, h=1/64)": "Exp 2, h = 1/64, degree 12"}
    at_n = "bound at the experiment's n"
    for key, label in labels.items():
        cells = []
        for e in ex[key]["per constant set"].values():
            n_c, floor = e["non-vacuous (< 9/4) from n"], e["floor (inf over n at this degree)"]
            cells.append(f"{e[at_n]:.1f}; "
                         + (f"from {short(n_c)}" if n_c else f"never (floor {num(floor)})"))
        row = f"| {label} | " + " | ".join(cells) + " |"
        assert row in readme, row
