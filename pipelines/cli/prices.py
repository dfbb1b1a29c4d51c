"""`gpu-finops prices refresh`: market GPU prices and exchange rates for a day or a range of days."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

from pipelines.cli.console import console
from pipelines.cli.runs import build_models, run_assets
from pipelines.defs.asset_selections import group_loads
from pipelines.lib.operations import signals
from pipelines.lib.operations.outages import failure_line
from pipelines.lib.settings import Settings


def prices_refresh(settings: Settings, args: argparse.Namespace) -> int:
    if args.offline:
        settings = replace(settings, offline=True)
    last = args.date or datetime.now(UTC).date()
    first = args.first_day or last
    if first > last:
        print(f"error: --from {first} is after --date {last}; give the first day, then the last", file=sys.stderr)
        return 2
    signals.progress.start("price refresh (feeds are loaded one by one; each is whole or absent)", "price marts build")
    loaded, ok = refresh_prices(settings, first, last)
    signals.progress.finish(f"loaded {loaded} price and rate feeds")
    if not loaded:
        print("Nothing was loaded, so the price marts were not rebuilt.")
    elif args.no_build:
        print(REBUILD_HINT)
    else:
        # The marts that read prices (the price index, buy vs rent) also read billing and the seeds: every model
        # is built, as after an ingest, so a new warehouse gets them all.
        print("Building the models that read prices (marts.fct_gpu_price_index and the rest) …")
        ok = build_models(settings, REBUILD_HINT) and ok
    return 0 if ok else 1


REBUILD_HINT = "Prices loaded; `gpu-finops ingest --rebuild` (or the daily run) rebuilds the price marts."


def refresh_prices(settings: Settings, first: date, last: date, *, per_feed: bool = True) -> tuple[int, bool]:
    """Materialize the daily-partitioned price and exchange-rate assets for the days first…last, in one run.

    Prints a line per feed (`per_feed`), or one line for all. Returns how many feeds loaded, and whether all did.
    """
    from pipelines.definitions import defs
    from pipelines.lib.catalog.prices import PRICE_FEEDS

    selection = group_loads("prices")
    keys = selection.resolve(defs().resolve_asset_graph())
    days = (last - first).days + 1
    if first == last:
        run: dict[str, Any] = {"partition_key": last.isoformat()}
    else:
        run = {
            "tags": {
                "dagster/asset_partition_range_start": first.isoformat(),
                "dagster/asset_partition_range_end": last.isoformat(),
            }
        }
    # Dagster's console log (retries, stack traces) goes to the log file: an outage is one line per feed here.
    result = run_assets(selection, "prices", settings, partitions=days * len(keys), **run)
    span = f"{first}" if first == last else f"{first}…{last}"
    reported: dict[str, int] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        asset = materialization.asset_key.to_user_string()
        if asset in reported:
            continue
        metadata = {key: value.value for key, value in materialization.metadata.items()}
        reported[asset] = int(metadata.get("rows_loaded") or 0)
        if per_feed:
            print(
                f"{asset} {span}: {metadata.get('status', 'loaded')}, "
                f"{metadata.get('rows_loaded', 0)} rows from {metadata.get('source_url', '-')}"
            )
    if not per_feed:
        print(f"loaded    prices and exchange rates, {span}: {len(reported)} feeds, {sum(reported.values()):,} rows")
    failed = set()
    for event in result.all_events:
        if event.is_step_failure:
            failed.add(event.step_key)
            print(failure_line(event.step_key.replace("__", "/"), event.step_failure_data.error), file=sys.stderr)
    keys_needed = {f"prices/{feed.name}": feed.credential_env for feed in PRICE_FEEDS if feed.credential_env}
    for key in sorted(keys, key=lambda key: key.to_user_string()):
        if key.to_user_string() not in reported and "__".join(key.path) not in failed:
            needed = keys_needed.get(key.to_user_string())
            why = f"set {needed} to fetch it" if needed and not os.environ.get(needed) else "see the log file for why"
            print(f"{key.to_user_string()} {span}: skipped ({why})")
    if failed:
        console.name_log("Log (Dagster's events, retries, stack traces)", sys.stderr)
    return len(reported), result.success
