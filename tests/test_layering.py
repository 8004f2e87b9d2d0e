"""The import layering: socal needs numpy and scipy only; verify imports socal, never the reverse."""

import ast
import pathlib
import subprocess
import sys
import pytest
import socal

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_importing_socal_loads_no_optional_dependency():
    code = ("import sys, socal, socal.cli, socal.io, socal.sufficient, socal.bootstrap; "
            "bad = [m for m in ('verify', 'socal.verify', 'sympy', 'mpmath', 'flint', 'matplotlib', 'sklearn', 'joblib', 'tqdm', "
            "'dask', 'distributed', 'pyarrow', 'pandas') if m in sys.modules]; print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"import socal loaded: {out.stdout.strip()}"


def test_socal_sources_never_import_verify():
    for path in (ROOT / "socal").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            assert not any(n in ("verify", "socal.verify") or n.startswith(("verify.", "socal.verify."))
                           for n in names), path
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "socal":
                assert "verify" not in [a.name for a in node.names], path
            if isinstance(node, ast.ImportFrom) and node.level >= 1:  # from . import verify (inside socal/)
                assert "verify" not in [a.name for a in node.names] and not (node.module or "").startswith("verify"), \
                    path


def test_the_distribution_claims_no_top_level_verify():
    """verify/ installs as socal.verify: pyproject maps it, and the package list names no top-level 'verify'."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert conf["package-dir"] == {"socal.verify": "verify"}
    assert all(p == "socal" or p.startswith("socal.") for p in conf["packages"])
    import socal.verify

    assert pathlib.Path(socal.verify.__file__).resolve().parent == ROOT / "verify"
    # one mapping, and it is the installer's: no link socal/verify -> ../verify in the tree (a link checks out as a
    # file where git has core.symlinks=false, and shows tools two paths for one package)
    assert not (ROOT / "socal" / "verify").exists() and not (ROOT / "socal" / "verify").is_symlink()
    tracked = subprocess.run(["git", "ls-files", "-s", "socal"], capture_output=True, text=True, cwd=ROOT).stdout
    assert not any(line.startswith("120000") for line in tracked.splitlines()), "a symbolic link is tracked in socal/"



# (module, imported name): why it may stay.  Empty: every name one module takes from another is public.
ALLOWED_PRIVATE_IMPORTS: dict = {}


def _private_imports(root=ROOT, tops=("socal", "verify", "benchmarks")):
    """(importing module, imported underscore name) for every 'from X import _y' below ``root``/``tops`` (dunder
    names such as __version__ excepted)."""
    found = []
    for top in tops:
        for path in (root / top).rglob("*.py"):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            found.append((module, alias.name))
    return found


def test_no_module_imports_another_modules_underscore_names():
    """Names other modules use are public names (issue 27); the allow-list would say why an exception stays."""
    bad = [(m, n) for m, n in _private_imports() if (m, n) not in ALLOWED_PRIVATE_IMPORTS]
    assert not bad, f"underscore names imported across modules: {sorted(set(bad))}"


def test_the_private_import_scan_finds_a_planted_one(tmp_path):
    """Negative control: a module importing another's underscore name is found; dunder names are not."""
    pkg = tmp_path / "socal"
    pkg.mkdir()
    (pkg / "a.py").write_text("from .b import _secret, public\nfrom . import __version__\n")
    assert _private_imports(tmp_path, ("socal",)) == [("socal.a", "_secret")]


def _defined_names(tree):
    """Every name a module defines or binds: functions, classes, assigned names and attributes, parameters, and
    string constants (``setattr(obj, "_x", ...)``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def _private_attribute_uses(root=ROOT, tops=("socal", "verify", "benchmarks")):
    """(file, line, expression) for every ``obj._name`` (not on self or cls, not a dunder) whose ``_name`` the file
    does not define itself: a private method or attribute of another module's object, such as the statistics'
    former ``stats._add_counts(...)``."""
    found = []
    for top in tops:
        for path in (root / top).rglob("*.py"):
            tree = ast.parse(path.read_text())
            own = _defined_names(tree)
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                        and node.attr not in own):
                    found.append((str(path.relative_to(root)), node.lineno, ast.unparse(node)))
    return found


def test_no_module_uses_another_modules_private_attributes():
    """Objects are used through their public methods across modules (issue 27: ``._add_counts`` and ``._add`` on
    statistics objects were the interface between estimators, fitting and sufficient)."""
    bad = _private_attribute_uses()
    assert not bad, f"private attributes of other modules' objects: {bad}"


def test_the_private_attribute_scan_finds_a_planted_one(tmp_path):
    """Negative control: ``stats._add_counts(...)`` in a module that does not define it is found; ``self._x`` and a
    module's own ``obj._y`` are not."""
    pkg = tmp_path / "socal"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f(stats, obj):\n    obj._y = 1\n    self = obj\n    return stats._add_counts(1), "
                              "self._z, obj._y\n")
    assert _private_attribute_uses(tmp_path, ("socal",)) == [("socal/a.py", 4, "stats._add_counts")]


def test_verify_and_benchmarks_use_public_socal_modules():
    """verify/ and benchmarks/ import socal's public modules only (no ``socal._x``): the package-internal modules
    may change without notice."""
    bad = []
    for top in ("verify", "benchmarks"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                for name in names:
                    parts = name.split(".")
                    if parts[0] == "socal" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
                        bad.append((str(path.relative_to(ROOT)), name))
    assert not bad, bad


def _import_socal(env_value):
    """Import socal in a fresh process (OPENBLAS_THREAD_TIMEOUT unset, or ``env_value``); returns (the variable's
    value after the import, the modules in the order Python imported them)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if env_value is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = env_value
    code = "import os, socal; print(os.environ['OPENBLAS_THREAD_TIMEOUT'])"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env)
    order = [line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")]
    return out.stdout.strip(), order


def test_socal_shortens_openblas_idle_spin_before_numpy_loads_it():
    """socal._threads sets OPENBLAS_THREAD_TIMEOUT=4 (OpenBLAS reads it when its library loads), so it must run
    before numpy or scipy is imported; a value the user set is kept."""
    value, order = _import_socal(None)
    assert value == "4"
    first = {name: order.index(name) for name in ("socal._threads", "numpy", "scipy") if name in order}
    assert "socal._threads" in first and "numpy" in first, order[:20]
    assert first["socal._threads"] < first["numpy"] and first["socal._threads"] < first.get("scipy", len(order))
    assert _import_socal("28")[0] == "28"


def _finufft_spin(code, policy=None):
    """Run ``code`` in a fresh process with libgomp's verbose display on; returns (stdout, GOMP_SPINCOUNT as the
    OpenMP runtime that loaded first printed it, or None when none printed it)."""
    import os
    import re

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    spins = re.findall(r"GOMP_SPINCOUNT = '(\d+)'", out.stderr)
    return out.stdout.strip(), (spins[0] if spins else None)


def test_finufft_runtime_loads_passive_and_no_one_else_inherits_it():
    """socal.nufft loads finufft with OMP_WAIT_POLICY=passive (libgomp: spin count 0) and takes the variable out of
    the environment again; finufft imported before socal keeps the default (spin count 300,000: the control that
    shows the check can fail); a policy the user set is kept."""
    import pytest

    pytest.importorskip("finufft", reason="finufft (the 'fast' extra) is not installed")
    load = "import os, socal; from socal import nufft; print(nufft.available(), os.environ.get('OMP_WAIT_POLICY'))"
    printed, spin = _finufft_spin(load)
    if spin is None:
        pytest.skip("finufft's OpenMP runtime is not libgomp (it prints no GOMP_SPINCOUNT)")
    assert printed == "True None" and spin == "0"
    assert _finufft_spin("import finufft; " + load)[1] == "300000"
    printed, spin = _finufft_spin(load, policy="active")
    assert printed == "True active" and spin != "0"


def test_passive_openmp_sets_the_policy_only_inside_and_restores_it(monkeypatch):
    """The context sets OMP_WAIT_POLICY=passive for its block only (also when the block raises), and leaves a value
    the user set as it was, inside and after."""
    import os

    import pytest

    from socal._threads import passive_openmp

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with passive_openmp():
        assert os.environ["OMP_WAIT_POLICY"] == "passive"
    assert "OMP_WAIT_POLICY" not in os.environ
    with pytest.raises(ImportError), passive_openmp():
        raise ImportError("no finufft")
    assert "OMP_WAIT_POLICY" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    with passive_openmp():
        assert os.environ["OMP_WAIT_POLICY"] == "active"
    assert os.environ["OMP_WAIT_POLICY"] == "active"


DEFAULTS = ("n_boot", "folds", "max_degree")


def _literal_defaults(source, filename):
    """(function, parameter) pairs whose default for a parameter of DEFAULTS is a literal, not a named constant."""
    import ast

    out = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            pos = args.posonlyargs + args.args
            pairs = list(zip(pos[len(pos) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            # None is "not given" (issue 74), not a value beside the constant
            out += [(node.name, a.arg) for a, d in pairs
                    if a.arg in DEFAULTS and isinstance(d, ast.Constant) and d.value is not None]
    return out


def test_one_named_constant_per_default():
    """n_boot, folds and max_degree default to socal's named constants (N_BOOT, DEFAULT_FOLDS, DEFAULT_MAX_DEGREE) or
    to None ("not given"), never to literals beside them (issue 61: n_boot=200 at two places, folds=5 at five, max_degree=44).  Negative
    control: a literal default is found."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "socal"
    found = [(str(p.relative_to(root)), *f) for p in sorted(root.rglob("*.py"))
             for f in _literal_defaults(p.read_text(), str(p))]
    assert found == []
    assert _literal_defaults("def f(x, *, folds=5, n_boot=N):\n    pass\n", "x.py") == [("f", "folds")]


def _module_attribute_assignments(root=ROOT, tops=("socal", "verify")):
    """(file, line, target) for every assignment to an attribute of a socal module: ``socal.bootstrap.X = ...``,
    ``bs.X = ...`` after ``import socal.bootstrap as bs`` or ``from socal import bootstrap``, ``from . import x``
    then ``x.y = ...``, and ``setattr(module, ...)``.  Module state set by one caller is seen by every other caller
    in the process (and by none in a worker process): options are arguments (issue 61)."""
    package = root / "socal"

    def is_module(name):
        return (package / f"{name}.py").exists() or (package / name).is_dir()

    found = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            tree = ast.parse(path.read_text())
            aliases = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name == "socal" or a.name.startswith("socal."):
                            aliases.add(a.asname or "socal")
                elif isinstance(node, ast.ImportFrom):
                    inside = node.level >= 1 and top == "socal" and (node.module is None or node.level == 1)
                    if node.module == "socal" or (inside and node.module is None):
                        aliases.update(a.asname or a.name for a in node.names if is_module(a.name))
            targets = []
            for node in ast.walk(tree):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        targets.extend(t.elts if isinstance(t, ast.Tuple) else [t])
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                      and node.args):
                    targets.append(ast.Attribute(value=node.args[0], attr="<setattr>", lineno=node.lineno))
            for t in targets:
                if not isinstance(t, ast.Attribute):
                    continue
                base = t.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in aliases:
                    found.append((str(path.relative_to(root)), t.lineno, ast.unparse(t)))
    return found


def test_nothing_assigns_to_a_socal_module_attribute():
    """socal and verify never set another module's attributes: the bootstrap's knobs are
    :class:`socal.bootstrap.BootstrapOptions`, passed as an argument (issue 61; they were module flags that the
    benchmarks reassigned)."""
    assert _module_attribute_assignments() == []


def test_the_module_attribute_scan_finds_planted_assignments(tmp_path):
    """Negative control: the three forms of assigning to a socal module attribute are each found; a local object's
    attribute is not."""
    (tmp_path / "socal").mkdir()
    (tmp_path / "socal" / "bootstrap.py").write_text("X = 1\n")
    (tmp_path / "socal" / "user.py").write_text(
        "import socal.bootstrap as bs\nfrom . import bootstrap\nbs.LABEL_DRAWS = 'exact'\n"
        "bootstrap.REFIT_ROWS, y = 800, 1\nsetattr(bs, 'X', 2)\nclass A: pass\na = A()\na.x = 1\n")
    found = _module_attribute_assignments(tmp_path, tops=("socal",))
    assert [(line, text) for _, line, text in found] == [(3, "bs.LABEL_DRAWS"), (4, "bootstrap.REFIT_ROWS"),
                                                         (5, "bs.<setattr>")]


def _stream_salt_calls(root=ROOT):
    """(file, line) of every ``stream_salt(...)`` call in socal/ outside the registry (socal/weights.py) and its
    primitive (socal/rowkeys.py), whatever its arguments: a computed first id (thin_counts once passed the seed's low
    bits, so seed 0 drew exactly the stream of 'label sets' and seed 1 that of 'poisson weights') collides as surely
    as a literal one."""
    found = []
    for path in sorted((root / "socal").rglob("*.py")):
        if path.name in ("weights.py", "rowkeys.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) ==
                    "stream_salt"):
                found.append((path.name, node.lineno))
    return found


def test_random_streams_are_named_in_the_registry(tmp_path):
    """Every stream the library draws from is named in socal.weights.STREAMS: no module outside it calls
    stream_salt, with a literal id or a computed one.  Negative controls: a planted ``stream_salt(3, b)`` and a
    planted ``stream_salt(seed & 0xFFFFFFFF, seed >> 32)`` are found."""
    assert _stream_salt_calls() == []
    (tmp_path / "socal").mkdir()
    (tmp_path / "socal" / "user.py").write_text("from .rowkeys import stream_salt\ns = stream_salt(3, 0)\n"
                                                "t = stream_salt(seed & 0xFFFFFFFF, seed >> 32)\n")
    assert _stream_salt_calls(tmp_path) == [("user.py", 2), ("user.py", 3)]


def test_thin_counts_draws_from_a_stream_of_its_own():
    """thin_counts' salt for seeds 0 and 1 is no other stream's (it was 'label sets' 0 and 'poisson weights' 0)."""
    from socal import weights

    others = {weights.salt(name, *extra) for name in weights.STREAMS if name != "thinned votes"
              for extra in ((), (0,), (1,), (0, 0), (1, 0))}
    for seed in (0, 1, 2, 2**32 + 1):
        assert weights.salt("thinned votes", seed & 0xFFFFFFFF, seed >> 32) not in others


def test_the_documented_submodules_are_reachable_after_import_socal():
    """README's `socal.io.read_chunks` raised "module 'socal' has no attribute 'io'" after `import socal`.  The
    submodules now load on first use (as scipy's do); importing socal still loads none of them."""
    import subprocess
    import sys

    code = ("import sys, socal; assert 'socal.io' not in sys.modules and 'socal.datasets' not in sys.modules; "
            "assert callable(socal.io.read_chunks) and callable(socal.datasets.load); "
            "assert 'io' in dir(socal); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError, match="no attribute 'nothere'"):
        socal.nothere  # noqa: B018


def _sources_with_syntax_warnings(root=ROOT, tops=("socal", "verify", "benchmarks", "tests", "docs")):
    import warnings
    bad = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    compile(path.read_text(), str(path), "exec")
                except (SyntaxWarning, DeprecationWarning, SyntaxError) as e:
                    bad.append((str(path.relative_to(root)), str(e)))
    return bad


def test_every_source_compiles_without_a_syntax_warning():
    """An invalid escape such as ``"\\|"`` in a plain string compiles with a warning today and is an error in a later
    Python: every source compiles with warnings as errors (CI printed one from socal/experiments/real_models.py)."""
    assert _sources_with_syntax_warnings() == []


def test_the_syntax_warning_scan_finds_a_planted_one(tmp_path):
    (tmp_path / "socal").mkdir()
    (tmp_path / "socal" / "m.py").write_text('x = "a \\| b"\n')
    assert [p for p, _ in _sources_with_syntax_warnings(tmp_path, ("socal",))] == ["socal/m.py"]
