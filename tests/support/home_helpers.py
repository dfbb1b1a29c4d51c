"""A FINOPS_HOME of a test's own, for tests that run Dagster against a real warehouse."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.lib.operations.instance import install_instance_config_into
from pipelines.lib.settings import FinopsHome


def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FinopsHome:
    """FINOPS_HOME under tmp_path, with the Dagster instance and the warehouse setting pointing into it."""
    root = tmp_path / "home"
    for name, value in {
        "FINOPS_HOME": root,
        "DAGSTER_HOME": root / "dagster",
        "FINOPS_WAREHOUSE": root / "warehouse.duckdb",
    }.items():
        monkeypatch.setenv(name, str(value))
    home = FinopsHome(root)
    install_instance_config_into(home)
    return home
