"""Pinned numbers: compare an audit with a stored report (``socal audit --baseline FILE.json``).

Every number in a claim's evidence carries a tolerance, written beside it in the JSON report (``numbers``:
path -> value, rel_tol, abs_tol).  The default is rel 1e-6 and abs 1e-12: the checks are deterministic (seeded Monte
Carlo, certified or exact arithmetic), so a number that moves further than round-off between library versions
is a changed computation.  A check may loosen the tolerance of chosen numbers with ``Result.tolerances`` (a dict
of fnmatch patterns over the paths -> relative tolerance).  Wall-clock times ('seconds') carry none and are not
compared.  A verdict change, a number that moved beyond its tolerance, or one that disappeared counts as a change;
``socal audit`` then exits with status 1.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass

from .jsonsafe import jsonable

__all__ = ["DEFAULT_REL_TOL", "DEFAULT_ABS_TOL", "numbers", "Change", "compare", "format_changes"]

DEFAULT_REL_TOL = 1e-6
DEFAULT_ABS_TOL = 1e-12
_UNTIMED = ("seconds",)


def _flatten(x, prefix=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, x


def numbers(evidence, tolerances=None):
    """{path: {"value", "rel_tol", "abs_tol"}} for every finite number in ``evidence`` (JSON-safe), times excluded."""
    out = {}
    for path, v in _flatten(jsonable(evidence)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            continue
        if path.split(".")[-1].split("[")[0] in _UNTIMED:
            continue
        rel = DEFAULT_REL_TOL
        for pattern, tol in (tolerances or {}).items():
            if fnmatch.fnmatchcase(path, pattern):
                rel = float(tol)
        out[path] = {"value": v, "rel_tol": rel, "abs_tol": DEFAULT_ABS_TOL}
    return out


@dataclass(frozen=True)
class Change:
    """One difference from the baseline: kind is 'verdict', 'moved', 'missing' (a change) or 'new' (a note)."""

    kind: str
    claim: str
    path: str = ""
    old: object = None
    new: object = None
    tolerance: float | None = None

    @property
    def counts(self):
        return self.kind != "new"

    def __str__(self):
        if self.kind == "verdict":
            return f"{self.claim}: verdict {self.old} -> {self.new}"
        if self.kind == "moved":
            return (f"{self.claim}: {self.path} moved {self.old!r} -> {self.new!r} (tolerance {self.tolerance:g} "
                    f"relative)")
        if self.kind == "missing":
            return f"{self.claim}: {self.path or 'the claim'} is in the baseline but not in this run"
        return f"{self.claim}: new{' number ' + self.path if self.path else ' claim'} (not in the baseline)"


def compare(baseline, results):
    """Changes of ``results`` (a list of (Claim, Result)) against ``baseline`` (a parsed JSON report).

    Only claims present in both are compared number by number; claims of the baseline that were not run (``--only``)
    are skipped, claims not in the baseline are noted as 'new'.
    """
    if not isinstance(baseline, dict) or not isinstance(baseline.get("claims"), list):
        raise ValueError("The baseline must be a JSON report written by 'socal audit --json' (a dict with 'claims').")
    old = {c["id"]: c for c in baseline["claims"]}
    changes = []
    for claim, res in results:
        if claim.id not in old:
            changes.append(Change("new", claim.id))
            continue
        b = old[claim.id]
        if b["verdict"] != res.verdict.value:
            changes.append(Change("verdict", claim.id, old=b["verdict"], new=res.verdict.value))
        then = b.get("numbers") or numbers(b.get("evidence", {}))
        now = numbers(res.evidence, getattr(res, "tolerances", None))
        for path, rec in then.items():
            if path not in now:
                changes.append(Change("missing", claim.id, path, old=rec["value"]))
                continue
            a, v = rec["value"], now[path]["value"]
            rel, ab = rec.get("rel_tol", DEFAULT_REL_TOL), rec.get("abs_tol", DEFAULT_ABS_TOL)
            if abs(a - v) > rel * max(abs(a), abs(v)) + ab:
                changes.append(Change("moved", claim.id, path, old=a, new=v, tolerance=rel))
        for path in now.keys() - then.keys():
            changes.append(Change("new", claim.id, path))
    return changes


def format_changes(changes, compared):
    """The lines ``socal audit --baseline`` prints."""
    real = [c for c in changes if c.counts]
    nums, claims = compared[1], compared[0]
    head = (f"baseline: {nums} number{'s' * (nums != 1)} in {claims} claim{'s' * (claims != 1)} compared; "
            f"{sum(c.kind == 'verdict' for c in real)} verdict change(s), {sum(c.kind == 'moved' for c in real)} "
            f"moved, {sum(c.kind == 'missing' for c in real)} missing, {len(changes) - len(real)} new")
    return "\n".join([head] + [f"  {c}" for c in changes])


def load(path):
    """A stored report (``socal audit --json``), checked: a readable JSON object with a list of claims."""
    try:
        with open(path) as fh:
            report = json.load(fh)
    except OSError as exc:
        raise ValueError(f"--baseline {path}: cannot be read ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"--baseline {path}: not a JSON report ({exc})") from None
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
        raise ValueError(f"--baseline {path}: not a report of socal audit --json (no list of claims)")
    return report
