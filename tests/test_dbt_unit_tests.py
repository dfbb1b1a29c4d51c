"""Every dbt unit test of the project passes, in one dbt build on an empty warehouse.

Unit tests check the SQL against hand-computed cases; they are left out of the Dagster asset's production
builds (`--exclude-resource-type unit_test`, as dbt recommends), so this build is where they run. dbt needs
the parents' tables to exist to type a unit test's inputs, hence the models are built too (without their
data tests, which the end-to-end tests run on real data). Enforced contracts are checked as each mart is
created.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pipelines.lib.settings import DBT_PROJECT_DIR
from tests.dbt_helpers import dbt_on_empty_warehouse
from tests.test_finance_marts import FINANCE_MARTS, FINANCE_UNIT_TESTS


def unit_tests_in_yaml() -> set[str]:
    """The unit tests declared in the project's YAML, read here rather than from dbt's manifest."""
    names = set()
    for path in (DBT_PROJECT_DIR / "models").rglob("*.yml"):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        names |= {test["name"] for test in document.get("unit_tests", [])}
    return names


def test_every_dbt_unit_test_passes(tmp_path: Path):
    declared = unit_tests_in_yaml()
    assert declared >= FINANCE_UNIT_TESTS  # the finance reference cases among them
    assert "int_gcp__billing_cost_lines_one_id_per_commitment" in declared
    result = dbt_on_empty_warehouse(tmp_path, "build", "--exclude", "test_type:data")
    assert result.returncode == 0, result.stdout[-4000:]
    passed = set(re.findall(r"PASS [a-z0-9_]+::([a-z0-9_]+) ", result.stdout))
    assert passed == declared, sorted(declared ^ passed)
    for mart in FINANCE_MARTS:
        assert f"OK created sql table model marts.{mart} " in result.stdout, mart
