"""The API reference builds from the numpydoc docstrings with warnings as errors, and lists the whole public API."""

import inspect
import pathlib
import re

import pytest

import socal

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def test_api_reference_lists_every_public_name():
    api = (DOCS / "api.rst").read_text()
    listed = set(re.findall(r"^   ([\w.]+)$", api, flags=re.M))
    modules = {"synthetic", "truth", "plot"}  # documented member by member
    missing = [name for name in socal.__all__ if name not in listed and name not in modules]
    assert not missing, f"public names missing from docs/api.rst: {missing}"
    absent = [name for name in listed if not _resolves(name)]  # and nothing listed that does not exist
    assert not absent, f"docs/api.rst lists names socal does not have: {absent}"
    assert not _resolves("synthetic.no_such_population")  # negative control: a missing name is seen


def _resolves(name):
    """Whether docs/api.rst's ``name`` (relative to socal) is an attribute path of socal or a submodule of it."""
    import importlib

    obj = socal
    for i, part in enumerate(name.split(".")):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module("socal." + ".".join(name.split(".")[:i + 1]))
        except ImportError:
            return False
    return True


def test_docs_build_with_warnings_as_errors(tmp_path, capsys):
    pytest.importorskip("sphinx", reason="the API reference needs the docs extra (sphinx, numpydoc)")
    pytest.importorskip("numpydoc", reason="the API reference needs the docs extra (sphinx, numpydoc)")
    from sphinx.cmd.build import build_main

    status = build_main(["-W", "--keep-going", "-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS),
                         str(tmp_path / "html")])
    log = capsys.readouterr()
    assert status == 0, log.out + log.err
    pages = {p.name for p in (tmp_path / "html" / "generated").glob("*.html")}
    assert {"socal.evaluate.html", "socal.SecondOrderPlatt.html", "socal.plot.reliability.html"} <= pages
    text = (tmp_path / "html" / "generated" / "socal.evaluate.html").read_text()
    assert "calibrated reference" in text or "reference" in text


def test_the_guides_candidates_example_is_what_socal_computes():
    """docs/guide.md's `res.candidates` example: its printed numbers are this call's (to the last digit on the
    recorded platform; to a Monte Carlo tolerance elsewhere, :mod:`tests.fingerprint`), including that the low end
    comes from a degree Lepski's rule rejected."""
    from tests.fingerprint import SAME_PLATFORM
    from tests.test_notebooks import compare_outputs

    text = " ".join((DOCS / "guide.md").read_text().split())
    start = text.index("For `pop = socal.synthetic.validation_zoo()[\"calibrated-few\"]")
    written = text[start: text.index("* `", start)]  # to the next bullet
    pop = socal.synthetic.validation_zoo()["calibrated-few"].population
    m, v, y = pop.sample(20_000, h=1 / 64, rng=0)
    res = socal.ce2(m, v, y, h=1 / 64, ci=0.9, rng=0)
    low = next(c for c in res.candidates if c.ci.low == res.ci.low)
    high = next(c for c in res.candidates if c.ci.high == res.ci.high)
    chosen = next(c for c in res.candidates if c.chosen)
    assert not low.chosen and low.degree < chosen.degree and high is chosen
    fresh = (f"For `pop = socal.synthetic.validation_zoo()[\"calibrated-few\"].population`, `m, v, y = "
             f"pop.sample(20_000, h=1/64, rng=0)` and `socal.ce2(m, v, y, h=1/64, ci=0.9, rng=0)`, the interval "
             f"[{res.ci.low:.4f}, {res.ci.high:.4f}] (truth {pop.ce2(1 / 64).value:.4f}, estimate {res.estimate:.4f} "
             f"at the chosen degree {chosen.degree}) takes its low end from degree {low.degree}, which Lepski's rule "
             f"rejected (its own interval [{low.ci.low:.4f}, {low.ci.high:.4f}]), and its high end from degree "
             f"{high.degree} ([{high.ci.low:.4f}, {high.ci.high:.4f}], corrections {high.bias_low:.4f} and "
             f"{high.bias_high:.4f}, noise SD {high.noise_sd:.4f}). ")
    assert compare_outputs(written, fresh, monte_carlo=not SAME_PLATFORM) == []


def _after_block(text):
    """The lines of docs/layout.md's "After" import picture."""
    start = text.index("<summary>After</summary>")
    body = text.index("\n\n", start) + 2
    return text[body:text.index("\n\n</details>", body)].splitlines()


def test_the_layout_pages_import_picture_is_this_trees():
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_picture", DOCS / "import_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.picture(DOCS.parent)
    printed = [line for mod, job, deps in rows
               for line in (f"- `{mod}`: {job}", f"  imports: {', '.join(deps) if deps else '(nothing from socal)'}")]
    shown = _after_block((DOCS / "layout.md").read_text())
    stale = sorted(set(shown) ^ set(printed))
    assert not stale, ("docs/layout.md's 'After' import picture differs from `python docs/import_picture.py`; "
                       f"paste its output there. Lines that differ: {stale[:6]}")
    # negative control: a page missing a module's lines, as after a module is added, is seen
    assert set(shown[:-2]) ^ set(printed)


def test_the_guides_multiclass_example_prints_what_it_shows(capsys):
    """docs/guide.md's 'More than two classes' code block, run as written, prints its text block (to the last digit
    on the recorded platform; to a Monte Carlo tolerance elsewhere, :mod:`tests.fingerprint`)."""
    from tests.fingerprint import SAME_PLATFORM
    from tests.test_notebooks import compare_outputs

    text = (DOCS / "guide.md").read_text()
    section = text[text.index("## More than two classes"):]
    code = section[section.index("```python\n") + 10: section.index("\n```\n")]
    shown = section[section.index("```text\n") + 8:]
    shown = shown[: shown.index("\n```")]
    exec(compile(code, "guide.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    assert compare_outputs(shown, printed, monte_carlo=not SAME_PLATFORM) == []
    # negative control: another class's p-value in the text is seen
    assert compare_outputs(shown.replace("class 0: p = 1.6e-18", "class 0: p = 7.4e-18", 1), printed) != []


def _undocumented(namespace, names):
    """The callables among ``names`` of ``namespace`` whose docstring is missing or blank at run time."""
    out = []
    for name in names:
        obj = getattr(namespace, name)
        if callable(obj) and not (getattr(obj, "__doc__", None) or "").strip():
            out.append(name)
    return out


def test_every_public_callable_has_a_docstring_at_run_time():
    """help() shows text for every public function and class of socal (ce2 and ce1 had none: their text was a
    string joined by +, an expression statement, not a docstring), and their Examples run as doctests.  Negative
    control: a function written the old way is reported."""
    assert _undocumented(socal, socal.__all__) == []
    # every public module's public names, socal.verify's included, and the public methods of their classes
    import importlib
    import pkgutil

    missing = []
    names = ["socal.verify"] + [f"socal.{m.name}" for m in pkgutil.iter_modules(socal.__path__)
                                if not m.name.startswith("_")]
    for modname in names:
        try:
            mod = importlib.import_module(modname)
        except ImportError:  # an optional extra (plot needs matplotlib for its figures, not for its import)
            continue
        public = list(getattr(mod, "__all__", []))
        missing += [f"{modname}.{n}" for n in _undocumented(mod, public)]
        for n in public:
            obj = getattr(mod, n)
            if isinstance(obj, type):
                methods = [m for m, f in vars(obj).items() if not m.startswith("_") and inspect.isfunction(f)]
                missing += [f"{modname}.{n}.{m}" for m in _undocumented(obj, methods)]
    assert missing == []
    assert "The headline is bias-corrected" in socal.ce2.__doc__ and ">>> res = socal.ce2(" in socal.ce2.__doc__
    notes = "shared notes"

    def old_way():
        """Head.""" + notes  # noqa: B018 (the pattern that left __doc__ None)

    import types
    assert _undocumented(types.SimpleNamespace(old_way=old_way), ["old_way"]) == ["old_way"]
