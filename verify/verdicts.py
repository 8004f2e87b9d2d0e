"""The audit's verdicts: the one vocabulary every check, certificate and report uses (below every other module of
socal.verify, so that each can import it)."""

from __future__ import annotations

import enum

__all__ = ["Verdict"]


class Verdict(str, enum.Enum):
    """The audit's vocabulary; :data:`LEGEND` says what each word means, and every report prints it."""

    HOLDS = "HOLDS"
    FAILS = "FAILS"
    GAP = "GAP"
    VACUOUS = "VACUOUS"
    INCONCLUSIVE = "INCONCLUSIVE"

    def __str__(self):
        return self.value
