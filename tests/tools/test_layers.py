"""Layers import only downward: schemas ← rules ← evals ← assets ← live ← web ← orchestration; no module takes part
in an import circle, and no product module outgrows what one person reads at once.

Every import statement is read from the source (module level and inside functions alike, since a
deferred import is still a dependency), and no module finds a domain by building a module name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAYERS = ("schemas", "rules", "evals", "assets", "live", "web", "orchestration")
MAX_LINES = 500
"""A product module longer than this holds more than one concept: split it by what its parts hold."""


def imported_packages(path: Path) -> set[tuple[str, int]]:
    """(top-level package, line) of every absolute import in a file."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out |= {(alias.name.split(".")[0], node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add((node.module.split(".")[0], node.lineno))
    return out


def upward_imports(layer: str) -> list[str]:
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    return [f"{path.relative_to(ROOT)}:{line} imports {package}"
            for path in sorted((ROOT / layer).rglob("*.py"))
            for package, line in sorted(imported_packages(path)) if package in above]


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_no_module_imports_from_a_layer_above_its_own(layer):
    assert upward_imports(layer) == []


def test_the_walk_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from orchestration.cli import main\n    import assets.domains\n", encoding="utf-8")
    assert imported_packages(probe) == {("orchestration", 2), ("assets", 3)}


def test_no_module_builds_a_module_name_to_import():
    found = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__"):
                    if node.args and not isinstance(node.args[0], ast.Constant):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def product_modules() -> dict[str, Path]:
    """Dotted name → file, for every module of the product's layers."""
    out = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The product modules a module imports by name (a `from package import module` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        out |= {t for t in targets if t in modules and t != name}
    return out


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_import_circles():
    modules = product_modules()
    graph = defaultdict(set, {name: import_edges(name, path, modules) for name, path in modules.items()})
    assert import_circles(graph) == []


def test_the_circle_finder_sees_a_circle_through_a_deferred_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from .c import g\n", encoding="utf-8")
    (tmp_path / "pkg" / "c.py").write_text("import pkg.a\n", encoding="utf-8")
    (tmp_path / "pkg" / "d.py").write_text("import pkg.a\n", encoding="utf-8")
    modules = {f"pkg.{n}": tmp_path / "pkg" / f"{n}.py" for n in "abcd"} | {"pkg": tmp_path / "pkg" / "__init__.py"}
    graph = {name: import_edges(name, path, modules) for name, path in modules.items()}
    assert import_circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_no_product_module_is_over_the_line_limit():
    long = {str(path.relative_to(ROOT)): n for path in product_modules().values()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
