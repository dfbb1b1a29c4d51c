"""`gpu-finops prices refresh`: market GPU prices and exchange rates for a day or a range of days."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, date, datetime
from typing import Any

from pipelines.lib.operations import signals
from pipelines.lib.operations.outages import console_to, failure_line, log_file
from pipelines.lib.operations.recovery import cli_run_tags, prepare_instance
from pipelines.lib.settings import FinopsHome, finops_home


def prices_refresh(home: FinopsHome, args: argparse.Namespace) -> int:
    if args.offline:
        os.environ["FINOPS_OFFLINE"] = "1"
    last = args.date or datetime.now(UTC).date()
    first = args.first_day or last
    if first > last:
        print(f"--from {first} is after {last}", file=sys.stderr)
        return 2
    signals.progress.start("price refresh (feeds are loaded one by one; each is whole or absent)")
    return 0 if refresh_prices(first, last) else 1


def refresh_prices(first: date, last: date) -> bool:
    """Materialize the daily-partitioned price and exchange-rate assets for the days first…last, in one run."""
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.lib.prices.price_feeds import PRICE_FEEDS

    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    selection = dg.AssetSelection.groups("prices").resolve(definitions.resolve_asset_graph())
    if first == last:
        partitions: dict[str, Any] = {"partition_key": last.isoformat(), "tags": cli_run_tags()}
    else:
        partitions = {
            "tags": {
                "dagster/asset_partition_range_start": first.isoformat(),
                "dagster/asset_partition_range_end": last.isoformat(),
            }
            | cli_run_tags()
        }
    # Dagster's console log (retries, stack traces) goes to a log file: an outage is one line per feed here.
    log = log_file(finops_home().logs, "prices-refresh")
    with dg.DagsterInstance.get() as instance, console_to(log):
        prepare_instance(instance)
        result = job.execute_in_process(
            instance=instance, asset_selection=list(selection), raise_on_error=False, **partitions
        )
    signals.raise_if_stopped()
    days = f"{first}" if first == last else f"{first}…{last}"
    reported: set[str] = set()
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        asset = materialization.asset_key.to_user_string()
        if asset in reported:
            continue
        reported.add(asset)
        metadata = {key: value.value for key, value in materialization.metadata.items()}
        print(
            f"{asset} {days}: {metadata.get('status', 'loaded')}, "
            f"{metadata.get('rows_loaded', 0)} rows from {metadata.get('source_url', '-')}"
        )
    failed = set()
    for event in result.all_events:
        if event.is_step_failure:
            failed.add(event.step_key)
            print(failure_line(event.step_key.replace("__", "/"), event.step_failure_data.error), file=sys.stderr)
    keys_needed = {f"prices/{feed.name}": feed.credential_env for feed in PRICE_FEEDS if feed.credential_env}
    for key in sorted(selection, key=lambda key: key.to_user_string()):
        if key.to_user_string() not in reported and "__".join(key.path) not in failed:
            needed = keys_needed.get(key.to_user_string())
            why = f"set {needed} to fetch it" if needed and not os.environ.get(needed) else "see the log file for why"
            print(f"{key.to_user_string()} {days}: skipped ({why})")
    print(f"Log (Dagster's events, retries, stack traces): {log}", file=sys.stderr if failed else sys.stdout)
    return result.success
