"""`gpu-finops ingest`: load billing files or folders, then rebuild what depends on them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pipelines.cli.runs import build_models, execute, print_deliveries, published_outcomes, withheld_deliveries
from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.operations import signals
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.transform.builds import owed_build

if TYPE_CHECKING:
    from sources.common.delivery import Delivery


def ingest(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    from pipelines.defs.asset_selections import load_selection
    from pipelines.lib.ingest.landing import register
    from sources.common.detect import detect_source

    retries = args.retry or []
    rebuild = args.rebuild or args.full_refresh
    if not args.paths and not retries:
        if not rebuild:
            print(
                "error: give a PATH to load, --retry LOAD_ID to load a withheld delivery again, or --rebuild to "
                "rebuild the models from what is loaded",
                file=sys.stderr,
            )
            return 2
        built = build_models(
            settings, "run `gpu-finops ingest --rebuild` again", full=True, full_refresh=args.full_refresh
        )
        return 0 if built else 1
    deliveries = []
    for path in args.paths:
        source = args.source
        if source is None:
            source = detect_source(path)
            print(f"Recognised {path} as {SOURCES_BY_NAME[source].title} (override with --source).")
        deliveries.append(register(home, source, path))
        print(f"Registered {path} as {source}/{deliveries[-1].name}")
    for load_id in retries:
        released = _release(home, load_id)
        if released is None:
            return 2
        deliveries.append(released)
        print(f"Released withheld load {load_id} from quarantine as {released.source}/{released.name}")
    keys = sorted({SOURCES_BY_NAME[delivery.source].asset_key for delivery in deliveries})
    described = ", ".join([str(path) for path in args.paths] + retries)
    signals.progress.start(
        f"loading {described} (a delivery not yet committed was rolled back; run the same command again)",
        "model build",
    )
    results, ok = execute(load_selection(*keys), "loading", settings)
    signals.progress.finish(f"loaded {sum(r['status'] == 'loaded' for r in results)} of {len(results)} deliveries")
    loaded = any(result["status"] == "loaded" for result in results)
    # A crash can leave loads the models never saw (killed between load and build, or mid-build).
    owed = owed_build(home.warehouse) if ok and not (rebuild or loaded) else None
    if owed:
        print(f"Rebuilding the models: {owed}.")
    built = False
    if ok and (rebuild or loaded or owed):
        # What the loads changed is built (the build plans it); --rebuild builds every model.
        next_time = "the next `gpu-finops ingest` rebuilds"
        ok = built = build_models(settings, next_time, full=rebuild, full_refresh=args.full_refresh)
    elif ok:
        # Rebuilding would change nothing, and a rejected delivery leaves the warehouse as it was.
        print("Nothing new was loaded, so the models were not rebuilt (--rebuild forces it).")
    # After a build each delivery's figures are the models' (and a delivery they refused says so).
    outcomes = published_outcomes(home.warehouse, results) if built else None
    print_deliveries(results, outcomes)
    mine = {delivery.name for delivery in deliveries}
    refused = {r["delivery"] for r in results if r["status"] == "rejected"} | set(
        withheld_deliveries(results, outcomes or {})
    )
    return 1 if not ok or refused & mine else 0


def _release(home: FinopsHome, load_id: str) -> Delivery | None:
    """The withheld load's delivery, back in the landing zone; None (with a message) when it cannot be."""
    from pipelines.lib.transform.withholding import release_withheld
    from pipelines.lib.warehouse.connection import connect

    try:
        with connect(home.warehouse, read_only=True) as con:
            return release_withheld(home, con, load_id)
    except (LookupError, FileNotFoundError, FileExistsError) as error:
        print(f"error: cannot retry {load_id}: {error}", file=sys.stderr)
        return None
