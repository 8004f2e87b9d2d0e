"""Print the import picture of socal: each module, its job (the first line of its docstring) and what it imports
from the package.  ``python docs/import_picture.py [ROOT]`` (ROOT: a checkout; default this one); docs/layout.md
holds its output before and after the restructuring of issue 27.
"""

import ast
import pathlib
import re
import sys


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node, module, is_package):
    """The absolute module a 'from X import ...' names."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def picture(root, package="socal"):
    root = pathlib.Path(root)
    rows = []
    for path in sorted((root / package).rglob("*.py")):
        if path.relative_to(root).parts[1:2] == ("verify",):  # the former link socal/verify -> ../verify
            continue
        module = _module_name(path, root)
        tree = ast.parse(path.read_text())
        paragraph = (ast.get_docstring(tree) or "").strip().split("\n\n")[0]
        sentence = re.split(r"(?<=\.)\s+(?=\w)", " ".join(paragraph.split()))[0]
        job = sentence if sentence else "(no docstring)"
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(node, module, path.name == "__init__.py")
                if target == package or target.startswith(package + "."):
                    if target == package:  # from . import x: the submodules named
                        deps.update(f"{package}.{a.name}" for a in node.names
                                    if (root / package / f"{a.name}.py").exists()
                                    or (root / package / a.name).is_dir())
                    else:
                        deps.add(target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith(package + "."))
        deps.discard(module)
        short = sorted(d[len(package) + 1:] if d.startswith(package + ".") else d for d in deps)
        rows.append((module, job, short))
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = argv[0] if argv else pathlib.Path(__file__).resolve().parents[1]
    for module, job, deps in picture(root):
        print(f"- `{module}`: {job}")
        print(f"  imports: {', '.join(deps) if deps else '(nothing from socal)'}")


if __name__ == "__main__":
    main()
