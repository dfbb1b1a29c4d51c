"""The sample-data generators may use the connectors (`sources`), never the pipeline; no connector uses them.

Demo data written by importing pipeline code would test the pipeline against itself, and a connector that
imported a generator would ship sample data inside a reader.
"""

from __future__ import annotations

from pathlib import Path

from tests.sources.test_connector_imports import _imported_modules

ROOT = Path(__file__).resolve().parents[2]


def _imports(package: str, forbidden: str) -> list[str]:
    return sorted(
        f"{file.relative_to(ROOT)} imports {module}"
        for file in sorted((ROOT / package).rglob("*.py"))
        for module in _imported_modules(file)
        if module.split(".")[0] == forbidden
    )


def test_generators_do_not_import_the_pipeline():
    assert _imports("synthetic_data", "pipelines") == []


def test_connectors_do_not_import_the_generators():
    assert _imports("sources", "synthetic_data") == []


def test_the_check_sees_the_generators_imports():
    """The walk resolves the generators' imports (else the tests above pass vacuously)."""
    assert "sources.focus.columns" in _imported_modules(ROOT / "synthetic_data" / "focus_samples.py")
    assert _imports("synthetic_data", "sources")
