"""A pytest plugin that collects registered claims as test items (off unless asked for).

Installed with socal (entry point ``pytest11``: ``socal-claims``), it does nothing unless pytest is run with
``--socal-claims`` (quick checks) or ``--socal-claims=full``.  Then every claim registered with
:func:`socal.verify.claim` (socal's own and those of every package with a ``socal.claims`` entry point) becomes two
items:

* ``socal-claims::<id>``: runs the check with the source's constants.  HOLDS passes; FAILS, GAP, VACUOUS and
  INCONCLUSIVE fail, except the verdicts listed in ``--socal-claims-xfail`` (default: ``GAP,VACUOUS``), which xfail.
* ``socal-claims::<id>::negative-control``: runs it with the deliberately wrong constants; it passes only when the
  check says FAILS (a checker that cannot say FAILS is worthless).

``--socal-claims-only=ID,...`` restricts the claims; ``-k`` works as usual.  Importing this module costs nothing:
the registry (sympy, mpmath, flint) is loaded only when the option is given.
"""

from __future__ import annotations

import pytest

VERDICTS = ("FAILS", "GAP", "VACUOUS", "INCONCLUSIVE")


def pytest_addoption(parser):
    group = parser.getgroup("socal-claims", "socal.verify claims as tests")
    group.addoption("--socal-claims", nargs="?", const="quick", default=None, choices=("quick", "full"),
                    help="collect the registered claims as test items (quick checks; =full for the full ones)")
    group.addoption("--socal-claims-only", default=None, metavar="ID,...", help="only these claim ids")
    group.addoption("--socal-claims-xfail", default=None, metavar="VERDICT,...",
                    help=f"verdicts that xfail instead of failing (any of {', '.join(VERDICTS)}; default GAP,VACUOUS; "
                         f"'none' makes every verdict but HOLDS fail)")
    parser.addini("socal_claims_xfail", "verdicts that xfail instead of failing", default="GAP,VACUOUS")


def _xfail_verdicts(config):
    text = config.getoption("socal_claims_xfail") or config.getini("socal_claims_xfail")
    if text.strip().lower() == "none":
        return set()
    chosen = {v.strip().upper() for v in text.split(",") if v.strip()}
    bad = chosen - set(VERDICTS)
    if bad:
        raise pytest.UsageError(f"--socal-claims-xfail: unknown verdict(s) {sorted(bad)}; choose from "
                                f"{', '.join(VERDICTS)} or 'none'")
    return chosen


class ClaimCollector(pytest.Collector):
    def collect(self):
        from ._core import REGISTRY
        from .registry import PLUGIN_ERRORS, get, load_claims

        load_claims()
        only = self.config.getoption("socal_claims_only")
        ids = [i.strip() for i in only.split(",") if i.strip()] if only else list(REGISTRY)
        for cid in ids:
            try:
                get(cid)
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        for ep, why in PLUGIN_ERRORS.items():
            yield BrokenPluginItem.from_parent(self, name=f"entry-point[{ep}]", why=why)
        for cid in ids:
            yield ClaimItem.from_parent(self, name=cid, cid=cid, which="paper")
            yield ClaimItem.from_parent(self, name=f"{cid}::negative-control", cid=cid, which="wrong")


class ClaimFailed(Exception):
    pass


class ClaimItem(pytest.Item):
    def __init__(self, *, cid, which, **kw):
        super().__init__(**kw)
        self.cid, self.which = cid, which
        self.add_marker(pytest.mark.socal_claim)

    def runtest(self):
        from ._core import Verdict
        from .registry import get

        quick = self.config.getoption("socal_claims") != "full"
        res = get(self.cid).run(quick=quick, which=self.which)
        self.user_properties.append(("verdict", res.verdict.value))
        if self.which == "wrong":
            if res.verdict is not Verdict.FAILS:
                raise ClaimFailed(f"negative control of {self.cid}: fed the wrong constants {get(self.cid).wrong}, "
                                  f"the check said {res.verdict.value}, not FAILS: {res.summary}")
            return
        if res.verdict is Verdict.HOLDS:
            return
        if res.verdict.value in _xfail_verdicts(self.config):
            pytest.xfail(f"{res.verdict.value}: {res.summary}")
        raise ClaimFailed(f"{self.cid} ({get(self.cid).ref}): {res.verdict.value}: {res.summary}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"socal claim {self.name}"


class BrokenPluginItem(pytest.Item):
    def __init__(self, *, why, **kw):
        super().__init__(**kw)
        self.why = why

    def runtest(self):
        raise ClaimFailed(f"a 'socal.claims' entry point could not be loaded: {self.why}")

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, self.name


def pytest_configure(config):
    config.addinivalue_line("markers", "socal_claim: a claim of socal.verify collected by --socal-claims")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    if not config.getoption("socal_claims"):
        return
    _xfail_verdicts(config)  # a bad option is a usage error before anything runs
    collector = ClaimCollector.from_parent(session, name="socal-claims")
    items.extend(collector.collect())
