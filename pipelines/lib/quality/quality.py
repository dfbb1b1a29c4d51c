"""Great Expectations suites over the rows each load wrote, with every result kept in `audit.quality_results`.

A suite is generated per raw table from what the registry already knows (its columns and their
types, its restatement key, currency and cost columns) plus a few facts per source that only the
source knows (`QualityFacts`: enums, quantities that cannot be negative, charge periods that must lie
inside the billing period). The suite is defined as Great Expectations expectations (their types, kwargs,
descriptions and severities are what `audit.quality_results` records), and each carries the same rule as
SQL: DuckDB evaluates the whole suite over the rows of one load (`_load_id`) where they are, one aggregate
scan for every rule's counts and a second only when a rule fails, for its first row and five example values.
Pandas batches through GX's own engine cost ~100 s of CPU per million lines; GX's SQL engine cannot see the
load's staged rows (they exist only inside the load's transaction on this connection) and does not run
reliably on DuckDB through duckdb-engine (great_expectations#10738). Quantities that must not be negative
are the reader's own `NonNegative` rules (sources/common/row_checks.py), so a line the reader accepts is a
line the suite accepts.

Every rule has a severity (docs/data-quality.md): an `error` is what cannot be represented faithfully
and rejects the delivery, a `warning` is what the spec allows or providers emit and only records
what was seen. A billing delivery's suite runs on its rows inside the load transaction, before the
commit (`QualityGate`): a delivery with an error never reaches raw. The asset checks then validate
only loads no gate has seen (loads of older versions, reference feeds). A load is checked until it
passes once (its rows never change afterwards; a restatement replaces them with a new load).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl

from pipelines.lib.catalog.facts import MAX_ABS_COST, QualityFacts
from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.warehouse.warehouse import lake_columns, quote_identifier
from sources.common.currencies import ISO_4217_CURRENCIES
from sources.common.delivery import DeliveryWarning
from sources.common.errors import RejectedInput
from sources.common.row_checks import ERROR, WARNING, Condition
from sources.common.sql import sql_text


def _name_the_main_module() -> None:
    """Keep processes alive that import Great Expectations beside pyspark (the `spark` extra).

    GX imports `pyspark.sql.connect`, which ends with exit status 0 any process whose `__main__` has neither
    `__spec__` nor `__file__`, taking it for pyspark's own doctest run (pyspark/sql/connect/utils.py). `python -c`
    children and pytest-xdist's workers look exactly like that; a `__file__` on `__main__` tells them apart. It is
    None, not a made-up path: multiprocessing's spawned children (Dagster's multiprocess executor, in every run the
    daemon launches) run `__main__.__file__` again when it is a path, and would crash on one that does not exist.
    """
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None and not hasattr(main, "__file__"):
        main.__file__ = None


_name_the_main_module()

LINEAGE_COLUMNS = ("_load_id", "_ingested_at")
ROW_LOCATION_COLUMNS = ("_source_file", "_source_row")
"""Where a raw table carries them, failing rows are reported by file and row."""
_GX_SEVERITY = {ERROR: "critical", WARNING: "warning"}


@dataclass(frozen=True)
class QualityResult:
    load_id: str
    source: str
    raw_table: str
    expectation: str
    column_name: str | None
    description: str
    observed_value: str
    unexpected_count: int | None
    element_count: int | None
    passed: bool
    checked_at: datetime
    run_id: str | None = None
    severity: str = ERROR
    """`error` (a failure rejects the delivery) or `warning` (recorded; the delivery loads)."""
    example_file: str | None = None
    example_row: int | None = None
    """The first failing row's file and row number, where the raw table records them."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"checked_at": self.checked_at.isoformat(timespec="seconds")}


@dataclass(frozen=True)
class QualityReport:
    """The loads one check validated and every expectation's result."""

    source: str
    checked_loads: list[str]
    results: list[QualityResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[QualityResult]:
        """Failed error-severity expectations: what would have rejected the delivery."""
        return [result for result in self.results if not result.passed and result.severity == ERROR]

    @property
    def warnings(self) -> list[QualityResult]:
        return [result for result in self.results if not result.passed and result.severity != ERROR]


QUALITY_RESULTS_DDL = """
CREATE TABLE IF NOT EXISTS audit.quality_results (
    load_id VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    raw_table VARCHAR NOT NULL,
    expectation VARCHAR NOT NULL,
    column_name VARCHAR,
    description VARCHAR NOT NULL,
    observed_value VARCHAR NOT NULL,
    unexpected_count BIGINT,
    element_count BIGINT,
    passed BOOLEAN NOT NULL,
    checked_at TIMESTAMP NOT NULL,
    run_id VARCHAR,
    severity VARCHAR NOT NULL DEFAULT 'error',
    example_file VARCHAR,
    example_row BIGINT
)
"""


def ensure_quality_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS audit")
    con.execute(QUALITY_RESULTS_DDL)
    # Warehouses from before severities: every result they hold was an error-severity one.
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS severity VARCHAR DEFAULT 'error'")
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS example_file VARCHAR")
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS example_row BIGINT")


@dataclass(frozen=True)
class _Rule:
    """One expectation of a suite: its Great Expectations definition and the same rule as SQL over the load's rows.

    The definition is the GX expectation class and its arguments; `expectation()` builds it. The gate reads only
    the class's type name and the arguments, so an ingest never imports GX (6 s of CPU per process, most of it
    the pandas and pyspark modules GX pulls in). `failed` selects the rows breaking it (among those `when`
    selects); `value` is what a failing row shows as an example. Table-level expectations (the column set, each
    column's type) have neither.
    """

    kind: str
    """The GX expectation class, e.g. `ExpectColumnValuesToBeInSet`."""
    kwargs: dict[str, Any]
    when: Condition | None = None
    failed: str | None = None
    value: str | None = None
    params: tuple[Any, ...] = ()
    """Values of the `?` placeholders in `failed`, in order (bounds keep their exact type: a decimal, a date)."""

    def expectation(self) -> Any:
        import great_expectations.expectations as gxe

        return getattr(gxe, self.kind)(**self.kwargs)

    @property
    def type(self) -> str:
        """GX's name of the expectation type: `ExpectColumnValuesToBeInSet` → `expect_column_values_to_be_in_set`."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.kind).lower()

    @property
    def description(self) -> str:
        return self.kwargs["description"]

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column")

    @property
    def severity(self) -> str:
        return WARNING if self.kwargs.get("severity") == _GX_SEVERITY[WARNING] else ERROR


def _table_facts(table: RawTable | ReferenceTable) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(key columns, currency columns, cost columns) the registry already names for this table."""
    if isinstance(table, RawTable):
        costs = tuple(dict.fromkeys((table.billed_cost_column, table.effective_cost_column)))
        return table.restatement_key, (table.currency_column,), costs
    return table.replace_key, (), ()


def build_expectations(table: RawTable | ReferenceTable, facts: QualityFacts) -> list[Any]:
    """The GX expectations for one raw table: each carries a unique, readable description."""
    return [rule.expectation() for rule in _suite(table, facts)]


def _between(column: str, low: Any, high: Any, *, strict_min: bool = False) -> tuple[str, tuple[Any, ...]]:
    """SQL selecting a non-null value outside [low, high] (`(low` with `strict_min`), and its parameters."""
    name = quote_identifier(column)
    inside, params = [], []
    if low is not None:
        inside.append(f"{name} {'>' if strict_min else '>='} ?")
        params.append(low)
    if high is not None:
        inside.append(f"{name} <= ?")
        params.append(high)
    return f"{name} IS NOT NULL AND NOT ({' AND '.join(inside) or 'true'})", tuple(params)


def _suite(table: RawTable | ReferenceTable, facts: QualityFacts) -> list[_Rule]:
    """The suite's rules, in the order GX lists them."""
    keys, currencies, costs = _table_facts(table)
    sql_types = lake_columns(table)
    rules = [
        _Rule(
            "ExpectTableColumnsToMatchSet",
            dict(
                column_set=[*table.columns, *LINEAGE_COLUMNS, *(derived.name for derived in facts.derived)],
                exact_match=True,
                description=f"{table.name} has exactly the registry's columns",
            ),
        )
    ]
    rules += [
        _Rule(
            "ExpectColumnValuesToBeOfType", dict(column=name, type_=sql_types[name], description=f"{name} is {dtype}")
        )
        for name, dtype in table.columns.items()
    ]
    for column in dict.fromkeys((*keys, *facts.keys, *currencies, *costs, "_load_id")):
        rules.append(
            _Rule(
                "ExpectColumnValuesToNotBeNull",
                dict(column=column, description=f"{column} is never empty"),
                failed=f"{quote_identifier(column)} IS NULL",
                value="NULL",
            )
        )
    for allowed in facts.allowed_values:
        listed = ", ".join(allowed.values)
        name = quote_identifier(allowed.column)
        if allowed.ignore_case:
            pattern = rf"(?i)^\s*({'|'.join(value.lower() for value in allowed.values)})\s*$"
            kind, kwargs = (
                "ExpectColumnValuesToMatchRegex",
                dict(
                    column=allowed.column,
                    regex=pattern,
                    description=f"{allowed.column} is one of {listed} (any case)",
                    severity=_GX_SEVERITY[allowed.severity],
                ),
            )
            failed = f"{name} IS NOT NULL AND NOT regexp_matches({name}, {sql_text(pattern)})"
        else:
            kind, kwargs = (
                "ExpectColumnValuesToBeInSet",
                dict(
                    column=allowed.column,
                    value_set=list(allowed.values),
                    description=f"{allowed.column} is one of {listed}",
                    severity=_GX_SEVERITY[allowed.severity],
                ),
            )
            failed = f"{name} IS NOT NULL AND {name} NOT IN ({', '.join(sql_text(v) for v in allowed.values)})"
        rules.append(_Rule(kind, kwargs, failed=failed, value=name))
    for column in dict.fromkeys((*currencies, *facts.currency_columns)):
        name = quote_identifier(column)
        codes = sorted(ISO_4217_CURRENCIES)
        rules.append(
            _Rule(
                "ExpectColumnValuesToBeInSet",
                dict(column=column, value_set=codes, description=f"{column} is an ISO 4217 currency code"),
                failed=f"{name} IS NOT NULL AND {name} NOT IN ({', '.join(sql_text(code) for code in codes)})",
                value=name,
            )
        )
    for column in dict.fromkeys((*costs, *facts.cost_columns)):
        failed, params = _between(column, -MAX_ABS_COST, MAX_ABS_COST)
        rules.append(
            _Rule(
                "ExpectColumnValuesToBeBetween",
                dict(
                    column=column,
                    min_value=-MAX_ABS_COST,
                    max_value=MAX_ABS_COST,
                    description=f"{column} is a finite amount (within ±10^15)",
                ),
                failed=failed,
                value=quote_identifier(column),
                params=params,
            )
        )
    for rule in facts.not_negative:
        failed, params = _between(rule.column, 0, None)
        rules.append(
            _Rule(
                "ExpectColumnValuesToBeBetween",
                dict(
                    column=rule.column,
                    min_value=0,
                    description=f"{rule.column} is not negative" + (f" {rule.applies_to}" if rule.applies_to else ""),
                    severity=_GX_SEVERITY[rule.severity],
                    **_row_condition(rule.applies),
                ),
                when=rule.applies,
                failed=failed,
                value=quote_identifier(rule.column),
                params=params,
            )
        )
    for rule in facts.in_range:
        low = "(" if rule.strict_min else "["
        unit = f" {rule.unit}" if rule.unit else ""
        failed, params = _between(rule.column, rule.min_value, rule.max_value, strict_min=rule.strict_min)
        rules.append(
            _Rule(
                "ExpectColumnValuesToBeBetween",
                dict(
                    column=rule.column,
                    min_value=rule.min_value,
                    max_value=rule.max_value,
                    strict_min=rule.strict_min,
                    description=f"{rule.column} is within {low}{_bound(rule.min_value, '-∞')}, "
                    f"{_bound(rule.max_value, '∞')}]{unit}" + _where(rule.when),
                    severity=_GX_SEVERITY[rule.severity],
                    **_row_condition(rule.when),
                ),
                when=rule.when,
                failed=failed,
                value=quote_identifier(rule.column),
                params=params,
            )
        )
    for rule in facts.ordered:
        a, b = quote_identifier(rule.column), quote_identifier(rule.bound)
        rules.append(
            _Rule(
                "ExpectColumnPairValuesAToBeGreaterThanB",
                dict(
                    column_A=rule.column,
                    column_B=rule.bound,
                    or_equal=True,
                    ignore_row_if="either_value_is_missing",
                    description=f"{rule.column} is not before {rule.bound}" + _where(rule.when),
                    severity=_GX_SEVERITY[rule.severity],
                    **_row_condition(rule.when),
                ),
                when=rule.when,
                failed=f"{a} < {b}",
                value=f"[{a}, {b}]",
            )
        )
    descriptions = [rule.description for rule in rules]
    duplicated = {d for d in descriptions if descriptions.count(d) > 1}
    if duplicated:
        raise ValueError(f"{table.name}: expectations described twice: {sorted(duplicated)}")
    return rules


def _row_condition(when: Condition | None) -> dict[str, str]:
    return {"row_condition": when.query(), "condition_parser": "pandas"} if when is not None else {}


def _where(when: Condition | None) -> str:
    return f" where {when.query()}" if when is not None else ""


def _bound(value: Any, unbounded: str) -> str:
    return unbounded if value is None else str(value)


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
        return text + (f", e.g. {_short(self.examples)}" if self.examples else "")


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _in_report_order(suite: list[_Rule]) -> list[_Rule]:
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
    suite: list[_Rule],
) -> dict[str, _Tally]:
    """Each expectation's result over the load's rows, by description, evaluated by DuckDB where the rows are.

    One aggregate query counts every rule's rows and failures in a single scan; a second, only when a rule
    fails, finds each failing rule's first row (by file and row) and up to five of its values.
    """
    extra = "".join(f", {column.sql} AS {quote_identifier(column.name)}" for column in facts.derived)
    load_relation = f"(SELECT *{extra} FROM {table.name} WHERE _load_id = ?) AS load_rows"
    found = {row[0]: row[1] for row in con.execute(f"DESCRIBE SELECT * FROM {load_relation}", [load_id]).fetchall()}
    tallies: dict[str, _Tally] = {}
    row_rules: list[_Rule] = []
    for rule in _in_report_order(suite):
        tally = tallies.setdefault(rule.description, _Tally(rule.type, rule.column, rule.severity))
        if rule.kind == "ExpectTableColumnsToMatchSet":
            tally.passed = set(found) == set(rule.kwargs["column_set"])
            tally.observed = _short(sorted(found))
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
    suite: list[_Rule] | None = None,
    record: bool = True,
) -> list[QualityResult]:
    """Run the table's suite over one load's rows; every expectation's result is appended to
    audit.quality_results unless `record` is false (the gate records them once it knows the outcome)."""
    ensure_quality_table(con)
    pause_if_requested("validating")
    tallies = _run_suite(con, table, facts, load_id, suite or _suite(table, facts))
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


def record_results(con: duckdb.DuckDBPyConnection, results: Sequence[QualityResult]) -> None:
    if not results:
        return
    frame = pl.DataFrame([asdict(result) for result in results], infer_schema_length=None)
    con.register("incoming_quality_results", frame.to_arrow())
    try:
        con.execute(
            "INSERT INTO audit.quality_results BY NAME SELECT * FROM incoming_quality_results",
        )
    finally:
        con.unregister("incoming_quality_results")


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
    suite = _suite(table, facts)
    results: list[QualityResult] = []
    for load_id in pending:
        results += validate_load(con, table, facts, source=source, load_id=load_id, run_id=run_id, suite=suite)
    return QualityReport(source=source, checked_loads=pending, results=results)


@dataclass(frozen=True)
class LiveWarning:
    """A warning recorded for a load whose rows are in raw now."""

    source: str
    load_id: str
    delivery: str
    rule: str
    column: str | None
    rows: int | None
    example: str | None
    """The first row it concerns, `<file> row <n>`."""


def live_warnings(
    con: duckdb.DuckDBPyConnection, table_name: str | None = None, *, load_source: str | None = None
) -> list[LiveWarning]:
    """Warning-severity results of the latest check of every load not superseded (of `table_name`, if given).

    Reads only (the report's connection is read-only): `ensure_quality_table` first on a new warehouse.
    """
    rows = con.execute(
        """
        with latest as (
            select load_id, max(checked_at) as checked_at from audit.quality_results group by load_id
        )
        select l.source, q.load_id, l.delivery, q.description, q.column_name, q.unexpected_count,
               case when q.example_file is not null then q.example_file || ' row ' || q.example_row end
        from audit.quality_results as q
        join latest using (load_id, checked_at)
        join audit.loads as l using (load_id)
        where (?::VARCHAR is null or l.raw_table = ?) and (?::VARCHAR is null or l.source = ?)
          and l.status = 'loaded' and not q.passed and q.severity = 'warning'
        order by l.source, l.loaded_at, q.description
        """,
        [table_name, table_name, load_source, load_source],
    ).fetchall()
    return [LiveWarning(*row) for row in rows]


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
            observed_value=_short(warning.message),
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
    _suite: list[_Rule] = field(default_factory=list, init=False, repr=False)

    def check(
        self,
        con: duckdb.DuckDBPyConnection,
        load_id: str,
        *,
        delivery: str,
        rows: int,
        reader_warnings: Sequence[DeliveryWarning] = (),
    ) -> QualityReport:
        self._suite = self._suite or _suite(self.table, self.facts)
        results = validate_load(
            con,
            self.table,
            self.facts,
            source=self.source,
            load_id=load_id,
            run_id=self.run_id,
            suite=self._suite,
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
