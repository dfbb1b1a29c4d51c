"""Blocking Great Expectations checks on the rows each load wrote, one per ingest asset.

Built from `QUALITY_SUBJECTS`: the billing sources today; a raw table with `_load_id` rows and
`audit.loads` records (price feeds, telemetry) plugs in by appending a `QualitySubject`.
"""

from dataclasses import dataclass

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.billing_sources import BILLING_SOURCES
from pipelines.lib.quality import QualityFacts, QualityReport, check_pending_loads
from pipelines.lib.settings import DUCKDB_WRITER_POOL
from pipelines.lib.warehouse import RawTable, ReferenceTable


@dataclass(frozen=True)
class QualitySubject:
    """A raw table whose loads get a GX suite, and the asset that writes it."""

    source: str
    title: str
    asset_key: tuple[str, ...]
    table: RawTable | ReferenceTable
    facts: QualityFacts


QUALITY_SUBJECTS: tuple[QualitySubject, ...] = tuple(
    QualitySubject(source.name, source.title, source.asset_key, source.raw_table, source.quality)
    for source in BILLING_SOURCES
)


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


def build_load_quality_check(subject: QualitySubject) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(list(subject.asset_key)),
        name="load_passes_quality_suite",
        blocking=True,
        pool=DUCKDB_WRITER_POOL,
        description=(
            f"Great Expectations suite over every {subject.title} load not yet passed: columns and types, keys "
            "present, allowed values, finite costs, quantities not negative, charge periods inside the billing "
            "period, ISO 4217 currencies. Each result is kept in audit.quality_results; a failure stops this run's "
            "downstream models."
        ),
    )
    def check(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            report = check_pending_loads(
                con, subject.table, subject.facts, source=subject.source, run_id=context.run.run_id
            )
        for failure in report.failures:
            context.log.warning(
                "%s load %s: %s failed (%s)",
                subject.source,
                failure.load_id,
                failure.description,
                failure.observed_value,
            )
        return dg.AssetCheckResult(passed=report.passed, metadata=report_metadata(report))

    return check


defs = dg.Definitions(asset_checks=[build_load_quality_check(subject) for subject in QUALITY_SUBJECTS])
