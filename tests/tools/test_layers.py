"""Layers import only downward: schemas ← rules ← evals ← assets ← orchestration.

Every import statement is read from the source (module level and inside functions alike, since a
deferred import is still a dependency), and no module finds a domain by building a module name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAYERS = ("schemas", "rules", "evals", "assets", "orchestration")


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
