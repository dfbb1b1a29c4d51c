"""Deliveries the models refused: taken back out of raw, quarantined with the rule, and released to load again.

A build that fails on rows of one delivery withholds that delivery only (pipelines/lib/transform/model_audit.py
finds it); everything else publishes in the same command. Withholding restores what the delivery had replaced
(`withhold_load`), records why in `audit.withheld_loads` and moves its files from the landing zone to quarantine with
a reason file naming the rule and the first failing row. `gpu-finops ingest --retry <load>` releases it into the
landing zone after a fix of the models; a corrected delivery simply loads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import duckdb

from pipelines.lib.ingest.landing import quarantine, release
from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.model_audit import ModelRuleFailure
from pipelines.lib.warehouse.publication import withhold_load
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput


def withheld_outcome(load_id: str) -> str:
    return (
        "This delivery was loaded, then withheld: a model rule failed on its rows, so its rows were taken back out "
        "of the warehouse and what it had replaced restored; every other delivery was published. Fix the file and "
        f"ingest it again, or once the models are fixed run `gpu-finops ingest --retry {load_id}`."
    )


def withhold(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, failures: Sequence[ModelRuleFailure], log: logging.Logger
) -> list[str]:
    """Withhold every load `failures` name, with its first failure as the recorded reason and all of them in the
    message; the ids withheld, newest first."""
    by_load: dict[str, list[ModelRuleFailure]] = {}
    for failure in failures:
        by_load.setdefault(failure.load_id, []).append(failure)
    loads = con.execute(
        "select load_id, source, delivery from audit.loads where load_id in (select unnest(?::varchar[])) "
        "order by loaded_at desc",
        [list(by_load)],
    ).fetchall()
    for load_id, source, name in loads:
        first = by_load[load_id][0]
        message = "; and ".join(failure.describe() for failure in by_load[load_id])
        why = {
            "model": first.model,
            "test": first.test,
            "rule": first.rule,
            "failing_rows": first.failing_rows,
            "example_file": first.example_file,
            "example_row": first.example_row,
            "example_column": first.example_column,
            "message": message,
        }
        withhold_load(con, load_id, why)
        landing = home.landing_for(source)
        error = RejectedInput(
            first.example_file or name,
            f"REJECTED by model rule {message}",
            row=first.example_row,
            column=first.example_column,
        )
        quarantine(home, Delivery(source, landing / name, landing), error, outcome=withheld_outcome(load_id))
        log.warning("withheld %s/%s (load %s): REJECTED by model rule %s", source, name, load_id, message)
    return [load_id for load_id, _, _ in loads]


def release_withheld(home: FinopsHome, con: duckdb.DuckDBPyConnection, load_id: str) -> Delivery:
    """Put a withheld load's delivery back in the landing zone, to be loaded (and audited) again."""
    found = con.execute(
        "select source, delivery from audit.loads where load_id = ? and status = 'withheld'", [load_id]
    ).fetchall()
    if not found:
        raise LookupError(f"no withheld load {load_id} (audit.loads lists withheld loads with status 'withheld')")
    source, name = found[0]
    return release(home, source, name)
