"""Rendering an audit: a terminal table, JSON and Markdown."""

from __future__ import annotations

import json

from .jsonsafe import jsonable  # noqa: F401  (re-exported: socal.verify.report.jsonable)

__all__ = ["to_json", "to_markdown", "to_table", "first_page", "findings", "jsonable"]


_ORDER = ("FAILS", "GAP", "INCONCLUSIVE", "VACUOUS", "HOLDS")


def _counts(results):
    counts = {v: 0 for v in _ORDER}
    for _, r in results:
        counts[r.verdict.value] += 1
    return counts


def _parts(r):
    return [{"part": p.name, "role": p.role, "verdict": p.verdict.value, "summary": p.summary} for p in r.parts]


FINDINGS_RULE = ("ordered by their effect on the paper's conclusions: its results first (propositions, corollaries, "
                 "the sections' rate table and experiments), then the lemmas and proof steps they rest on, then "
                 "properties, remarks and appendix details; within each, FAILS, GAP, INCONCLUSIVE, VACUOUS")


def effect_tier(ref):
    """0 for a result of the paper (its ref names a proposition, a corollary or a section), 1 for a lemma or a proof
    step, 2 for the rest (properties, remarks, appendix details): a lemma's failure reaches the conclusions only
    through the results that use it, whose own verdicts already carry it (:data:`FINDINGS_RULE`)."""
    head = ref.lstrip().lower()
    if head.startswith(("proposition", "prop.", "corollary", "section", "theorem")):
        return 0
    if head.startswith(("lemma", "proof")):
        return 1
    return 2


def findings(results):
    """The findings a reader needs first: every claim that does not simply hold, by :data:`FINDINGS_RULE`, each with
    its failing parts, its decisive numbers (the summary) and the repair."""
    out = []
    ranked = sorted((effect_tier(c.ref), _ORDER.index(r.verdict.value), i) for i, (c, r) in enumerate(results)
                    if r.verdict.value != "HOLDS")
    for _, _, i in ranked:
        c, r = results[i]
        bad = [p for p in r.parts if p.verdict.value != "HOLDS"]
        out.append({"id": c.id, "ref": c.ref, "verdict": r.verdict.value, "summary": r.summary,
                    "parts": [f"{p.name}: {p.verdict.value} ({p.summary})" for p in bad], "repair": r.repair})
    return out


def legend_lines():
    from ._core import LEGEND

    return [f"  {v.value:<12} {text}" for v, text in LEGEND.items()]


def to_json(results, **meta):
    """The JSON report: the verdict counts, the legend, the findings, and every claim with its parts; each claim's
    ``numbers`` lists its evidence numbers with their tolerances (the form ``socal audit --baseline`` compares
    against)."""
    from ._core import LEGEND
    from .baseline import numbers

    return json.dumps({**jsonable(meta), "counts": _counts(results),
                       "legend": {v.value: text for v, text in LEGEND.items()}, "findings": findings(results),
                       "claims": [
        {"id": c.id, "ref": c.ref, "statement": c.statement, "verdict": r.verdict.value, "summary": r.summary,
         "parts": _parts(r), "repair": r.repair, "evidence": jsonable(r.evidence),
         "numbers": numbers(r.evidence, r.tolerances)}
        for c, r in results]}, indent=2)


def first_page(results, width=118):
    """The report's first page: counts by verdict, the legend, then the findings, most consequential first."""
    import textwrap

    counts = _counts(results)
    lines = [f"{len(results)} claims: " + ", ".join(f"{counts[v]} {v}" for v in _ORDER), "", "Verdicts:"]
    lines += legend_lines()
    found = findings(results)
    if found:
        lines += [""] + textwrap.wrap(f"Findings, {FINDINGS_RULE}:", width)
    for f in found:
        lines += textwrap.wrap(f"{f['verdict']} {f['id']} ({f['ref']}): {f['summary']}", width,
                               initial_indent="- ", subsequent_indent="  ")
        for part in f["parts"]:
            lines += textwrap.wrap(part, width, initial_indent="    part ", subsequent_indent="      ")
        if f["repair"]:
            lines += textwrap.wrap(f["repair"], width, initial_indent="    repair: ", subsequent_indent="      ")
    return "\n".join(lines)


def _clip(s, width):
    return s if len(s) <= width else s[: width - 3] + "..."


def to_table(results, width=160):
    rows = [(c.id, _clip(c.ref, 38), r.verdict.value, r.summary) for c, r in results]
    w_id = max(len("id"), *(len(r[0]) for r in rows))
    w_ref = max(len("reference"), *(len(r[1]) for r in rows))
    head = f"{'id':<{w_id}}  {'reference':<{w_ref}}  {'verdict':<12}  evidence"
    lines = [head, "-" * min(width, len(head) + 60)]
    rest = max(30, width - w_id - w_ref - 15)
    for cid, ref, v, s in rows:
        lines.append(f"{cid:<{w_id}}  {ref:<{w_ref}}  {v:<12}  {_clip(s, rest)}")
    counts = _counts(results)
    lines.append("")
    lines.append("  ".join(f"{k}: {counts[k]}" for k in _ORDER))
    return "\n".join(lines)


def to_markdown(results, title="socal audit of 'The Minimax Rate of Second-Order Calibration'"):
    out = [f"# {title}", "", "```text", first_page(results), "```", "",
           "| id | reference | verdict | evidence |", "| --- | --- | --- | --- |"]
    for c, r in results:
        out.append(f"| `{c.id}` | {c.ref} | **{r.verdict.value}** | {r.summary.replace('|', chr(92) + '|')} |")
    out.append("")
    for c, r in results:
        out += [f"## `{c.id}`: {r.verdict.value}", "", f"*{c.ref}.* {c.statement}", "", r.summary, ""]
        out += [f"* {p.role} *{p.name}*: **{p.verdict.value}**. {p.summary}" for p in r.parts]
        if r.repair:
            out += ["", f"Repair: {r.repair}"]
        out += ["", "```json", json.dumps(jsonable(r.evidence), indent=2), "```", ""]
    return "\n".join(out)
