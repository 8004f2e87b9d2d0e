"""The tamper table: each way of editing a certificates file by hand, applied to a copy, with the exit code
``socal audit --replay`` gives it (0: replays as recorded, 1: a finding, 2: refused as malformed).

    python -m socal.verify.tamper c.json      # c.json from socal audit --quick --certificates c.json

Each tamper is a function of the parsed file that edits one thing the replay must catch; a tamper the file offers
no target for (e.g. no Monte Carlo row) is reported as "no target".  The untouched file is the control (exit 0).
``tests/test_certificates.py`` runs the table on its own file and asserts every tamper is caught.
"""

from __future__ import annotations

import copy
import json
import pathlib
import sys
import tempfile

import sympy as sp

__all__ = ["TAMPERS", "tamper_table", "main"]


def _rows(doc, pred):
    return [(c, i, r) for c in doc["claims"] for i, r in enumerate(c["rows"]) if pred(c, r)]


def _mc_flipped(doc):
    hits = _rows(doc, lambda c, r: r["how"] == "statistical" and r.get("data"))
    if not hits:
        return None
    c, i, r = hits[0]
    r["outcome"] = not r["outcome"]
    return f"{c['id']} row {i}: outcome {not r['outcome']} -> {r['outcome']}"


def _plain_verdict(doc):
    c = next((c for c in doc["claims"] if not c["parts"] and c.get("rules")), None)
    if c is None:
        return None
    old, c["verdict"] = c["verdict"], "FAILS" if c["verdict"] != "FAILS" else "HOLDS"
    return f"{c['id']}: verdict {old} -> {c['verdict']}"


def _claim_verdict(doc):
    c = next((c for c in doc["claims"] if c["parts"]), None)
    if c is None:
        return None
    old, c["verdict"] = c["verdict"], "HOLDS" if c["verdict"] != "HOLDS" else "FAILS"
    return f"{c['id']}: verdict {old} -> {c['verdict']} (parts untouched)"


def _part_verdict(doc):
    """A part's verdict edited, and the claim's verdict set to what the edited parts combine to: only the part's
    rule can see it."""
    from ._core import Part, combine
    from .verdicts import Verdict

    for c in doc["claims"]:
        targets = {r["target"] for r in c.get("rules", [])}
        p = next((p for p in c["parts"] if p["part"] in targets), None)
        if p is not None:
            old, p["verdict"] = p["verdict"], "HOLDS" if p["verdict"] != "HOLDS" else "FAILS"
            c["verdict"] = combine([Part(q["part"], Verdict(q["verdict"]), "", q["role"]) for q in c["parts"]]).value
            return f"{c['id']}: part '{p['part'][:40]}...' {old} -> {p['verdict']}, claim set to {c['verdict']}"
    return None


def _row_deleted(doc):
    c = next((c for c in doc["claims"] if c["rows"]), None)
    c["rows"].pop()
    return f"{c['id']}: its last row deleted"


def _row_added(doc):
    c = next((c for c in doc["claims"] if c["rows"]), None)
    c["rows"].append(copy.deepcopy(c["rows"][0]))
    return f"{c['id']}: its first row duplicated"


def _exact_moved(doc):
    from fractions import Fraction

    from .certified import untoken

    def exact(t):
        return t is not None and ("q" in t or "int" in t or t.get("sym", "").startswith(("Rational(", "Integer(")))

    hits = _rows(doc, lambda c, r: r.get("data") and r["data"]["kind"] == "compare" and r["outcome"] is True
                 and r["op"] in ("<=", "<", ">=", ">") and exact(r["data"]["lhs"]) and exact(r["data"]["rhs"]))
    if not hits:
        return None
    c, i, r = hits[0]
    v = untoken(r["data"]["lhs"])
    lhs = Fraction(int(v.p), int(v.q)) if hasattr(v, "q") else Fraction(v)
    moved = lhs - 1 if r["op"] in ("<=", "<") else lhs + 1
    r["data"]["rhs"] = {"q": f"{moved.numerator}/{moved.denominator}"}
    return f"{c['id']} row {i}: right side moved across the left ({lhs} {r['op']} {moved})"


def _identity_edited(doc):
    hits = _rows(doc, lambda c, r: r.get("data") and r["data"]["kind"] == "identity" and "lhs" in r["data"])
    if not hits:
        return None
    c, i, r = hits[0]
    r["data"]["lhs"] = sp.srepr(sp.sympify(r["data"]["lhs"]) + sp.Symbol("tampered"))
    return f"{c['id']} row {i}: one side of the identity plus a symbol"


def _ball_moved(doc):
    hits = _rows(doc, lambda c, r: r.get("data") and r["data"]["kind"] == "compare" and r["how"] == "ball"
                 and r["outcome"] is True and r["op"] in (">", ">=") and "arb" in (r["data"]["lhs"] or {}))
    if not hits:
        return None
    c, i, r = hits[0]
    r["data"]["lhs"] = {"arb": ["-1000", r["data"]["lhs"]["arb"][1]]}
    return f"{c['id']} row {i}: a ball's midpoint moved to -1000"


def _cover_enlarged(doc):
    hits = _rows(doc, lambda c, r: r.get("data") and r["data"]["kind"] == "covers" and r["outcome"] is True)
    if not hits:
        return None
    c, i, r = hits[0]
    cover = r["data"]["covers"][0]
    n = len(cover["tree"])
    cover["tree"] = "0"
    return f"{c['id']} row {i}: a ball cover's {n} boxes replaced by the whole region, claimed certified"


def _rule_edited(doc):
    c = next((c for c in doc["claims"] if c.get("rules")), None)
    if c is None:
        return None
    rule = c["rules"][0]
    rule["holds"] = "VACUOUS" if rule["holds"] != "VACUOUS" else "HOLDS"
    return f"{c['id']}: a rule's verdict edited"


def _malformed(doc):
    doc["claims"][0].pop("rows")
    return f"{doc['claims'][0]['id']}: its 'rows' removed"


TAMPERS = {
    "none (control)": lambda doc: "the file as written",
    "a Monte Carlo outcome flipped": _mc_flipped,
    "a claim's verdict changed (no parts)": _plain_verdict,
    "a claim's verdict changed (parts untouched)": _claim_verdict,
    "a part's verdict changed (claim re-combined)": _part_verdict,
    "a row deleted": _row_deleted,
    "a row added": _row_added,
    "an exact number moved across its bound": _exact_moved,
    "an identity's expression edited": _identity_edited,
    "a ball's endpoints moved": _ball_moved,
    "a ball cover's boxes merged into one": _cover_enlarged,
    "a rule edited": _rule_edited,
    "a malformed file (a claim without rows)": _malformed,
}


def tamper_table(path):
    """[(tamper, what was edited, exit code, its most telling finding)] for every tamper of :data:`TAMPERS` on a
    copy of the certificates file ``path``; the exit code is the one ``socal audit --replay`` gives (None: no
    target)."""
    from .certificates import replay

    doc0 = json.loads(pathlib.Path(path).read_text())
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, edit in TAMPERS.items():
            doc = copy.deepcopy(doc0)
            what = edit(doc)
            if what is None:
                out.append((name, "no target in this file", None, ""))
                continue
            t = pathlib.Path(tmp) / "t.json"
            t.write_text(json.dumps(doc))
            try:
                ok, text = replay(t)
            except ValueError as exc:
                out.append((name, what, 2, str(exc)))
                continue
            found = [ln.strip() for ln in text.splitlines() if ln.startswith("  ")]
            # the most telling finding: a re-decision or a verdict before the digest, which any edit changes
            finding = next((f for f in found if "digest" not in f), found[0] if found else "")
            out.append((name, what, 0 if ok else 1, f"{finding} ({len(found)} finding(s))" if found else ""))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__)
        return 2
    rows = tamper_table(argv[0])
    print("| tamper | what was edited | replay's exit code | its most telling finding |")
    print("| --- | --- | --- | --- |")
    for name, what, code, finding in rows:
        print(f"| {name} | {what} | {'-' if code is None else code} | {finding[:110]} |")
    caught = all(code in (1, 2) for name, _, code, _ in rows if name != "none (control)" and code is not None)
    control = rows[0][2] == 0
    print(f"\ncontrol replays with exit 0: {control}; every tamper with a target caught: {caught}")
    return 0 if caught and control else 1


if __name__ == "__main__":
    sys.exit(main())
