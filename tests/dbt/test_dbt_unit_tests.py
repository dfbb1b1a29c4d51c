"""Every dbt unit test of the project passes, in one dbt build on an empty warehouse.

Unit tests check the SQL against hand-computed cases; they are left out of the Dagster asset's production
builds (`--exclude-resource-type unit_test`, as dbt recommends), so this build is where they run. dbt needs
the parents' tables to exist to type a unit test's inputs, hence the models are built too (without their
data tests, which the end-to-end tests run on real data). Enforced contracts are checked as each mart is
created. The build is the session's `dbt_unit_test_build` (tests/conftest.py), which other tests read too. On Spark
the unit tests run against the standalone cluster (tests/spark/test_spark_engine.py).
"""

from __future__ import annotations

import re
import subprocess

from tests.dbt.test_finance_marts import FINANCE_MARTS, FINANCE_UNIT_TESTS
from tests.support.dbt_helpers import passed_unit_tests, unit_tests_in_yaml


def test_every_dbt_unit_test_passes(dbt_unit_test_build: subprocess.CompletedProcess[str]):
    declared = unit_tests_in_yaml()
    assert declared >= FINANCE_UNIT_TESTS  # the finance reference cases among them
    assert "int_gcp__billing_cost_lines_one_id_per_commitment" in declared
    _check_build(dbt_unit_test_build, declared)


def _check_build(result: subprocess.CompletedProcess[str], declared: set[str]) -> None:
    assert result.returncode == 0, result.stdout[-4000:]
    passed = passed_unit_tests(result.stdout)
    assert passed == declared, sorted(declared ^ passed)
    for mart in FINANCE_MARTS:
        assert re.search(rf"OK created sql (table|incremental) model marts\.{mart} ", result.stdout), mart
