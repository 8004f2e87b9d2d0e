"""Loading and running the registry of claims: this package's claim modules and every package's under the entry-point
group ``socal.claims``, the audit record, and :func:`run`.  Above the claim modules (which import :mod:`._core`), so
that the registry's table in :mod:`._core` imports none of them."""

from __future__ import annotations

import numpy as np

from ._core import REGISTRY, set_inner_bar

__all__ = ["get", "load_claims", "run", "PLUGIN_ERRORS"]

_RECORD = "socal.audit-record"


def _read_record(path, quick):
    """{claim id: Result} from an audit record (empty when there is none yet)."""
    import os
    import pickle

    from socal import __version__

    if path is None or not os.path.exists(path):
        return {}
    try:
        with open(path, "rb") as fh:
            rec = pickle.load(fh)
    except Exception as exc:
        raise ValueError(f"The audit record {path} cannot be read ({type(exc).__name__}: {exc}); remove it to run "
                         f"afresh.") from None
    if not isinstance(rec, dict) or rec.get("format") != _RECORD:
        raise ValueError(f"{path} is not an audit record; remove it to run afresh.")
    mode = "quick" if quick else "full"
    if rec["mode"] != mode or rec["socal"] != __version__:
        raise ValueError(f"The audit record {path} is from a {rec['mode']} audit of socal {rec['socal']}, not a "
                         f"{mode} audit of socal {__version__}: rerun with the same mode, or remove it.")
    return dict(rec["results"])


def _write_record(path, quick, done):
    import pickle

    from socal import __version__
    from socal.files import atomic_write

    with atomic_write(path, "wb") as fh:
        pickle.dump({"format": _RECORD, "mode": "quick" if quick else "full", "socal": __version__,
                     "results": done}, fh)


def get(id):
    """The registered claim ``id`` (the registry is loaded first, entry points included); an unknown id is a
    ValueError listing the known ones."""
    load_claims()
    try:
        return REGISTRY[id]
    except KeyError:
        raise ValueError(f"Unknown claim id {id!r}; known: {', '.join(REGISTRY)}") from None


_PLUGINS_LOADED = False
PLUGIN_ERRORS: dict[str, str] = {}  # entry point -> why it could not be loaded


def load_claims():
    """Register this package's claims and every package's under the entry-point group ``socal.claims``."""
    global _PLUGINS_LOADED
    from . import claims  # noqa: F401  (registers every claim on import)

    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="socal.claims"):
        try:
            obj = ep.load()  # importing the module registers its claims
            if callable(obj) and not isinstance(obj, type(claims)):
                obj()  # or a function that registers them
        except Exception as exc:  # a broken plugin must not hide the others; the report names it
            PLUGIN_ERRORS[f"{ep.name} = {ep.value}"] = f"{type(exc).__name__}: {exc}"


def _run_claim(cid, quick):
    """One claim's quick or full run, by id (a worker process's job: it loads the registry itself)."""
    load_claims()
    return get(cid).run(quick=quick)


def run(ids=None, *, quick=False, progress=False, record=None, jobs=1):
    """Run the registry (or the claims ``ids``: one id or a non-empty list) and return a list of (Claim, Result).

    With ``progress`` (and tqdm installed) two bars: claims done, and the steps of the running claim's loops.
    ``record``: a path where each finished claim's result is kept (atomically, after each claim).  A rerun with the
    same record after a kill runs only the claims it lacks and returns what an uninterrupted run returns (the
    claims are independent, and each result is kept whole, its seconds included).  A record from the other mode
    (quick or full) or another socal version is refused; claims are matched by id.  The record is a pickle, as
    socal's checkpoints are (:mod:`socal.checkpoint`): resume only from your own.
    ``jobs`` > 1: the claims (independent, each seeded) run in that many worker processes (joblib, the active
    backend), the slow ones dispatched first; the results are the same and come back in registry order.  A claim
    registered in this process alone (not importable by a worker, a test's stand-in) needs ``jobs=1``.
    """
    for name, flag in (("quick", quick), ("progress", progress)):  # a string's truth would decide the run
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"The '{name}' parameter of run must be True or False. Got {flag!r} instead.")
    load_claims()
    if isinstance(ids, str):  # one id (iterating it would read its letters as ids)
        ids = [ids]
    if ids is not None:
        ids = list(dict.fromkeys(ids))  # an id named twice runs once (it was run and counted twice)
        if not ids:  # an empty selection ran every claim
            raise ValueError("The 'ids' parameter of run must name at least one claim; None runs them all.")
    chosen = list(REGISTRY.values()) if ids is None else [get(i) for i in ids]
    it, inner = chosen, None
    if progress:
        try:
            from tqdm import tqdm

            it = tqdm(chosen, desc="audit", unit="claim", position=0)
            inner = tqdm(total=0, desc="", unit="step", position=1, leave=False)
        except ImportError:
            pass
    done = _read_record(record, quick)
    jobs = int(jobs)
    pending = [c for c in chosen if c.id not in done]
    if jobs > 1 and len(pending) > 1:
        from socal.parallel import iter_jobs

        todo = sorted(pending, key=lambda c: not c.slow)  # the slow claims first: the pool's wall time is theirs
        results = {}
        for c, res in zip(todo, iter_jobs(_run_claim, [(c.id, quick) for c in todo], n_jobs=jobs,
                                          progress=progress, desc="audit (claims)")):
            results[c.id] = res
            if record is not None:
                done[c.id] = res
                _write_record(record, quick, done)
        return [(c, done[c.id] if c.id in done else results[c.id]) for c in chosen]
    out = []
    try:
        for c in it:
            if c.id in done:
                out.append((c, done[c.id]))
                continue
            if inner is not None:
                it.set_postfix_str(c.id)
                inner.reset(total=0)
                inner.set_description_str(c.id)
                set_inner_bar(inner)
            out.append((c, c.run(quick=quick)))
            if record is not None:
                done[c.id] = out[-1][1]
                _write_record(record, quick, done)
    finally:
        set_inner_bar(None)
        if inner is not None:
            inner.close()
    return out
