"""Every documented layout through the real ingest and its quality gate: each delivery loads, with exactly the
warnings the policy (docs/data-quality.md) gives it: the reader's (derived values) and the suite's (what the spec
allows but is unusual), both counted here from the files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from tests.conformance.cases import CASES, Case, suite_warnings
from tests.support.warehouse_helpers import query


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_delivery_loads_with_exactly_its_warnings(tmp_path: Path, case: Case):
    home = FinopsHome(tmp_path / "home").create_folders()
    delivery = register(home, case.source, case.path)
    with connect(home.warehouse) as con:
        (result,) = ingest_landing_zone(home, con, SOURCES_BY_NAME[case.source], log=logging.getLogger("test"))

    assert result.status == "loaded", result.reason
    expected = case.warnings | suite_warnings(case)
    assert {warning["rule"]: warning["rows"] for warning in result.warnings} == expected
    recorded = query(
        home.warehouse,
        "select description, unexpected_count from audit.quality_results where severity = 'warning' and not passed",
    )
    assert dict(recorded) == expected
    assert all(warning["example"].startswith(f"{delivery.name} row ") for warning in result.warnings)


def test_the_public_focus_sample_carries_the_reversals_the_issue_names():
    """The FinOps Foundation's FOCUS 1.0 sample: 12 Microsoft usage lines with negative quantities, never rejected."""
    (sample,) = [case for case in CASES if case.id == "focus-1.0-public-sample"]
    warned = suite_warnings(sample)
    assert (
        warned[
            "ConsumedQuantity is not negative on usage lines that are not corrections (a correction may be negative)"
        ]
        == 12
    )
    assert (
        warned["PricingQuantity is not negative on usage lines that are not corrections (a correction may be negative)"]
        == 12
    )
