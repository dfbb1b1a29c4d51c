"""Options and fixtures every test folder shares."""

from __future__ import annotations

import importlib.util
import os
import subprocess

import pytest

from tests.support.dbt_helpers import UNIT_TEST_BUILD, shared_dbt_on_empty_warehouse
from tests.support.paused_child import kill_paused_children


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `spark` need the `spark` extra (pyspark, dbt-spark): skipped where it is not installed."""
    if importlib.util.find_spec("pyspark") is not None and importlib.util.find_spec("dbt.adapters.spark"):
        return
    skip = pytest.mark.skip(reason="needs the spark extra: pip install -e '.[spark]' (and Java 17)")
    for item in items:
        if "spark" in item.keywords:
            item.add_marker(skip)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite checked-in snapshots (tests/pipelines/snapshots/) from the code instead of comparing",
    )


@pytest.fixture(autouse=True)
def no_paused_child_left_behind():
    """A child a test started with tests/support/paused_child.py does not outlive the test."""
    yield
    kill_paused_children()


@pytest.fixture(scope="session")
def dbt_unit_test_build(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One `dbt build` of every model and unit test on an empty warehouse for the whole test run: the tests that
    check unit tests read its output instead of building again. Under pytest-xdist the workers share it (their
    temporary folders have one parent per run); the first to ask builds, the others wait for it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    return shared_dbt_on_empty_warehouse(root / "dbt-unit-test-build", *UNIT_TEST_BUILD)
