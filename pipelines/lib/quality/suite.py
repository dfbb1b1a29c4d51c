"""Running a table's suite over the rows of one load where they are: one scan, a second only for what failed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb

from pipelines.lib.catalog.facts import QualityFacts
from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.quality.results import QualityReport, QualityResult, ensure_quality_table, record_results
from pipelines.lib.quality.rules import Rule, table_rules
from sources.common.row_checks import ERROR
from sources.common.sql import quote_identifier

ROW_LOCATION_COLUMNS = ("_source_file", "_source_row")
"""Where a raw table carries them, failing rows are reported by file and row."""


@dataclass
class _Tally:
    """One expectation's result over the load's rows."""

    expectation: str
    column: str | None
    severity: str = ERROR
    passed: bool = True
    unexpected: int | None = None
    elements: int | None = None
    observed: str | None = None
    examples: list[Any] = field(default_factory=list)
    first_row: tuple[str, int] | None = None
    """(file, row) of the first failing row, where the table records where its rows came from."""

    def observed_text(self) -> str:
        if self.observed is not None:
            return self.observed
        if self.unexpected is None:
            return "-"
        text = f"{self.unexpected} of {self.elements} rows unexpected"
        return text + (f", e.g. {shortened(self.examples)}" if self.examples else "")


def shortened(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _in_report_order(suite: list[Rule]) -> list[Rule]:
    """The order GX reports results in (and so which failure a rejection names first): expectations on no single
    column first, then each column's, columns in the order the suite first names them."""
    first: dict[str | None, int] = {}
    for rule in suite:
        first.setdefault(rule.column, len(first))
    return sorted(suite, key=lambda rule: (rule.column is not None, first[rule.column]))


def _example(value: Any) -> Any:
    """A failing value as GX shows it: timestamps in ISO 8601 to the microsecond, pairs as lists."""
    if isinstance(value, list):
        return [_example(item) for item in value]
    return value.isoformat(timespec="microseconds") if isinstance(value, datetime) else value


def _run_suite(
    con: duckdb.DuckDBPyConnection,
    table: RawTable | ReferenceTable,
    facts: QualityFacts,
    load_id: str,
    suite: list[Rule],
) -> dict[str, _Tally]:
    """Each expectation's result over the load's rows, by description, evaluated by DuckDB where the rows are.

    One aggregate query counts every rule's rows and failures in a single scan; a second, only when a rule
    fails, finds each failing rule's first row (by file and row) and up to five of its values.
    """
    extra = "".join(f", {column.sql} AS {quote_identifier(column.name)}" for column in facts.derived)
    load_relation = f"(SELECT *{extra} FROM {table.name} WHERE _load_id = ?) AS load_rows"
    found = {row[0]: row[1] for row in con.execute(f"DESCRIBE SELECT * FROM {load_relation}", [load_id]).fetchall()}
    tallies: dict[str, _Tally] = {}
    row_rules: list[Rule] = []
    for rule in _in_report_order(suite):
        tally = tallies.setdefault(rule.description, _Tally(rule.type, rule.column, rule.severity))
        if rule.kind == "ExpectTableColumnsToMatchSet":
            tally.passed = set(found) == set(rule.kwargs["column_set"])
            tally.observed = shortened(sorted(found))
        elif rule.kind == "ExpectColumnValuesToBeOfType":
            observed = found.get(rule.column)
            tally.passed = observed is not None and observed.replace(" ", "") == rule.kwargs["type_"].replace(" ", "")
            tally.observed = observed or f"error: no column {rule.column}"
        else:
            row_rules.append(rule)
    located = all(column in found for column in ROW_LOCATION_COLUMNS)
    selected = [rule.when.sql() if rule.when else "true" for rule in row_rules]
    counts: list[str] = []
    params: list[Any] = []
    for rule, when in zip(row_rules, selected, strict=True):
        counts += [f"count(*) FILTER (WHERE {when})", f"count(*) FILTER (WHERE ({when}) AND ({rule.failed}))"]
        params += rule.params
    totals = con.execute(f"SELECT {', '.join(counts)} FROM {load_relation}", [*params, load_id]).fetchall()[0]
    failing = []
    for number, rule in enumerate(row_rules):
        tally = tallies[rule.description]
        tally.elements, tally.unexpected = totals[2 * number], totals[2 * number + 1]
        tally.passed = tally.unexpected == 0
        if not tally.passed:
            failing.append((rule, selected[number], tally))
    if failing:
        order = "(_source_file, _source_row)" if located else "0"
        found_rows = []
        params = []
        for rule, when, _ in failing:
            found_rows += [
                f"arg_min({rule.value}, {order}, 5) FILTER (WHERE ({when}) AND ({rule.failed}))",
                f"min({order if located else 'NULL'}) FILTER (WHERE ({when}) AND ({rule.failed}))",
            ]
            params += rule.params + rule.params
        examples = con.execute(f"SELECT {', '.join(found_rows)} FROM {load_relation}", [*params, load_id]).fetchall()[0]
        for number, (_, _, tally) in enumerate(failing):
            values, first = examples[2 * number], examples[2 * number + 1]
            tally.examples = [_example(value) for value in values] if values else [None] * min(tally.unexpected, 5)
            if first is not None and None not in first:
                tally.first_row = (first[0], int(first[1]))
    return tallies


def validate_load(
    con: duckdb.DuckDBPyConnection,
    table: RawTable | ReferenceTable,
    facts: QualityFacts,
    *,
    source: str,
    load_id: str,
    run_id: str | None = None,
    suite: list[Rule] | None = None,
    record: bool = True,
) -> list[QualityResult]:
    """Run the table's suite over one load's rows; every expectation's result is appended to
    audit.quality_results unless `record` is false (the gate records them once it knows the outcome)."""
    ensure_quality_table(con)
    pause_if_requested("validating")
    tallies = _run_suite(con, table, facts, load_id, suite or table_rules(table, facts))
    checked_at = datetime.now(UTC).replace(tzinfo=None)
    results = [
        QualityResult(
            load_id=load_id,
            source=source,
            raw_table=table.name,
            expectation=tally.expectation,
            column_name=tally.column,
            description=description,
            observed_value=tally.observed_text(),
            unexpected_count=tally.unexpected,
            element_count=tally.elements,
            passed=tally.passed,
            checked_at=checked_at,
            run_id=run_id,
            severity=tally.severity,
            example_file=tally.first_row[0] if tally.first_row else None,
            example_row=tally.first_row[1] if tally.first_row else None,
        )
        for description, tally in tallies.items()
    ]
    if record:
        record_results(con, results)
    return results


@dataclass(frozen=True)
class Partition:
    """The rows of one run's partitions: `column` between `first` and `last` (inclusive)."""

    column: str
    first: Any
    last: Any


def loads_to_check(
    con: duckdb.DuckDBPyConnection,
    table_name: str,
    *,
    load_source: str | None = None,
    partition: Partition | None = None,
) -> list[str]:
    """Loads of `table_name` that have not passed their latest check, oldest first.

    `load_source` keeps the loads one writer made (`audit.loads.source`) in a table several share (every
    price feed writes raw.price_observations); `partition` keeps those holding rows in a run's partitions.
    """
    ensure_quality_table(con)
    audit_exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'audit' AND table_name = 'loads'"
    ).fetchone()[0]
    if not audit_exists:
        return []
    rows = con.execute(
        """
        with latest as (
            select load_id, max(checked_at) as checked_at from audit.quality_results group by load_id
        ),
        passed as (
            select q.load_id
            from audit.quality_results as q
            join latest using (load_id, checked_at)
            group by q.load_id
            having bool_and(q.passed or q.severity <> 'error')
        )
        select load_id
        from audit.loads
        where raw_table = ? and status = 'loaded' and load_id not in (select load_id from passed)
          and (?::VARCHAR is null or source = ?)
        order by loaded_at, load_id
        """,
        [table_name, load_source, load_source],
    ).fetchall()
    pending = [row[0] for row in rows]
    if partition is None or not pending:
        return pending
    column = quote_identifier(partition.column)
    in_partition = {
        row[0]
        for row in con.execute(
            f"SELECT DISTINCT _load_id FROM {table_name} WHERE {column} BETWEEN ? AND ? "
            "AND _load_id IN (SELECT unnest(?::VARCHAR[]))",
            [partition.first, partition.last, pending],
        ).fetchall()
    }
    return [load_id for load_id in pending if load_id in in_partition]


def check_pending_loads(
    con: duckdb.DuckDBPyConnection,
    table: RawTable | ReferenceTable,
    facts: QualityFacts,
    *,
    source: str,
    run_id: str | None = None,
    load_source: str | None = None,
    partition: Partition | None = None,
) -> QualityReport:
    """Validate every load of `table` that has not passed yet, within `load_source` and `partition` when given."""
    pending = loads_to_check(con, table.name, load_source=load_source, partition=partition)
    if not pending:
        return QualityReport(source=source, checked_loads=[])
    suite = table_rules(table, facts)
    results: list[QualityResult] = []
    for load_id in pending:
        results += validate_load(con, table, facts, source=source, load_id=load_id, run_id=run_id, suite=suite)
    return QualityReport(source=source, checked_loads=pending, results=results)
