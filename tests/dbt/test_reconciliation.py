"""audit.reconciliation and audit.reconciliation_invoices on a real dbt build, and the test that fails the run.

One dbt build of the reconciliation models and everything upstream over a small FOCUS delivery with
two invoices; then a sub-cent change to one raw line must show up as a difference and fail
`assert_marts_reconcile_to_raw`.
"""

from __future__ import annotations

import logging
import subprocess
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.warehouse_helpers import query, rewrite_lake_files

SEP = datetime(2026, 9, 1)
EUR_ACCOUNT = {"BillingAccountId": "eu-payer", "BillingCurrency": "EUR"}


def dbt(home: FinopsHome, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-09-30"}
    return run_dbt(home.root, tmp_path / "target", *args, "--log-path", str(tmp_path / "logs"), environment=env)


@pytest.mark.e2e
def test_reconciliation_per_period_and_invoice_and_a_difference_fails_the_run(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    rows = focus_rows(
        {"InvoiceId": "INV-1", "BilledCost": "10.5", "EffectiveCost": "10.5"},
        {"InvoiceId": "INV-1", "BilledCost": "0.25", "EffectiveCost": "0.2"},
        {"BilledCost": "3", "EffectiveCost": "3"},  # not invoiced yet
        {**EUR_ACCOUNT, "InvoiceId": "INV-EU", "BilledCost": "2", "EffectiveCost": "2"},
    )
    register(home, "focus", write_csv(tmp_path / "sep.csv", rows))
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        loaded = ingest_landing_zone(home, con, FOCUS, log=logging.getLogger("test"))
    assert [r.status for r in loaded] == ["loaded"]

    models = ("--select", "+reconciliation", "+reconciliation_invoices", "--indirect-selection", "cautious")
    build = dbt(home, tmp_path, "build", *models)
    assert build.returncode == 0, build.stdout[-3000:]
    assert "assert_marts_reconcile_to_raw" in build.stdout

    per_period = query(
        home.warehouse,
        "select check_name, x_source, billing_currency, expected_line_count, actual_line_count, "
        "expected_billed_cost, billed_cost_difference, expected_effective_cost, effective_cost_difference, reconciled "
        "from audit.reconciliation where billing_period_start = '2026-09-01' and x_source in ('focus', 'all sources') "
        "order by check_name, billing_currency",
    )
    # USD: 10.5 + 0.25 + 3 = 13.75 billed, 10.5 + 0.2 + 3 = 13.7 effective; EUR: 2 and 2.
    usd = (3, 3, Decimal("13.75"), Decimal(0), Decimal("13.7"), Decimal(0), True)
    eur = (1, 1, Decimal(2), Decimal(0), Decimal(2), Decimal(0), True)
    marts = "int_billing__cost_lines vs fct_cost_daily"
    gpu = "int_billing__cost_lines (gpu) vs fct_gpu_spend_daily"  # every line is a p5.48xlarge (8 GPUs)
    raw = "raw focus vs int_billing__cost_lines (focus)"
    assert per_period == [
        (gpu, "all sources", "EUR", *eur),
        (gpu, "all sources", "USD", *usd),
        (marts, "all sources", "EUR", *eur),
        (marts, "all sources", "USD", *usd),
        (raw, "focus", "EUR", *eur),
        (raw, "focus", "USD", *usd),
    ]
    invoices = query(home.warehouse, "select * from audit.reconciliation_invoices order by invoice_id")
    assert invoices == [
        ("focus", "INV-1", "USD", 2, 2, Decimal("10.75"), Decimal("10.75"), Decimal(0), True),
        ("focus", "INV-EU", "EUR", 1, 1, Decimal(2), Decimal(2), Decimal(0), True),
    ]

    # A tenth of a cent more on one raw line after the build: both views show it, the test fails the run.
    with connect(home.warehouse) as con:
        rewrite_lake_files(
            con,
            "raw.focus_cost_and_usage",
            {"BilledCost": "case when BilledCost = 0.25 then BilledCost + 0.001 else BilledCost end"},
        )
    assert query(
        home.warehouse,
        "select x_source, billing_currency, billed_cost_difference from audit.reconciliation where not reconciled",
    ) == [("focus", "USD", Decimal("-0.001"))]
    unreconciled_invoices = (
        "select invoice_id, billed_cost_difference from audit.reconciliation_invoices where not reconciled"
    )
    assert query(home.warehouse, unreconciled_invoices) == [("INV-1", Decimal("-0.001"))]
    failed = dbt(home, tmp_path, "test", "--select", "assert_marts_reconcile_to_raw")
    assert failed.returncode != 0
    assert "Got 2 results" in failed.stdout, failed.stdout[-3000:]
