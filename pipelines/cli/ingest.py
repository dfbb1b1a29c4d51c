"""`gpu-finops ingest`: load billing files or folders, then rebuild what depends on them."""

from __future__ import annotations

import argparse
import sys

from pipelines.cli.runs import build_models, execute, print_deliveries
from pipelines.lib.ingest.billing_sources import SOURCES_BY_NAME
from pipelines.lib.operations import signals
from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.builds import owed_build


def ingest(home: FinopsHome, args: argparse.Namespace) -> int:
    from pipelines.lib.ingest.landing import register
    from pipelines.lib.transform.asset_selections import load_selection
    from sources.common.detect import detect_source

    if not args.paths:
        if not args.rebuild:
            print("error: give a PATH to load, or --rebuild to rebuild the models from what is loaded", file=sys.stderr)
            return 2
        return 0 if build_models("run `gpu-finops ingest --rebuild` again") else 1
    deliveries = []
    for path in args.paths:
        source = args.source
        if source is None:
            source = detect_source(path)
            print(f"Recognised {path} as {SOURCES_BY_NAME[source].title} (override with --source).")
        deliveries.append(register(home, source, path))
        print(f"Registered {path} as {source}/{deliveries[-1].name}")
    keys = sorted({SOURCES_BY_NAME[delivery.source].asset_key for delivery in deliveries})
    signals.progress.start(
        f"loading {', '.join(str(path) for path in args.paths)} (a delivery not yet committed was rolled back; "
        "run the same command again)",
        "model build",
    )
    results, ok = execute(load_selection(*keys), "loading")
    signals.progress.finish(f"loaded {sum(r['status'] == 'loaded' for r in results)} of {len(results)} deliveries")
    print_deliveries(results)
    loaded = any(result["status"] == "loaded" for result in results)
    # A crash can leave loads the models never saw (killed between load and build, or mid-build).
    owed = owed_build(home.warehouse) if ok and not (args.rebuild or loaded) else None
    if owed:
        print(f"Rebuilding the models: {owed}.")
    if ok and (args.rebuild or loaded or owed):
        ok = build_models("the next `gpu-finops ingest` rebuilds")
    elif ok:
        # Rebuilding would change nothing, and a rejected delivery leaves the warehouse as it was.
        print("Nothing new was loaded, so the models were not rebuilt (--rebuild forces it).")
    mine = {delivery.name for delivery in deliveries}
    if not ok or any(r["status"] == "rejected" and r["delivery"] in mine for r in results):
        return 1
    return 0
