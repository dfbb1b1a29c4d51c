"""The quality suites DuckDB evaluates are Great Expectations' own, and an ingest runs them without importing GX.

Each rule of a suite carries a GX expectation (class and arguments) beside its SQL; the gate records GX's type
name, column, description and severity. Here every suite of every subject is built as real GX expectations and
compared with what the gate reads, and a real ingest in a child process is checked for GX in its modules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipelines.lib.catalog.billing import BILLING_SOURCES
from pipelines.lib.catalog.registry import CATALOGUE
from pipelines.lib.ingest.landing import register
from pipelines.lib.quality.rules import build_expectations, gx_expectations, table_rules
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import INGEST_FOCUS_SCRIPT, SEPTEMBER
from tests.support.warehouse_helpers import query

SUITES = [(source.raw_table, source.quality) for source in BILLING_SOURCES] + [
    (subject.raw_table, subject.quality) for subject in CATALOGUE
]


def test_every_rule_the_gate_evaluates_is_a_great_expectations_expectation():
    gxe = gx_expectations()
    for table, facts in SUITES:
        rules = table_rules(table, facts)
        expectations = build_expectations(table, facts)
        assert len(rules) == len(expectations) > len(table.columns), table.name
        for rule, expectation in zip(rules, expectations, strict=True):
            assert isinstance(expectation, gxe.Expectation)
            assert expectation.expectation_type == rule.type, rule.kind
            assert expectation.description == rule.description
            assert getattr(expectation, "column", None) == rule.column
            assert str(expectation.severity.value) == {"error": "critical", "warning": "warning"}[rule.severity]
            if rule.type.startswith(("expect_column_values_to_be_in", "expect_column_values_to_match")):
                assert rule.failed and rule.value, rule.description


PROBE = (
    INGEST_FOCUS_SCRIPT
    + """
print("great_expectations" in sys.modules, "pandas" in sys.modules)
"""
)


def test_an_ingest_gates_its_delivery_without_importing_great_expectations(tmp_path: Path):
    """Importing GX costs ~6 s of CPU per process (pandas, pyspark): the gate needs only the suite's arguments."""
    home = FinopsHome(tmp_path / "home").create_folders()
    odd = focus_rows(SEPTEMBER, SEPTEMBER | {"ConsumedQuantity": "-2", "PricingQuantity": "-2"})
    register(home, "focus", write_csv(tmp_path / "odd.csv", odd))
    script = tmp_path / "ingest.py"
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), str(home.root)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "False"]
    warned = query(
        home.warehouse,
        "select description, unexpected_count, example_row from audit.quality_results where not passed order by 1",
    )
    assert [row[1:] for row in warned] == [(1, 2), (1, 2)]  # the second line of the file
    assert all(
        row[0].endswith("is not negative on usage lines that are not corrections (a correction may be negative)")
        for row in warned
    )
