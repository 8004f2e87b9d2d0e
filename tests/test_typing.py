"""Type hints on the public API (issue 15): every parameter and return of the public functions and methods is
annotated, the annotations resolve, and the package ships py.typed."""

import inspect
import pathlib
import typing

import pytest

import socal
from socal import io, plot, truth


def _public_callables():
    for name in socal.__all__:
        obj = getattr(socal, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__.startswith("socal") and not issubclass(obj, Exception):
            for meth_name, meth in inspect.getmembers(obj, inspect.isfunction):
                if (not meth_name.startswith("_") or meth_name == "__init__") and meth.__module__.startswith("socal"):
                    if meth.__qualname__.split(".")[0] in ("object",):
                        continue
                    yield f"{name}.{meth_name}", meth
    for mod in (plot, truth, io):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and name in ("reliability", "residual_map", "plot_reliability",
                                                    "plot_residual_map", "plot_before_after", "evaluation_figure",
                                                    "calibrated_reference", "read_chunks"):
                yield f"{mod.__name__}.{name}", obj


CALLABLES = dict(_public_callables())


def test_the_list_is_not_empty():
    assert len(CALLABLES) >= 40


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_annotated(name):
    func = CALLABLES[name]
    hints = typing.get_type_hints(func)  # resolves: no undefined names in the annotations
    sig = inspect.signature(func)
    missing = [p for p in sig.parameters if p not in ("self", "cls") and p not in hints
               and sig.parameters[p].kind not in (inspect.Parameter.VAR_KEYWORD,)]
    assert not missing, f"{name}: parameters without a type hint: {missing}"
    assert "return" in hints, f"{name}: no return annotation"


def test_py_typed_is_shipped():
    assert (pathlib.Path(socal.__file__).parent / "py.typed").is_file()
    import tomllib

    conf = tomllib.loads((pathlib.Path(socal.__file__).parents[1] / "pyproject.toml").read_text())
    assert "py.typed" in conf["tool"]["setuptools"]["package-data"]["socal"]
