"""Verdicts, claims and the registry's table (loading and running the registry: :mod:`socal.verify.registry`).

A claim is checked by a function ``check(*, quick, **constants) -> Result`` that takes the constants it verifies as
keyword arguments.  The registry records three sets of arguments for each claim:

* ``paper``: the constants as the paper states them (the audit's run);
* ``wrong``: a deliberately wrong constant or identity (the negative control: the check must say FAILS);
* ``repaired`` (optional): the constant the audit found to hold instead, where the paper's fails (the check must
  then not say FAILS).

Verdicts are always computed by the check, never typed in: the tests run every negative control.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from .verdicts import Verdict

__all__ = ["Verdict", "LEGEND", "Part", "combine", "Result", "Claim", "REGISTRY", "claim", "unregister", "steps",
           "rule_mismatches"]


LEGEND = {
    Verdict.HOLDS: "true as stated: checked exactly, certified, or (Monte Carlo) within its stated error",
    Verdict.FAILS: "false as stated, with a certified counterexample or an exact computation",
    Verdict.GAP: "not refuted, and the paper's argument does not establish it (a step fails or is missing)",
    Verdict.VACUOUS: "true, but says nothing at the stated settings (e.g. a bound above the quantity's whole range)",
    Verdict.INCONCLUSIVE: "the numerics cannot decide (within round-off, or a check that could not finish); never a "
                          "pass",
}


@dataclass
class Part:
    """One part of a claim with its own verdict: a step of the paper's argument (``role='step'``) or the statement's
    conclusion (``role='conclusion'``)."""

    name: str
    verdict: Verdict
    summary: str
    role: str = "step"


def combine(parts):
    """A claim's verdict from its parts, by the stated rule:

    * a conclusion that FAILS or is INCONCLUSIVE decides the claim;
    * otherwise, if a step FAILS, has a GAP or is INCONCLUSIVE, the claim is GAP (the conclusion is not refuted, and
      the argument as written does not establish it);
    * otherwise the claim is its conclusions' worst verdict (HOLDS, or VACUOUS).

    Without a conclusion part, the worst part decides (FAILS > GAP > INCONCLUSIVE > VACUOUS > HOLDS)."""
    parts = list(parts)
    if not parts:
        raise ValueError("combine needs at least one Part: a claim with no parts has no verdict")
    conclusions = [p.verdict for p in parts if p.role == "conclusion"]
    steps = [p.verdict for p in parts if p.role != "conclusion"]
    if not conclusions:
        return worst(*steps)
    c = worst(*conclusions)
    if c in (Verdict.FAILS, Verdict.INCONCLUSIVE):
        return c
    if any(v in (Verdict.FAILS, Verdict.GAP, Verdict.INCONCLUSIVE) for v in steps):
        return Verdict.GAP
    return c


@dataclass
class Result:
    """What a check found: a verdict, a one-line summary and the numbers behind it."""

    verdict: Verdict
    summary: str
    evidence: dict = field(default_factory=dict)
    tolerances: dict = field(default_factory=dict)  # fnmatch pattern over evidence paths -> relative tolerance
    parts: list = field(default_factory=list)  # Part: a claim whose parts differ reports each (combine() decides)
    repair: str = ""  # the suggested repair, where the claim does not hold as stated
    certificate: list = field(default_factory=list)  # the deciding comparisons as data (certified.Decision.as_dict)
    rules: list = field(default_factory=list)  # how the rows decide verdicts (certified.Ledger.decide), row indices
    # into ``certificate``


def worst(*verdicts):
    """Combine sub-check verdicts: FAILS > GAP > INCONCLUSIVE > VACUOUS > HOLDS."""
    order = [Verdict.FAILS, Verdict.GAP, Verdict.INCONCLUSIVE, Verdict.VACUOUS, Verdict.HOLDS]
    return min(verdicts, key=order.index)


@dataclass(frozen=True)
class Claim:
    id: str
    ref: str
    statement: str
    check: Callable[..., Result]
    paper: dict
    wrong: dict
    repaired: dict | None = None
    slow: bool = False  # the full (non-quick) check takes minutes

    def run(self, *, quick=False, which="paper"):
        """Run the check with the arguments ``which`` names ('paper', 'wrong': the negative control, 'repaired'): a
        :class:`Result`, its seconds in the evidence.  A check that raises decides nothing: it gives INCONCLUSIVE,
        with the error in the summary and in ``evidence['error']`` (the audit names such claims and exits 2)."""
        from . import certified

        kwargs = {"paper": self.paper, "wrong": self.wrong, "repaired": self.repaired}[which]
        t0 = time.perf_counter()
        with certified.collecting() as ledgers:  # every ledger the check makes joins its certificate
            try:
                res = self.check(quick=quick, **kwargs)
            except Exception as exc:  # a crashing check decides nothing; the audit names it, its exit status too
                res = Result(Verdict.INCONCLUSIVE, f"check raised {type(exc).__name__}: {exc}",
                             {"error": f"{type(exc).__name__}: {exc}"})
                for led in ledgers:  # its rows are kept; its rules, for verdicts it never gave, are not
                    led.rules = []
        res.certificate = [row.as_dict() for led in ledgers for row in led.rows]
        res.rules, offset = [], 0
        for led in ledgers:
            res.rules += [{**r, "clauses": [[[i + offset for i in c[0]], *c[1:]] for c in r["clauses"]]}
                          for r in led.rules]
            offset += len(led.rows)
        wrong = rule_mismatches(res, [row["outcome"] for row in res.certificate])
        if wrong:  # a check whose stated rule and verdict disagree is a bug in the check: it decides nothing
            res = Result(Verdict.INCONCLUSIVE, f"check's rules disagree with its verdicts: {'; '.join(wrong)}",
                         {"error": "; ".join(wrong)}, certificate=res.certificate, rules=res.rules)
        res.evidence.setdefault("seconds", round(time.perf_counter() - t0, 3))
        return res


def rule_mismatches(result_or_claim, outcomes, others=None):
    """Where a rule's verdict (:func:`socal.verify.certified.rule_verdict` over ``outcomes``) differs from the
    verdict it decides: the claim's own (target None) or a part's, in a :class:`Result` or a certificate's claim
    (a dict).  A rule ``same_as`` another claim takes that claim's verdict from ``others`` (id -> verdict, the
    file's), where it is there.  Each finding is one line; a rule naming no part is one too."""
    from .certified import rule_verdict

    if isinstance(result_or_claim, dict):
        rules, claim_v = result_or_claim.get("rules", []), result_or_claim["verdict"]
        parts = {p["part"]: p["verdict"] for p in result_or_claim["parts"]}
    else:
        rules, claim_v = result_or_claim.rules, result_or_claim.verdict.value
        parts = {p.name: p.verdict.value for p in result_or_claim.parts}
    out = []
    for r in rules:
        now = rule_verdict(r["clauses"], outcomes, r["holds"])
        if r.get("same_as") and others is not None and r["same_as"] in others:
            now = others[r["same_as"]]
        target = r["target"]
        said = claim_v if target is None else parts.get(target)
        if said is None:
            out.append(f"a rule decides the part {target!r}, which the claim does not have")
        elif now != said:
            out.append(f"{'the claim' if target is None else repr(target)}: recorded {said}, its rows give {now}")
    return out


REGISTRY: dict[str, Claim] = {}

def claim(id, ref, statement, *, paper, wrong, repaired=None, slow=False):
    """Register a check function as the claim ``id`` (public: ``socal.verify.claim``).

    Parameters
    ----------
    id : str
        Unique id (letters, digits, '-', '_', '.'); another package should prefix its own (``"mypkg-lemma-2"``).
    ref : str
        Where the claim is stated (``"Lemma 2, Section 3"``).
    statement : str
        What is claimed, in words.
    paper : dict
        Keyword arguments of the check as the source states them (the audit's run).
    wrong : dict
        A deliberately wrong version (the negative control): the check must return FAILS with it.
    repaired : dict, optional
        Arguments that hold where ``paper``'s fail.
    slow : bool
        The full (non-quick) check takes minutes.

    The decorated function is called as ``check(*, quick, **paper)`` and returns a :class:`Result`.  Registration
    happens at import; a package makes its module's claims join ``socal audit`` and the pytest plugin with an entry
    point in the group ``socal.claims`` naming that module (see docs/audit.md "Claims of your own").

    Examples
    --------
    >>> from socal.verify import Result, Verdict, claim
    >>> @claim("example-sqrt2", "a note", "sqrt(2) < 1.5", paper={"bound": 1.5}, wrong={"bound": 1.4})
    ... def sqrt2(*, quick=False, bound):
    ...     ok = 2 ** 0.5 < bound
    ...     return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"sqrt(2) = {2 ** 0.5:.6f}", {"sqrt2": 2 ** 0.5})
    >>> from socal.verify import get, unregister
    >>> get("example-sqrt2").run().verdict.value, get("example-sqrt2").run(which="wrong").verdict.value
    ('HOLDS', 'FAILS')
    >>> unregister("example-sqrt2")
    """
    if not isinstance(id, str) or not id or not all(ch.isalnum() or ch in "-_." for ch in id):
        raise ValueError(f"The 'id' parameter of claim must be a non-empty string of letters, digits, '-', '_' and "
                         f"'.'. Got {id!r} instead.")
    for name, val in (("paper", paper), ("wrong", wrong)):
        if not isinstance(val, dict):
            raise ValueError(f"The '{name}' parameter of claim {id!r} must be a dict of keyword arguments of the "
                             f"check. Got {type(val).__name__} instead.")
    if dict(wrong) == dict(paper):
        raise ValueError(f"The 'wrong' parameter of claim {id!r} must differ from 'paper': it is the negative "
                         f"control, which the check must reject.")

    def deco(fn):
        if id in REGISTRY:
            old = REGISTRY[id].check
            raise ValueError(f"claim id {id!r} registered twice ({getattr(old, '__module__', '?')}."
                             f"{getattr(old, '__qualname__', '?')} and {fn.__module__}.{fn.__qualname__})")
        REGISTRY[id] = Claim(id, ref, statement, fn, dict(paper), dict(wrong),
                             None if repaired is None else dict(repaired), slow)
        return fn

    return deco


def unregister(id):
    """Remove the claim ``id`` from the registry (for tests and interactive sessions)."""
    REGISTRY.pop(id, None)


_INNER = None  # the audit's within-claim progress bar while run(progress=True) is running


def set_inner_bar(bar):
    """Set (or clear, with None) the within-claim progress bar that :func:`steps` moves: the registry's ``run``
    sets it around each claim."""
    global _INNER
    _INNER = bar


def steps(iterable, total=None, desc=None):
    """Iterate ``iterable``, moving the audit's within-claim progress bar one step per item.

    A check wraps its long loops in this (the Monte Carlo harness wraps its replicates), so ``socal audit`` shows
    progress inside a claim, not only between claims.  Outside an audit with a progress bar it is the plain iterable.
    """
    bar = _INNER
    if bar is None:
        yield from iterable
        return
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    bar.reset(total=total)
    if desc:
        bar.set_description_str(desc)
    for item in iterable:
        yield item
        bar.update(1)
