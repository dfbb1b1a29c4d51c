"""One daily-partitioned asset per market-price feed, generated from the catalogue."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.prices.fx_rates import PRICE_PARTITIONS, partition_days
from pipelines.lib.catalog.prices import PRICE_FEED_ENTRIES, PriceFeedEntry
from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings
from sources.common.http import MissingCredential


def build_price_feed_asset(entry: PriceFeedEntry) -> dg.AssetsDefinition:
    feed = entry.feed
    needs_key = (
        f" Needs {feed.credential_env} in the environment; without it the asset is skipped."
        if feed.credential_env
        else ""
    )

    @dg.asset(
        key=list(entry.asset_key),
        group_name="prices",
        partitions_def=PRICE_PARTITIONS,
        pool=DUCKDB_WRITER_POOL,
        kinds={"duckdb"},
        output_required=False,
        backfill_policy=dg.BackfillPolicy.single_run(),
        # Flags a feed nobody refreshes; a stale capture reloaded daily is the `delivery_is_fresh` check's.
        freshness_policy=dg.FreshnessPolicy.time_window(fail_window=entry.delivery_cadence + entry.delivery_grace),
        description=(
            f"{feed.title}: {feed.provider}'s GPU prices as captured on the partition's day, one row per offer in "
            f"{feed.table} (feed = '{feed.name}'). Online by default ({feed.base_url_env} overrides the base URL), "
            f"offline (FINOPS_OFFLINE=1) from the bundled capture. A failed fetch leaves earlier days as they were."
            f"{needs_key}"
        ),
    )
    def _price_feed(context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]):
        try:
            with duckdb.get_connection() as con:
                load = refresh_price_feed(
                    settings.home.create_folders(),
                    con,
                    feed,
                    partition_days(context),
                    offline=settings.offline,
                    log=context.log,
                )
        except MissingCredential as missing:
            context.log.warning(str(missing))
            return
        yield dg.MaterializeResult(
            metadata={
                "status": load.outcome.status,
                "days": len(load.days),
                "observed_at": load.observed_at.isoformat(),
                "source_url": load.source_urls[0] if load.source_urls else "-",
                "captures": ", ".join(str(capture) for capture in load.captures),
                "rows_loaded": load.outcome.rows,
                "replaced_rows": load.outcome.replaced_rows,
                "dagster/row_count": load.offers,
            }
        )

    return _price_feed


defs = dg.Definitions(assets=[build_price_feed_asset(entry) for entry in PRICE_FEED_ENTRIES])
