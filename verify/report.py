"""Rendering an audit: a terminal table, JSON and Markdown."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np

__all__ = ["to_json", "to_markdown", "to_table", "jsonable"]


def jsonable(x):
    """Evidence to JSON-safe values (sympy and fractions to strings, numpy to Python, inf to a string)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else str(x)
    if isinstance(x, complex):
        return [x.real, x.imag]
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, Fraction):
        return str(x)
    return str(x)


def to_json(results, **meta):
    """The JSON report; each claim's ``numbers`` lists its evidence numbers with their tolerances (the form
    ``socal audit --baseline`` compares against)."""
    from .baseline import numbers

    return json.dumps({**jsonable(meta), "claims": [
        {"id": c.id, "ref": c.ref, "statement": c.statement, "verdict": r.verdict.value, "summary": r.summary,
         "evidence": jsonable(r.evidence), "numbers": numbers(r.evidence, r.tolerances)}
        for c, r in results]}, indent=2)


def _clip(s, width):
    return s if len(s) <= width else s[: width - 3] + "..."


def to_table(results, width=160):
    rows = [(c.id, _clip(c.ref, 38), r.verdict.value, r.summary) for c, r in results]
    w_id = max(len("id"), *(len(r[0]) for r in rows))
    w_ref = max(len("reference"), *(len(r[1]) for r in rows))
    head = f"{'id':<{w_id}}  {'reference':<{w_ref}}  {'verdict':<9}  evidence"
    lines = [head, "-" * min(width, len(head) + 60)]
    rest = max(30, width - w_id - w_ref - 15)
    for cid, ref, v, s in rows:
        lines.append(f"{cid:<{w_id}}  {ref:<{w_ref}}  {v:<9}  {_clip(s, rest)}")
    counts = {}
    for _, r in results:
        counts[r.verdict.value] = counts.get(r.verdict.value, 0) + 1
    lines.append("")
    lines.append("  ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


def to_markdown(results, title="socal audit of 'The Minimax Rate of Second-Order Calibration'"):
    out = [f"# {title}", "", "| id | reference | verdict | evidence |", "| --- | --- | --- | --- |"]
    for c, r in results:
        out.append(f"| `{c.id}` | {c.ref} | **{r.verdict.value}** | {r.summary.replace('|', chr(92) + '|')} |")
    out.append("")
    for c, r in results:
        out += [f"## `{c.id}`: {r.verdict.value}", "", f"*{c.ref}.* {c.statement}", "", r.summary, "",
                "```json", json.dumps(jsonable(r.evidence), indent=2), "```", ""]
    return "\n".join(out)
