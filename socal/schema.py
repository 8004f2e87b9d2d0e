"""The saved form of a recalibrator (``to_dict`` / ``from_dict``): its format, and the checks a saved map passes
before anything is rebuilt from it.

A saved recalibrator is a JSON-safe dict: ``format`` (``"socal.recalibrator"``), ``version``, ``class``, the
constructor's ``params``, the fitted ``map`` (degree, ndim, alpha and the (degree+1)^ndim x R coefficients),
``n_samples_fit`` and, optionally (maps saved before they were recorded have none), ``fit_rows``, ``fit_sketch``
and ``fit_key_bits``: the fingerprint of the rows the map was fitted on, its sketch of their keys
(:class:`socal.rowkeys.RowsFingerprint`, checked where they are read) and the keys' rule (the mantissa bits they
read, :data:`socal.rowkeys.KEY_BITS`; absent in maps saved while the keys read exact bits, whose fingerprint is then
dropped on reading, with a warning), or null.
:func:`check_saved` checks keys, types, ranges, shapes and finiteness, and a ValueError names the
field at fault: a file that was cut, edited or written by another version is refused, never half-read.  Nothing read
is evaluated.
"""

from __future__ import annotations

import math
from typing import Any

from .degrees import MAX_DEGREE

__all__ = ["FORMAT", "FORMAT_VERSION", "check_saved"]

FORMAT = "socal.recalibrator"
FORMAT_VERSION = 1


def _is_int(x, lo, hi):
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


class _Described(str):
    """A description printed as it is in an error message (its repr is the text, unquoted)."""

    def __repr__(self):
        return str(self)


def _is_real(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_saved(d: Any, cls_name: str, param_names: tuple, R: int) -> tuple[dict, dict, int]:
    """(params, map, n_samples_fit) of a saved recalibrator of class ``cls_name`` with ``R`` responses, after the
    checks of the module docstring."""
    where = f"{cls_name}.from_dict"

    def bad(field, rule, got):
        return ValueError(f"The field '{field}' of {where} must be {rule}. Got {got!r} instead.")

    def keys_of(x):  # a dict is described by its keys, anything else by its value
        return _Described(f"a dict with the keys {sorted(x)}") if isinstance(x, dict) else x

    if not isinstance(d, dict):
        raise bad("d", "a dict (the output of to_dict)", type(d).__name__)
    missing = [k for k in ("format", "version", "class", "params", "map", "n_samples_fit") if k not in d]
    if missing:
        raise ValueError(f"{where}: field(s) {missing} missing (not the output of to_dict, or cut).")
    if d["format"] != FORMAT:
        raise bad("format", repr(FORMAT), d["format"])
    if d["version"] != FORMAT_VERSION:
        raise bad("version", f"{FORMAT_VERSION} (this socal's format)", d["version"])
    if d["class"] != cls_name:
        raise bad("class", repr(cls_name), d["class"])
    params = d["params"]
    if isinstance(params, dict) and "alpha" in params and "ridge" not in params:
        # a map saved before the ridge was renamed (issue 74): the same value under its former name
        params = {("ridge" if k == "alpha" else k): v for k, v in params.items()}
    if not isinstance(params, dict) or set(params) != set(param_names):
        raise bad("params", f"a dict with exactly the keys {list(param_names)}", keys_of(params))
    nf = d["n_samples_fit"]
    if isinstance(nf, bool) or not isinstance(nf, int) or nf < 1:
        raise bad("n_samples_fit", "an int >= 1", nf)
    checks = {"ndim": lambda x: x in (1, 2) and not isinstance(x, bool),
              "h": lambda x: x is None or (_is_real(x) and 0 < x <= 1e6)
              or (isinstance(x, list) and len(x) == 2 and all(_is_real(e) and 0 < e <= 1e6 for e in x)),
              "degree": lambda x: x is None or x == "paper" or _is_int(x, 0, MAX_DEGREE)
              or (isinstance(x, list) and len(x) > 0 and all(_is_int(e, 0, MAX_DEGREE) for e in x)),
              "ridge": lambda x: x is None or (_is_real(x) and 0 <= x <= 1e6)
              or (isinstance(x, list) and len(x) > 0 and all(_is_real(e) and 0 <= e <= 1e6 for e in x)),
              "folds": lambda x: x is None or _is_int(x, 2, 100), "max_degree": lambda x: _is_int(x, 0, MAX_DEGREE),
              "rng": lambda x: x is None or _is_int(x, 0, 2**63 - 1)}
    for key, ok in checks.items():
        if not ok(params[key]):
            raise bad(f"params.{key}", "of the type and range the constructor takes", params[key])
    mp = d["map"]
    if not isinstance(mp, dict) or set(mp) != {"degree", "ndim", "alpha", "beta"}:
        raise bad("map", "a dict with keys degree, ndim, alpha, beta", keys_of(mp))
    if not _is_int(mp["degree"], 0, MAX_DEGREE):
        raise bad("map.degree", f"an int in [0, {MAX_DEGREE}]", mp["degree"])
    if mp["ndim"] != params["ndim"] or isinstance(mp["ndim"], bool):
        raise bad("map.ndim", f"equal to params.ndim ({params['ndim']})", mp["ndim"])
    if not (_is_real(mp["alpha"]) and 0 <= mp["alpha"] <= 1e6):
        raise bad("map.alpha", "a float in [0, 1e6]", mp["alpha"])
    size = (mp["degree"] + 1) ** mp["ndim"]
    beta = mp["beta"]
    if not (isinstance(beta, list) and len(beta) == size
            and all(isinstance(row, list) and len(row) == R and all(_is_real(x) for x in row) for row in beta)):
        if isinstance(beta, list) and len(beta) == size:  # the right length: name the first row that is wrong
            i = next(i for i, row in enumerate(beta)
                     if not (isinstance(row, list) and len(row) == R and all(_is_real(x) for x in row)))
            got = f"row {i} = {beta[i]!r}"
        else:
            got = f"{type(beta).__name__} of length {len(beta) if isinstance(beta, list) else '?'}"
        raise bad("map.beta", f"a list of {size} rows of {R} finite numbers ((degree+1)^ndim coefficients per "
                  f"response)", _Described(got))
    return params, mp, nf
