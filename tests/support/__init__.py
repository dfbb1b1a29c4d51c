"""Helpers the tests share: fixture writers, a local HTTP server, a headless browser, warehouse looks."""

from pathlib import Path

FIXTURES_ROOT = Path(__file__).resolve().parent.parent / "fixtures"
"""tests/fixtures: provider files in their published layouts, shared by tests in every folder."""
