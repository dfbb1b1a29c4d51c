"""Great Expectations checks on the rows each load wrote, one per ingest or feed asset, and warning checks.

Built from the catalogue (`pipelines.lib.catalog.registry`): the billing sources, every price feed, the
exchange rates and the telemetry tables. A check validates the loads of its own writer (`load_source`, as several feeds
share raw.price_observations) not yet passed; on a daily-partitioned asset, only those holding rows
of the run's partitions, so a backfill of one day is judged on that day.

A billing delivery is validated before its load commits (`QualityGate`, pipelines/lib/ingest/billing_deliveries.py), so
its suite check finds nothing left to check and is not blocking: rows already in raw never stop the
models of every source (a failing load of an older version shows in `audit.source_status`). Feeds'
checks stay blocking for their own partitions. Each billing source also has a WARN check listing the
warnings its loads in raw carry (docs/data-quality.md), and a check, run after the model build, that none of its
deliveries was withheld for breaking a model rule.
"""

from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.billing import BILLING_SOURCES, BillingSource
from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.registry import CATALOGUE, DELIVERED_SOURCES
from pipelines.lib.catalog.tables import RawTable
from pipelines.lib.quality.freshness import ensure_freshness_view
from pipelines.lib.quality.results import QualityReport, ensure_quality_table, live_warnings
from pipelines.lib.quality.suite import Partition, check_pending_loads
from pipelines.lib.settings import DUCKDB_WRITER_POOL


def run_partition(context: dg.AssetCheckExecutionContext, column: str | None) -> Partition | None:
    """The days this run materializes (a daily partition or a single-run backfill's range), as a row filter."""
    if column is None or not (context.has_partition_key or context.has_partition_key_range):
        return None
    keys = context.partition_key_range
    first, last = date.fromisoformat(keys.start), date.fromisoformat(keys.end)
    return Partition(column, first, last)


def report_metadata(report: QualityReport) -> dict[str, dg.MetadataValue | int]:
    failures = report.failures
    rows = ["| load | expectation | observed |", "|---|---|---|"] + [
        f"| {f.load_id[:8]} | {f.description} | {f.observed_value.replace('|', '/')} |" for f in failures[:20]
    ]
    return {
        "loads_checked": len(report.checked_loads),
        "expectations_evaluated": len(report.results),
        "expectations_failed": len(failures),
        "failures": dg.MetadataValue.md("\n".join(rows) if failures else "none"),
    }


def build_load_quality_check(subject: CatalogEntry) -> dg.AssetChecksDefinition:
    gated = isinstance(subject.raw_table, RawTable)

    @dg.asset_check(
        asset=dg.AssetKey(list(subject.asset_key)),
        name="load_passes_quality_suite",
        blocking=not gated,
        pool=DUCKDB_WRITER_POOL,
        description=(
            f"Great Expectations suite over every {subject.title} load not yet passed"
            + (" in this run's partitions" if subject.partition_column else "")
            + ": columns and types, keys present, allowed values, finite amounts, values in their ranges, dates "
            "in order, ISO 4217 currencies. Each result is kept in audit.quality_results; "
            + (
                "deliveries are checked before their load commits, so this finds only loads of older versions."
                if gated
                else "a failure stops this run's downstream models."
            )
        ),
    )
    def check(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            report = check_pending_loads(
                con,
                subject.raw_table,
                subject.quality,
                source=subject.name,
                run_id=context.run.run_id,
                load_source=subject.load_source,
                partition=run_partition(context, subject.partition_column),
            )
        for failure in report.failures:
            context.log.warning(
                "%s load %s: %s failed (%s)",
                subject.name,
                failure.load_id,
                failure.description,
                failure.observed_value,
            )
        return dg.AssetCheckResult(passed=report.passed, metadata=report_metadata(report))

    return check


def build_load_warnings_check(subject: CatalogEntry) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(list(subject.asset_key)),
        name="loads_carry_no_warnings",
        blocking=False,
        pool=DUCKDB_WRITER_POOL,
        description=(
            f"Warnings recorded for the {subject.title} loads now in raw: rows the spec allows or providers emit but "
            "that are unusual, and values the reader derived (docs/data-quality.md). A warning never blocks."
        ),
    )
    def check(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            ensure_quality_table(con)
            warnings = live_warnings(con, subject.raw_table.name, load_source=subject.load_source)
        rows = ["| delivery | warning | rows | first at |", "|---|---|---|---|"] + [
            f"| {w.delivery} | {w.rule.replace('|', '/')} | {'-' if w.rows is None else w.rows} | {w.example or '-'} |"
            for w in warnings[:20]
        ]
        return dg.AssetCheckResult(
            passed=not warnings,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "warnings": len(warnings),
                "loads_with_warnings": len({w.load_id for w in warnings}),
                "first_warnings": dg.MetadataValue.md("\n".join(rows) if warnings else "none"),
            },
        )

    return check


PUBLISHED_AFTER = dg.AssetKey(["intermediate", "int_billing__cost_lines"])
"""The model every billing delivery reaches: the published check runs after the build that decides."""


def build_deliveries_published_check(source: BillingSource) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(list(source.asset_key)),
        name="deliveries_are_published",
        blocking=False,
        pool=DUCKDB_WRITER_POOL,
        additional_deps=[PUBLISHED_AFTER],
        description=(
            f"Every {source.title} delivery that loaded reached the marts: none is withheld because its rows broke a "
            "model rule (write, audit, publish; docs/data-quality.md). A withheld delivery leaves the source stale "
            "until a corrected delivery carries its billing periods; every other source is published regardless."
        ),
    )
    def check(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            ensure_freshness_view(con, DELIVERED_SOURCES)
            withheld, why = con.execute(
                "select loads_withheld, why from audit.source_status where source = ?", [source.name]
            ).fetchone()
        return dg.AssetCheckResult(
            passed=withheld == 0,
            metadata={"deliveries_withheld": withheld, "why": why if withheld else "-"},
        )

    return check


defs = dg.Definitions(
    asset_checks=[
        *(build_load_quality_check(subject) for subject in CATALOGUE),
        *(build_load_warnings_check(subject) for subject in CATALOGUE if isinstance(subject.raw_table, RawTable)),
        *(build_deliveries_published_check(source) for source in BILLING_SOURCES),
    ]
)
