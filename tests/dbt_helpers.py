"""Running dbt itself against a fresh, empty warehouse in a test (for dbt unit tests and contracts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipelines.lib.settings import DBT_PROJECT_DIR
from pipelines.lib.warehouse.raw_schema import ensure_raw_tables
from pipelines.lib.warehouse.warehouse import connect


def dbt_on_empty_warehouse(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` on a new warehouse holding every raw table (empty), with its own target folder."""
    home = tmp_path / "home"
    home.mkdir()
    with connect(home / "warehouse.duckdb") as con:
        ensure_raw_tables(con)
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *args, "--target-path", str(tmp_path / "target")],
        cwd=DBT_PROJECT_DIR,
        env=os.environ | {"FINOPS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=900,
    )
