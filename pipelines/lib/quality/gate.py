"""The quality gate: a billing delivery's suite runs inside its load transaction; an error rejects it uncommitted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import duckdb

from pipelines.lib.catalog.facts import QualityFacts
from pipelines.lib.catalog.tables import RawTable
from pipelines.lib.quality.results import QualityReport, QualityResult, record_results
from pipelines.lib.quality.rules import Rule, table_rules
from pipelines.lib.quality.suite import shortened, validate_load
from sources.common.delivery import DeliveryWarning
from sources.common.errors import RejectedInput
from sources.common.row_checks import WARNING


class FailedQualitySuite(RejectedInput):
    """A delivery whose rows break an error-severity rule of its suite: rejected before its load commits."""

    def __init__(self, delivery: str, failures: Sequence[QualityResult]):
        first = failures[0]
        listed = "; ".join(f"{f.description} ({f.observed_value})" for f in failures[:3])
        more = f"; and {len(failures) - 3} more rule(s)" if len(failures) > 3 else ""
        super().__init__(
            first.example_file or delivery,
            f"{listed}{more}. Checked before the load committed: nothing was written to the warehouse",
            row=first.example_row,
            column=first.column_name,
        )
        self.failures = list(failures)


def reader_warning_results(
    warnings: Sequence[DeliveryWarning], *, load_id: str, source: str, raw_table: str, rows: int, run_id: str | None
) -> list[QualityResult]:
    """What a reader accepted with a warning, as results beside the suite's (expectation `reader_warning`)."""
    checked_at = datetime.now(UTC).replace(tzinfo=None)
    return [
        QualityResult(
            load_id=load_id,
            source=source,
            raw_table=raw_table,
            expectation="reader_warning",
            column_name=warning.column,
            description=warning.rule,
            observed_value=shortened(warning.message),
            unexpected_count=warning.rows,
            element_count=rows,
            passed=False,
            checked_at=checked_at,
            run_id=run_id,
            severity=WARNING,
            example_file=warning.file,
            example_row=warning.row,
        )
        for warning in warnings
    ]


@dataclass
class QualityGate:
    """A raw table's suite, run on a delivery's rows inside its load transaction, before the commit.

    `load_delivery(before_commit=...)` calls it once the rows are staged in the lake (`raw.<table>` shows
    them only inside this transaction): an error-severity failure raises `FailedQualitySuite`, so the staged
    files are discarded, the transaction rolls back and the delivery goes to quarantine; otherwise every
    result, warnings included, is recorded in the same transaction as the load, so the load is committed
    already checked.
    """

    table: RawTable
    facts: QualityFacts
    source: str
    run_id: str | None = None
    table_rules: list[Rule] = field(default_factory=list, init=False, repr=False)

    def check(
        self,
        con: duckdb.DuckDBPyConnection,
        load_id: str,
        *,
        delivery: str,
        rows: int,
        reader_warnings: Sequence[DeliveryWarning] = (),
    ) -> QualityReport:
        self.table_rules = self.table_rules or table_rules(self.table, self.facts)
        results = validate_load(
            con,
            self.table,
            self.facts,
            source=self.source,
            load_id=load_id,
            run_id=self.run_id,
            suite=self.table_rules,
            record=False,
        )
        results += reader_warning_results(
            reader_warnings,
            load_id=load_id,
            source=self.source,
            raw_table=self.table.name,
            rows=rows,
            run_id=self.run_id,
        )
        report = QualityReport(source=self.source, checked_loads=[load_id], results=results)
        if report.failures:
            raise FailedQualitySuite(delivery, report.failures)
        record_results(con, results)
        return report
