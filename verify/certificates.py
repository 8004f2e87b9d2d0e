"""Replayable certificates: every deciding comparison of an audit, as exact data, and its replay from the file alone.

``socal audit --certificates FILE`` writes, per claim, its verdict, parts and provenance (the versions of socal,
numpy, sympy, mpmath and python-flint, the commit, the mode, the check's arguments, which fix its seeds), and every
row of its ledgers (:class:`socal.verify.certified.Ledger`): what was compared, the inputs as exact tokens (a
rational as p/q, a float by its hex, a ball by its dyadic midpoint and radius, a sympy expression by its srepr), the
error bounds, the outcome and a trust tag (exact, ball, error bound, statistical).

``socal audit --replay FILE`` re-decides every row that holds a comparison with :func:`certified.compare` (sympy
and python-flint, no heavy computation: seconds) and checks each outcome against the recorded one.  A number changed
in the file changes an outcome, and the replay fails naming the claim and the row: the negative control of
``tests/test_certificates.py``.  Rows without a comparison to redo (a Monte Carlo test's outcome, a ball cover
decided elsewhere) are counted as recorded, with their tag: the replay says how many there are, claim by claim.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import platform
import subprocess
from collections import Counter

__all__ = ["provenance", "write_certificates", "replay"]

FORMAT = "socal.audit-certificates"


def provenance(mode):
    """The versions, the commit (None outside a git checkout) and the mode of this run."""
    import flint
    import mpmath
    import numpy
    import sympy

    import socal

    commit = None
    root = pathlib.Path(socal.__file__).resolve().parents[1]
    if (root / ".git").exists():
        try:
            commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                    timeout=10).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            commit = None
    return {"socal": socal.__version__, "numpy": numpy.__version__, "sympy": sympy.__version__,
            "mpmath": mpmath.__version__, "python-flint": flint.__version__, "python": platform.python_version(),
            "commit": commit, "mode": mode}


def _plain(x):
    try:
        json.dumps(x)
        return x
    except TypeError:
        return repr(x)


def rows_digest(rows, rules=None):
    """sha256 of a claim's rows (and its rules, where it has any) as canonical JSON (sorted keys, no spaces): a row
    or rule deleted, added or edited changes it.  It guards against a file damaged or edited by hand, not against a
    forger who recomputes it: the replay's re-decisions are what certify."""
    text = json.dumps(rows if not rules else {"rows": rows, "rules": rules}, sort_keys=True, separators=(",", ":"),
                      default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def write_certificates(results, path, *, mode):
    """Write the certificates of ``results`` (a list of (Claim, Result)) to ``path``, atomically: per claim its
    verdict, parts, provenance, rows, their count and digest (:func:`rows_digest`)."""
    from socal.files import write_text_atomic

    claims = []
    for c, r in results:
        rows = json.loads(json.dumps(r.certificate, default=repr))  # as the file holds them
        rules = json.loads(json.dumps(r.rules))
        claims.append({"id": c.id, "ref": c.ref, "verdict": r.verdict.value, "summary": r.summary,
                       "parts": [{"part": p.name, "role": p.role, "verdict": p.verdict.value} for p in r.parts],
                       "provenance": {"arguments": {k: _plain(v) for k, v in c.paper.items()},
                                      "seconds": r.evidence.get("seconds")},
                       "n_rows": len(rows), "digest": rows_digest(rows, rules), "rows": rows, "rules": rules})
    write_text_atomic(path, json.dumps({"format": FORMAT, "version": 1, "provenance": provenance(mode),
                                        "claims": claims}, indent=1))


_CLAIM_KEYS = {"id": str, "verdict": str, "parts": list, "rows": list, "n_rows": int, "digest": str}


def _malformed(path, doc):
    """None, or the one line that says why ``doc`` is not a certificates file replay can read."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return f"--replay {path}: not a file of socal audit --certificates"
    if not isinstance(doc.get("claims"), list) or not isinstance(doc.get("provenance"), dict):
        return f"--replay {path}: malformed: needs 'claims' (a list) and 'provenance' (a mapping)"
    for j, claim in enumerate(doc["claims"]):
        if not isinstance(claim, dict):
            return f"--replay {path}: malformed: claim {j} is not a mapping"
        for key, kind in _CLAIM_KEYS.items():
            if not isinstance(claim.get(key), kind):
                return (f"--replay {path}: malformed: claim {j} ({claim.get('id', '?')}) has no {key!r} "
                        f"({kind.__name__})")
        for i, row in enumerate(claim["rows"]):
            if not isinstance(row, dict) or not {"what", "how", "outcome"} <= set(row):
                return (f"--replay {path}: malformed: claim {claim['id']} row {i} lacks 'what', 'how' or "
                        f"'outcome'")
        rules = claim.get("rules", [])
        if not isinstance(rules, list) or not all(
                isinstance(r, dict) and {"target", "clauses", "holds"} <= set(r) and isinstance(r["clauses"], list)
                and all(isinstance(c, list) and len(c) in (2, 3) and isinstance(c[0], list)
                        and all(isinstance(i, int) and i >= 0 for i in c[0]) for c in r["clauses"])
                for r in rules):
            return (f"--replay {path}: malformed: claim {claim['id']}'s 'rules' must be a list of {{target, clauses, "
                    f"holds}} whose clauses name rows by index")
        for i, part in enumerate(claim["parts"]):
            if not isinstance(part, dict) or not {"part", "role", "verdict"} <= set(part):
                return f"--replay {path}: malformed: claim {claim['id']} part {i} lacks 'part', 'role' or 'verdict'"
    return None


def _claim_verdict(claim):
    """The claim's verdict re-derived from its parts by the audit's own rule (:func:`socal.verify._core.combine`),
    or None for a claim without parts (its verdict is its check's, re-decided through its rows only)."""
    from ._core import Part, combine
    from .verdicts import Verdict

    if not claim["parts"]:
        return None
    return combine([Part(p["part"], Verdict(p["verdict"]), "", p["role"]) for p in claim["parts"]]).value


def _verdict_source(claim):
    """'derived' when the claim's verdict follows from its rows alone (a rule for the claim, or a rule for each
    part, which combine), 'in part' when some parts have rules, 'read' when none do."""
    targets = {r["target"] for r in claim.get("rules", [])}
    if None in targets or (claim["parts"] and all(p["part"] in targets for p in claim["parts"])):
        return "derived"
    return "in part" if targets else "read"


def replay(path):
    """(ok, report): every recorded comparison of the file re-decided and checked against its outcome; each
    claim's rows counted and hashed against its recorded count and digest (a row deleted or added fails); each
    claim's verdict re-derived from its parts by the audit's combination rule, never read.  A malformed file is
    refused in one line (a ValueError)."""
    from ._core import rule_mismatches
    from .certified import replay_row
    from .verdicts import Verdict

    try:
        doc = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--replay {path}: not readable as JSON ({exc})") from None
    why = _malformed(path, doc)
    if why:
        raise ValueError(why)
    lines, bad, total, sources = [], [], Counter(), Counter()
    others = {c["id"]: c["verdict"] for c in doc["claims"]}  # for parts that report another claim's verdict
    for claim in doc["claims"]:
        cid = claim["id"]
        if len(claim["rows"]) != claim["n_rows"]:
            bad.append(f"{cid}: {len(claim['rows'])} rows where the file records {claim['n_rows']} (a row deleted "
                       f"or added)")
        elif rows_digest(claim["rows"], claim.get("rules")) != claim["digest"]:
            bad.append(f"{cid}: the rows' digest differs from the recorded one (a row or rule edited)")
        try:
            verdicts = {Verdict(claim["verdict"])} | {Verdict(p["verdict"]) for p in claim["parts"]}
        except ValueError as exc:
            bad.append(f"{cid}: {exc}")
            verdicts = None
        if verdicts is not None:
            derived = _claim_verdict(claim)
            if derived is not None and derived != claim["verdict"]:
                bad.append(f"{cid}: recorded verdict {claim['verdict']}, its parts combine to {derived}")
        tags, recorded = Counter(), Counter()
        outcomes = []  # each row's outcome as replay finds it (a recorded-only row's as recorded)
        for i, row in enumerate(claim["rows"]):
            outcomes.append(row["outcome"])
            try:
                now = replay_row(row)
            except Exception as exc:  # a tampered token that no longer parses is a failed replay, named
                bad.append(f"{claim['id']} row {i} ({row['what']}): cannot be re-decided ({type(exc).__name__}: "
                           f"{exc})")
                continue
            if now == "recorded":
                recorded[row["how"]] += 1
                continue
            outcomes[-1] = now
            if now != row["outcome"]:
                bad.append(f"{claim['id']} row {i} ({row['what']}): recorded {row['outcome']}, re-decided {now}")
            else:
                tags[row["how"]] += 1
        beyond = [i for r in claim.get("rules", []) for c in r["clauses"] for i in c[0] if i >= len(outcomes)]
        if beyond:  # a row the rules read is gone: its verdict cannot be re-derived
            bad.append(f"{cid}: a rule reads row {max(beyond)}, and the claim has {len(outcomes)} rows")
        elif verdicts is not None:
            bad += [f"{cid}: {w}" for w in rule_mismatches(claim, outcomes, others)]
        how_v = _verdict_source(claim)
        sources[how_v] += 1
        total.update(tags)
        total.update({f"recorded ({k})": v for k, v in recorded.items()})
        lines.append(f"{claim['id']:<26} {claim['verdict']:<12} verdict {how_v:<10} re-decided {sum(tags.values()):>4} "
                     f"({', '.join(f'{k} {v}' for k, v in sorted(tags.items())) or 'none'}); recorded only "
                     f"{sum(recorded.values())}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(recorded.items()))})"
                                                    if recorded else ""))
    prov = doc["provenance"]
    head = (f"Replay of {path}: {len(doc['claims'])} claims, {prov['mode']} audit by socal {prov['socal']} (commit "
            f"{prov['commit'] or 'unknown'}; sympy {prov['sympy']}, python-flint {prov['python-flint']}).")
    redone = sum(v for k, v in total.items() if not k.startswith("recorded"))
    tail = (f"{redone} comparisons re-decided as recorded; {sum(total.values()) - redone} recorded only "
            f"(a Monte Carlo outcome or a decision certified elsewhere).\nVerdicts: {sources['derived']} of "
            f"{len(doc['claims'])} claims re-derived from their rows (a rule per verdict), {sources['in part']} "
            f"in part (some parts' verdicts read), {sources['read']} read (no rule: stated by the check's argument).")
    if bad:
        tail += f"\nREPLAY FAILS: {len(bad)} finding(s):\n" + "\n".join(
            f"  {b}" for b in bad)
    return not bad, "\n".join([head, ""] + lines + ["", tail])
