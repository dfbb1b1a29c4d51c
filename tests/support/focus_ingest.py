"""Ingesting hand-written FOCUS deliveries in a test: the billing periods they use, in-process or in a child
process that a test can pause and kill."""

from __future__ import annotations

import logging

from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect

SEPTEMBER = {"BillingPeriodStart": "2026-09-01T00:00:00Z", "BillingPeriodEnd": "2026-10-01T00:00:00Z"}
OCTOBER = {
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargePeriodStart": "2026-10-01T00:00:00Z",
    "ChargePeriodEnd": "2026-10-02T00:00:00Z",
}

INGEST_FOCUS_SCRIPT = """
import logging, sys
from pathlib import Path
from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect

home = FinopsHome(Path(sys.argv[1]))
with connect(home.warehouse) as con:
    ingest_landing_zone(home, con, FOCUS, log=logging.getLogger())
"""
"""`python -c INGEST_FOCUS_SCRIPT <FINOPS_HOME>`: the FOCUS landing zone's ingest as its own process."""


def ingest_focus(home: FinopsHome):
    """Load what the FOCUS landing zone holds, in this process; the per-delivery results."""
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, FOCUS, log=logging.getLogger("tests"))
