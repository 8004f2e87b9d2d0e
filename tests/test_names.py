"""One meaning per public name (issue 74): ``ridge`` for the fit's relative ridge (``alpha``, its former name, still
taken with a FutureWarning), ``rng=None`` a fixed seed in every function, and the table of every public parameter
name in docs/parameters.md."""

import inspect
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import socal
from socal._validation import NONE_SEED

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sample():
    return socal.synthetic.toy_population().sample(1500, h=1 / 16, rng=0)


def _caught(fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in got if issubclass(w.category, FutureWarning)]


@pytest.mark.parametrize("call", ["ce2", "ce1", "calibration_functions", "reliability"])
def test_alpha_is_the_ridge_under_its_former_name_with_a_warning_at_the_callers_line(sample, call):
    m, v, y = sample
    fns = {"ce2": lambda **kw: socal.ce2(m, v, y, degree=4, debias=False, **kw).estimate,
           "ce1": lambda **kw: socal.ce1(m, y, degree=4, debias=False, **kw).estimate,
           "calibration_functions": lambda **kw: socal.calibration_functions(m, v, y, degree=4, **kw)(m, v)[1],
           "reliability": lambda **kw: socal.plot.reliability(m, v, y, degree=4, n_boot=0, **kw).eta1}
    fn = fns[call]
    want, quiet = _caught(lambda: fn(ridge=1e-2))
    got, said = _caught(lambda: fn(alpha=1e-2))
    assert quiet == []  # the control: the new name says nothing
    assert np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)
    assert len(said) == 1 and "renamed 'ridge'" in str(said[0].message) and "not a significance level" in str(
        said[0].message)
    assert said[0].filename == __file__  # the warning points at the user's line, not into socal
    assert not np.array_equal(np.asarray(fn(ridge=1.0)), np.asarray(want))  # the value is read: another ridge differs
    with pytest.raises(ValueError, match="'alpha' parameter of .* former name of 'ridge'; pass 'ridge' alone"):
        fn(ridge=1e-2, alpha=1e-2)


def test_renamed_attributes_warn_and_agree(sample):
    m, v, y = sample
    res = socal.ce2(m, v, y, degree=4, ridge=1e-3, debias=False)
    cf = socal.calibration_functions(m, v, y, degree=4, ridge=1e-3)
    for obj, old, new in ((res, "alpha", "ridge"), (cf, "alpha", "ridge"), (res.selection, "alphas", "ridges")):
        value, said = _caught(lambda: getattr(obj, old))
        assert value == getattr(obj, new) and len(said) == 1 and f"renamed {type(obj).__name__}.{new}" in str(
            said[0].message)
    assert res.to_dict()["ridge"] == 1e-3 and "alpha" not in res.to_dict()


@pytest.mark.parametrize("cls", [socal.SecondOrderPlatt, socal.FirstOrderPlatt])
def test_recalibrators_take_alpha_at_fit_and_save_the_ridge(sample, cls):
    m, v, y = sample
    new = cls(ndim=2, degree=3, ridge=1e-2).fit(m, v, y)
    old, said = _caught(lambda: cls(ndim=2, degree=3, alpha=1e-2).fit(m, v, y))
    assert len(said) == 1 and said[0].filename == __file__
    assert np.array_equal(old.transform(m, v)[0], new.transform(m, v)[0])
    assert new.ridge_ == old.ridge_ == 1e-2
    ridge_, said = _caught(lambda: old.alpha_)
    assert ridge_ == 1e-2 and len(said) == 1
    d = old.to_dict()
    assert d["params"]["ridge"] == 1e-2 and "alpha" not in d["params"]  # saved under its name
    d["params"]["alpha"] = d["params"].pop("ridge")  # a file written before the rename
    back = cls.from_dict(json.loads(json.dumps(d)))
    assert back.ridge == 1e-2 and np.array_equal(back.transform(m, v)[0], new.transform(m, v)[0])
    d["params"]["ridge"] = 1e-2  # both names: not a file any socal wrote
    with pytest.raises(ValueError, match="params"):
        cls.from_dict(d)
    with pytest.raises(ValueError, match="former name of 'ridge'"):
        cls(ndim=2, ridge=1e-2, alpha=1e-2).fit(m, v, y)


def test_the_significance_level_keeps_the_name_alpha(sample):
    """The test's level is its own meaning of ``alpha``: no warning there."""
    m, v, _, y = socal.synthetic.toy_population().sample_raw(800, rng=1)
    t, said = _caught(lambda: socal.calibration_test(m, v, y, alpha=0.01))
    assert said == [] and t.alpha == 0.01


# -- rng=None --------------------------------------------------------------------------------------------------------

def _public_callables():
    import dataclasses

    mods = ["socal"] + [f"socal.{m}" for m in ("multiclass", "plot", "synthetic", "io", "datasets", "perturb",
                                                "simplex", "pairs", "members", "votes", "page", "torchmetric")]
    import importlib

    for mn in mods:
        try:
            mod = importlib.import_module(mn)
        except ImportError:  # an optional extra (torch) that is not installed
            continue
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n, None)
            if obj is None:
                continue
            if inspect.isclass(obj):
                if not dataclasses.is_dataclass(obj):
                    yield f"{mn}.{n}", obj
                for an, a in vars(obj).items():
                    if not an.startswith("_") and inspect.isfunction(a):
                        yield f"{mn}.{n}.{an}", getattr(obj, an)
            elif callable(obj):
                yield f"{mn}.{n}", obj


def _signature(obj):
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def public_parameter_names():
    """{name: [where]} over the parameters of socal's public functions, classes and methods (result dataclasses'
    fields excluded: they are attributes, described in their docstrings)."""
    out = {}
    for where, obj in _public_callables():
        sig = _signature(obj)
        if sig is None:
            continue
        for p in sig.parameters.values():
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                out.setdefault(p.name, []).append(where)
    return out


def test_every_rng_default_is_the_fixed_seed():
    """Every public ``rng`` defaults to None or an int: omitted, the numbers repeat."""
    seen = 0
    for where, obj in _public_callables():
        sig = _signature(obj)
        if sig is not None and "rng" in sig.parameters:
            seen += 1
            default = sig.parameters["rng"].default
            assert default is None or (isinstance(default, int) and not isinstance(default, bool)), where
    assert seen >= 20


def test_rng_none_is_one_fixed_seed_everywhere(sample):
    """None gives the same numbers on every call, in the functions where it once was fresh entropy too; it is the
    seed NONE_SEED where the function reads its seed through a Generator.  Control: fresh entropy, asked for, moves
    the numbers."""
    m, v, y = sample
    pop = socal.synthetic.toy_population()
    raw_m, raw_v, _, raw_y = pop.sample_raw(800, rng=1)
    a, b = socal.perturb(raw_m, raw_v, h=1 / 16), socal.perturb(raw_m, raw_v, h=1 / 16, rng=None)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[0], socal.perturb(raw_m, raw_v, h=1 / 16, rng=NONE_SEED)[0])
    assert not np.array_equal(a[0], socal.perturb(raw_m, raw_v, h=1 / 16, rng=np.random.default_rng())[0])
    assert np.array_equal(pop.sample(300, h=1 / 16)[0], pop.sample(300, h=1 / 16, rng=NONE_SEED)[0])
    kw = dict(h=1 / 16, n_boot=20)
    e0 = socal.evaluate(raw_m, raw_v, raw_y, rng=None, **kw)
    assert str(e0) == str(socal.evaluate(raw_m, raw_v, raw_y, rng=NONE_SEED, **kw))
    assert str(e0) != str(socal.evaluate(raw_m, raw_v, raw_y, rng=NONE_SEED + 1, **kw))
    r = [socal.ce2(m, v, y, h=1 / 16, n_boot=20, ci=0.9, rng=None).ci for _ in range(2)]
    assert r[0] == r[1]


# -- the table of names ------------------------------------------------------------------------------------------------

def _documented(text):
    """The names in docs/parameters.md's table: the first cell of each row, in backticks."""
    return [m.group(1) for m in re.finditer(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", text, re.M)]


def test_docs_table_names_every_public_parameter_once():
    text = (ROOT / "docs" / "parameters.md").read_text()
    rows = _documented(text)
    assert len(rows) == len(set(rows)), "a name has two rows: two meanings"
    names = public_parameter_names()
    missing = sorted(set(names) - set(rows))
    stale = sorted(set(rows) - set(names))
    assert not missing, f"public parameters without a row in docs/parameters.md: {missing}"
    assert not stale, f"rows in docs/parameters.md for names no public call takes: {stale}"


def test_docs_table_check_catches_a_missing_and_a_stale_row():
    """The negative control: the same comparison on an edited table fails both ways."""
    text = (ROOT / "docs" / "parameters.md").read_text()
    names = set(public_parameter_names())
    cut = text.replace("| `ridge` |", "| ridge |", 1)
    assert "ridge" in names - set(_documented(cut))
    added = text + "\n| `frobnicate` | nothing |  |\n"
    assert "frobnicate" in set(_documented(added)) - names
