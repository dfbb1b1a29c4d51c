"""Connectors share code through `sources.common` only: no provider package imports another.

A helper one connector borrows from another ties their formats together (a FOCUS reader change would
silently change how CUR files are read); what they share belongs in the toolkit.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2] / "sources"
SHARED = {"common"}


def _providers() -> list[str]:
    return sorted(
        path.name
        for path in SOURCES.iterdir()
        if path.is_dir() and (path / "__init__.py").exists() and path.name not in SHARED
    )


def _imported_modules(file: Path) -> set[str]:
    """Absolute module names a file imports, relative imports resolved against its package."""
    package = file.relative_to(SOURCES.parent).with_suffix("").parts[:-1]
    modules: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"), filename=str(file))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            modules.add(module)
            # `from sources import focus` imports the package `sources.focus`
            modules.update(f"{module}.{alias.name}" for alias in node.names)
    return modules


def _cross_imports() -> list[str]:
    providers = _providers()
    found = []
    for provider in providers:
        for file in sorted((SOURCES / provider).rglob("*.py")):
            for module in _imported_modules(file):
                parts = module.split(".")
                if len(parts) >= 2 and parts[0] == "sources" and parts[1] in providers and parts[1] != provider:
                    found.append(f"{file.relative_to(SOURCES.parent)} imports {module}")
    return sorted(set(found))


def test_no_provider_package_imports_another():
    assert _cross_imports() == []


def test_the_check_sees_providers_and_their_imports():
    """The walk finds the connectors and resolves both import spellings (else the test above passes vacuously)."""
    assert {"aws", "azure", "focus", "gcp", "oci", "onprem", "gpu_clouds"} <= set(_providers())
    assert "sources.common.files" in _imported_modules(SOURCES / "focus" / "reader.py")
    assert "sources.focus.reader" in _imported_modules(SOURCES / "focus" / "__init__.py")
