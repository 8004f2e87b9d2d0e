"""The import layering: socal needs numpy and scipy only; verify imports socal, never the reverse."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_importing_socal_loads_no_optional_dependency():
    code = ("import sys, socal, socal.cli, socal.io, socal.sufficient, socal.intervals; "
            "bad = [m for m in ('verify', 'sympy', 'mpmath', 'flint', 'matplotlib', 'sklearn', 'joblib', 'tqdm', "
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
            assert not any(n == "verify" or n.startswith("verify.") for n in names), path
