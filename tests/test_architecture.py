"""The layers of docs/architecture.md, read from the code: every import in `pipelines/lib` looks down, none loops.

The imports are read with `ast` from the source files (function-level imports included, since an import hidden
in a function is still a dependency), so the test needs nothing imported and fails on the first arrow that points
up, across or round.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "pipelines" / "lib"

LAYERS = (
    "foundation",
    "settings",
    "catalog",
    "warehouse",
    "quality",
    "prices",
    "ingest",
    "transform",
    "operations",
    "reporting",
)
"""`pipelines/lib`'s packages from the bottom up: each may import only those below it (docs/architecture.md)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str) -> Iterator[tuple[int, str]]:
    """(line, module) of every `pipelines` import in a file's source: the module itself or, for `from a import b`,
    `a.b` when that is a module of ours (so `from pipelines.lib.quality import rules` counts as the rules module)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pipelines"):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipelines"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                yield node.lineno, candidate if _is_module(candidate) else node.module


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def layer_of(module: str) -> str | None:
    """The `pipelines/lib` package (or `settings`) a module belongs to; None outside `pipelines/lib`."""
    parts = module.split(".")
    if parts[:2] != ["pipelines", "lib"] or len(parts) < 3:
        return None
    return parts[2]


def lib_files() -> list[Path]:
    return sorted(LIB.rglob("*.py"))


def import_graph() -> dict[str, set[str]]:
    return {
        module_name(path): {imported for _, imported in imported_modules(path.read_text()) if layer_of(imported)}
        for path in lib_files()
    }


def test_every_package_of_pipelines_lib_has_a_layer():
    packages = {path.name for path in LIB.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    modules = {path.stem for path in LIB.glob("*.py") if path.stem != "__init__"}
    assert packages | modules == set(LAYERS)


def test_every_import_in_pipelines_lib_looks_down():
    upward = []
    for path in lib_files():
        here = layer_of(module_name(path))
        for line, imported in imported_modules(path.read_text()):
            there = layer_of(imported)
            if imported.startswith(("pipelines.defs", "pipelines.cli", "pipelines.definitions")):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {imported} (the wiring on top)")
            elif there is not None and there != here and LAYERS.index(there) > LAYERS.index(here):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {imported} ({here} is below {there})")
    assert not upward, "imports that look up:\n" + "\n".join(upward)


def test_no_module_of_pipelines_lib_imports_itself_round_a_loop():
    graph = import_graph()
    loops: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                loops.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not loops, "import loops:\n" + "\n".join(" -> ".join(loop) for loop in loops)


@pytest.mark.parametrize("top", ["pipelines", "sources", "synthetic_data"])
def test_no_module_is_named_after_its_own_package(top: str):
    named_twice = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / top).rglob("*.py"))
        if path.stem == path.parent.name and path.stem != "__init__"
    ]
    assert not named_twice


def test_the_checks_see_the_imports_they_police():
    """A guard for the guard: a known downward import and a function-level import are both read."""
    found = {imported for _, imported in imported_modules((LIB / "warehouse" / "loads.py").read_text())}
    assert "pipelines.lib.catalog.tables" in found
    hidden = "import os\n\ndef f():\n    from pipelines.lib.catalog import registry, tables\n"
    expected = [(4, "pipelines.lib.catalog.registry"), (4, "pipelines.lib.catalog.tables")]
    assert list(imported_modules(hidden)) == expected
    assert layer_of("pipelines.lib.settings") == "settings"
    assert layer_of("pipelines.defs.resources") is None
