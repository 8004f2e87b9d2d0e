"""socal audit's record: a killed audit resumes with only the missing claims, and a claim that raises is named
(issue 63)."""

import json
import pickle

import pytest

from socal.verify import _core, registry
from socal.verify.report import to_json

FAST = ["platt-exact", "remark-average-w1", "aux-lipschitz", "step2-constants", "bandwidth-axes", "step5-range",
        "degree-rule", "main-bound-explicit"]


class Killed(BaseException):
    """What a SIGKILL is to the loop: nothing a claim's own error handling catches."""


_REAL_RUN = _core.Claim.run


def _kill_at(monkeypatch, claim_id, calls):
    real = _REAL_RUN

    def run(self, **kw):
        calls.append(self.id)
        if self.id == claim_id:
            raise Killed()
        return real(self, **kw)

    monkeypatch.setattr(_core.Claim, "run", run)


def test_a_killed_audit_reruns_only_the_missing_claims_and_reports_the_same(tmp_path, monkeypatch):
    whole = to_json(registry.run(FAST, quick=True))
    record = tmp_path / "audit.rec"
    calls = []
    _kill_at(monkeypatch, FAST[5], calls)
    with pytest.raises(Killed):
        registry.run(FAST, quick=True, record=str(record))
    with open(record, "rb") as fh:
        assert sorted(pickle.load(fh)["results"]) == sorted(FAST[:5])
    calls.clear()
    _kill_at(monkeypatch, None, calls)
    resumed = registry.run(FAST, quick=True, record=str(record))
    assert calls == FAST[5:]  # the five recorded claims were not run again
    # the same report, but for the per-claim seconds of the claims that ran twice (measured, not computed)
    strip = lambda text: [{k: v for k, v in c.items() if k not in ("evidence", "numbers")} | {
        "evidence": {k: v for k, v in c["evidence"].items() if k != "seconds"}} for c in json.loads(text)["claims"]]
    assert strip(to_json(resumed)) == strip(whole)
    # and a finished record gives back every result, seconds included, without running anything
    calls.clear()
    assert to_json(registry.run(FAST, quick=True, record=str(record))) == to_json(resumed) and calls == []


def test_a_record_from_the_other_mode_is_refused(tmp_path):
    record = tmp_path / "audit.rec"
    registry.run(FAST[:1], quick=True, record=str(record))
    with pytest.raises(ValueError, match="from a quick audit of socal .* not a full audit"):
        registry.run(FAST[:1], quick=False, record=str(record))
    (tmp_path / "junk").write_bytes(b"not a record")
    with pytest.raises(ValueError, match="cannot be read"):
        registry.run(FAST[:1], quick=True, record=str(tmp_path / "junk"))


def test_a_claim_that_raises_is_named_and_the_exit_status_says_so(tmp_path, monkeypatch, capsys):
    """One claim's check raises: it is reported INCONCLUSIVE with its error, every other claim still runs, and
    `socal audit` exits with status 2.  Negative control: the same claims without the error exit 0."""
    from socal.cli import main

    args = ["audit", "--quick", "--only", ",".join(FAST[:3]), "--no-progress", "--jobs", "1"]  # the patch is here
    assert main(args) == 0
    capsys.readouterr()
    claim = registry.get(FAST[1])

    def broken(**kw):
        raise ZeroDivisionError("a bug in the check")

    monkeypatch.setitem(_core.REGISTRY, FAST[1], _core.Claim(**{**claim.__dict__, "check": broken}))
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert f"1 claim(s) raised an error (reported INCONCLUSIVE, with the error): {FAST[1]}" in err
    assert "ZeroDivisionError: a bug in the check" in out
    results = registry.run(FAST[:3], quick=True)
    assert [r.verdict.value for _, r in results][1] == "INCONCLUSIVE"
    assert all("error" not in r.evidence for i, (_, r) in enumerate(results) if i != 1)


def test_claims_in_worker_processes_give_the_same_report():
    """jobs=2 runs the claims in two worker processes, the slow first: the same verdicts, summaries and numbers,
    in registry order (only the measured seconds differ)."""
    strip = lambda text: [{k: v for k, v in c.items() if k not in ("evidence", "numbers")} | {
        "evidence": {k: v for k, v in c["evidence"].items() if k != "seconds"}} for c in json.loads(text)["claims"]]
    one = registry.run(FAST, quick=True)
    two = registry.run(FAST, quick=True, jobs=2)
    assert [c.id for c, _ in two] == FAST
    assert strip(to_json(two)) == strip(to_json(one))
