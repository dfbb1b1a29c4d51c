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

import re
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pipelines.lib.catalog.facts import MAX_ABS_COST, QualityFacts
from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.warehouse.tables import lake_columns
from sources.common.currencies import ISO_4217_CURRENCIES
from sources.common.row_checks import ERROR, WARNING, Condition
from sources.common.sql import quote_identifier, sql_text


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


LINEAGE_COLUMNS = ("_load_id", "_ingested_at")
_GX_SEVERITY = {ERROR: "critical", WARNING: "warning"}


def gx_expectations() -> ModuleType:
    """Great Expectations' expectation classes, imported on first use (an ingest never needs them) and only once
    `__main__` is named."""
    _name_the_main_module()
    import great_expectations.expectations as gxe

    return gxe


@dataclass(frozen=True)
class Rule:
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
        return getattr(gx_expectations(), self.kind)(**self.kwargs)

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
    return [rule.expectation() for rule in table_rules(table, facts)]


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


def table_rules(table: RawTable | ReferenceTable, facts: QualityFacts) -> list[Rule]:
    """The suite's rules, in the order GX lists them."""
    keys, currencies, costs = _table_facts(table)
    sql_types = lake_columns(table)
    rules = [
        Rule(
            "ExpectTableColumnsToMatchSet",
            dict(
                column_set=[*table.columns, *LINEAGE_COLUMNS, *(derived.name for derived in facts.derived)],
                exact_match=True,
                description=f"{table.name} has exactly the registry's columns",
            ),
        )
    ]
    rules += [
        Rule("ExpectColumnValuesToBeOfType", dict(column=name, type_=sql_types[name], description=f"{name} is {dtype}"))
        for name, dtype in table.columns.items()
    ]
    for column in dict.fromkeys((*keys, *facts.keys, *currencies, *costs, "_load_id")):
        rules.append(
            Rule(
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
        rules.append(Rule(kind, kwargs, failed=failed, value=name))
    for column in dict.fromkeys((*currencies, *facts.currency_columns)):
        name = quote_identifier(column)
        codes = sorted(ISO_4217_CURRENCIES)
        rules.append(
            Rule(
                "ExpectColumnValuesToBeInSet",
                dict(column=column, value_set=codes, description=f"{column} is an ISO 4217 currency code"),
                failed=f"{name} IS NOT NULL AND {name} NOT IN ({', '.join(sql_text(code) for code in codes)})",
                value=name,
            )
        )
    for column in dict.fromkeys((*costs, *facts.cost_columns)):
        failed, params = _between(column, -MAX_ABS_COST, MAX_ABS_COST)
        rules.append(
            Rule(
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
            Rule(
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
            Rule(
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
            Rule(
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
