"""Verdicts, claims and the registry.

A claim is checked by a function ``check(*, quick, **constants) -> Result`` that takes the constants it verifies as
keyword arguments.  The registry records three sets of arguments for each claim:

* ``paper``: the constants as the paper states them (the audit's run);
* ``wrong``: a deliberately wrong constant or identity (the negative control: the check must say FAILS);
* ``repaired`` (optional): the constant the audit found to hold instead, where the paper's fails (the check must
  then not say FAILS).

Verdicts are always computed by the check, never typed in: the tests run every negative control.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Verdict", "Result", "Claim", "REGISTRY", "claim", "get", "run"]


class Verdict(str, enum.Enum):
    HOLDS = "HOLDS"  # checked
    FAILS = "FAILS"  # a counterexample or a wrong constant
    GAP = "GAP"  # may be true, but the proof as written does not establish it
    VACUOUS = "VACUOUS"  # true, but says nothing at any n a user could have
    UNDECIDED = "UNDECIDED"  # the check could not decide; never a pass

    def __str__(self):
        return self.value


@dataclass
class Result:
    """What a check found: a verdict, a one-line summary and the numbers behind it."""

    verdict: Verdict
    summary: str
    evidence: dict = field(default_factory=dict)


def worst(*verdicts):
    """Combine sub-check verdicts: FAILS > GAP > UNDECIDED > VACUOUS > HOLDS."""
    order = [Verdict.FAILS, Verdict.GAP, Verdict.UNDECIDED, Verdict.VACUOUS, Verdict.HOLDS]
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
        kwargs = {"paper": self.paper, "wrong": self.wrong, "repaired": self.repaired}[which]
        t0 = time.perf_counter()
        try:
            res = self.check(quick=quick, **kwargs)
        except Exception as exc:  # a crashing check decides nothing
            res = Result(Verdict.UNDECIDED, f"check raised {type(exc).__name__}: {exc}", {})
        res.evidence.setdefault("seconds", round(time.perf_counter() - t0, 3))
        return res


REGISTRY: dict[str, Claim] = {}


def claim(id, ref, statement, *, paper, wrong, repaired=None, slow=False):
    """Decorator registering a check function as the claim ``id``."""

    def deco(fn):
        if id in REGISTRY:
            raise ValueError(f"claim id {id!r} registered twice")
        REGISTRY[id] = Claim(id, ref, statement, fn, dict(paper), dict(wrong),
                             None if repaired is None else dict(repaired), slow)
        return fn

    return deco


def get(id):
    _load()
    try:
        return REGISTRY[id]
    except KeyError:
        raise ValueError(f"Unknown claim id {id!r}; known: {', '.join(REGISTRY)}") from None


def _load():
    from . import claims  # noqa: F401  (registers every claim on import)


def run(ids=None, *, quick=False, progress=False):
    """Run the registry (or the claims ``ids``) and return a list of (Claim, Result)."""
    _load()
    chosen = list(REGISTRY.values()) if not ids else [get(i) for i in ids]
    it = chosen
    if progress:
        try:
            from tqdm import tqdm

            it = tqdm(chosen, desc="audit", unit="claim")
        except ImportError:
            pass
    out = []
    for c in it:
        if progress and hasattr(it, "set_postfix_str"):
            it.set_postfix_str(c.id)
        out.append((c, c.run(quick=quick)))
    return out
