"""The package is acyclic: the import graph of socal/ and verify/ (installed as socal.verify), counting imports inside
functions, has no cycle (issue 74).  Negative control: a planted cycle, direct or through a function-level import,
is found."""

import ast
import functools
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def _picture():
    """docs/import_picture.py, whose rule resolves a relative import (one rule for the picture and this test)."""
    spec = importlib.util.spec_from_file_location("import_picture", ROOT / "docs" / "import_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _resolve(node, module, is_package):
    return _picture()._resolve(node, module, is_package)


def import_graph(trees):
    """{module: set of modules it imports} over ``trees``, a list of (folder, package name); every import counts,
    at the top of a module or inside a function.  ``from . import x`` names the submodule x."""
    modules = {}
    for folder, package in trees:
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package] + parts)] = path
    graph = {}
    for module, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(node, module, path.name == "__init__.py")
                names = [f"{target}.{a.name}" for a in node.names]
                deps.update(n for n in names if n in modules)  # from . import x: the submodule
                if target in modules and not any(n in modules for n in names):
                    deps.add(target)
                elif target in modules and target != module.rsplit(".", 1)[0]:
                    deps.add(target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
        parent_packages = {module.rsplit(".", i)[0] for i in range(1, module.count(".") + 1)}
        graph[module] = deps - {module} - parent_packages  # a package's __init__ runs first anyway
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _package_trees(root=ROOT):
    return [(root / "socal", "socal"), (root / "verify", "socal.verify")]


def test_socal_and_verify_have_no_import_cycle():
    graph = import_graph(_package_trees())
    assert len(graph) > 60  # both trees were read
    assert any(d.startswith("socal.verify") for d in graph["socal.verify.cli"])  # relative imports resolved
    assert cycles(graph) == []


def test_a_planted_cycle_is_found(tmp_path):
    pkg = tmp_path / "socal"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from . import a  # inside a function: still an edge\n    return a\n")
    (pkg / "c.py").write_text("from socal import a\n")
    assert cycles(import_graph([(pkg, "socal")])) == [["socal.a", "socal.b"]]
    (pkg / "b.py").write_text("def g():\n    return 1\n")
    assert cycles(import_graph([(pkg, "socal")])) == []
