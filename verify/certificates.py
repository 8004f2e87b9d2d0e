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


def write_certificates(results, path, *, mode):
    """Write the certificates of ``results`` (a list of (Claim, Result)) to ``path``, atomically."""
    from socal.files import write_text_atomic

    claims = []
    for c, r in results:
        claims.append({"id": c.id, "ref": c.ref, "verdict": r.verdict.value, "summary": r.summary,
                       "parts": [{"part": p.name, "role": p.role, "verdict": p.verdict.value} for p in r.parts],
                       "provenance": {"arguments": {k: _plain(v) for k, v in c.paper.items()},
                                      "seconds": r.evidence.get("seconds")},
                       "rows": r.certificate})
    write_text_atomic(path, json.dumps({"format": FORMAT, "version": 1, "provenance": provenance(mode),
                                        "claims": claims}, indent=1))


def replay(path):
    """(ok, report): every recorded comparison of the file re-decided and checked against its outcome."""
    from .certified import replay_row

    try:
        doc = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--replay {path}: not readable as JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"--replay {path}: not a file of socal audit --certificates")
    lines, bad, total = [], [], Counter()
    for claim in doc["claims"]:
        tags, recorded = Counter(), Counter()
        for i, row in enumerate(claim["rows"]):
            try:
                now = replay_row(row)
            except Exception as exc:  # a tampered token that no longer parses is a failed replay, named
                bad.append(f"{claim['id']} row {i} ({row['what']}): cannot be re-decided ({type(exc).__name__}: "
                           f"{exc})")
                continue
            if now == "recorded":
                recorded[row["how"]] += 1
            elif now != row["outcome"]:
                bad.append(f"{claim['id']} row {i} ({row['what']}): recorded {row['outcome']}, re-decided {now}")
            else:
                tags[row["how"]] += 1
        total.update(tags)
        total.update({f"recorded ({k})": v for k, v in recorded.items()})
        lines.append(f"{claim['id']:<26} {claim['verdict']:<12} re-decided {sum(tags.values()):>4} "
                     f"({', '.join(f'{k} {v}' for k, v in sorted(tags.items())) or 'none'}); recorded only "
                     f"{sum(recorded.values())}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(recorded.items()))})"
                                                    if recorded else ""))
    prov = doc["provenance"]
    head = (f"Replay of {path}: {len(doc['claims'])} claims, {prov['mode']} audit by socal {prov['socal']} (commit "
            f"{prov['commit'] or 'unknown'}; sympy {prov['sympy']}, python-flint {prov['python-flint']}).")
    redone = sum(v for k, v in total.items() if not k.startswith("recorded"))
    tail = (f"{redone} comparisons re-decided as recorded; {sum(total.values()) - redone} recorded only "
            f"(a Monte Carlo outcome or a decision certified elsewhere).")
    if bad:
        tail += f"\nREPLAY FAILS: {len(bad)} row(s) re-decide otherwise than recorded:\n" + "\n".join(
            f"  {b}" for b in bad)
    return not bad, "\n".join([head, ""] + lines + ["", tail])
