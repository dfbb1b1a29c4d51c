"""Checks every connector runs on its typed frame before handing it to the loader.

Each reader validates its own format (columns, types, enums). These checks are the ones that hold
for every billing source alike, so they live once, here, and work on the typed frame every
connector returns (which carries `_source_file` and `_source_row` for the message):

- no text value longer than `MAX_FIELD_BYTES` (a 10 MB cell is a broken export or an attack,
  not a tag value);
- every timestamp between `EARLIEST` and `LATEST` (a year 2999 is a typo that would otherwise
  create a billing period nobody asked for);
- the quantities the connector names are not negative on the rows it says they apply to (the same
  `NonNegative` rules are the Great Expectations suite's on the loaded rows: a `Condition` reads as a
  polars expression here and as SQL there, and describes itself as a pandas query, so reader and suite
  cannot disagree);
- the connector's line item key, where the format has one, is unique within the delivery (the
  same line twice would count its cost twice).

A format's own per-row rules (a required value present, an end not before its start, a code from
its list) are `Check`s in `RowRules.values`, applied by `check_values` to each file as it is read,
so every connector reports them the same way; `Wording` keeps each format's message as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import duckdb
import polars as pl

from sources.common.delivery import DeliveryWarning
from sources.common.errors import RejectedInput
from sources.common.rejects import plain, shown
from sources.common.sql import quote_identifier, sql_text

ERROR = "error"
WARNING = "warning"
"""A rule's severity: an `error` rejects the delivery, a `warning` loads it and records what was seen."""

MAX_FIELD_BYTES = 1 << 20
EARLIEST = datetime(2000, 1, 1)
LATEST = datetime(2100, 1, 1)
"""Billing data, purchase and commitment dates all fall inside [EARLIEST, LATEST)."""
WHITESPACE = " \t\n\r\x0b\x0c"
"""What Python's and polars' strip remove, for SQL's trim to remove the same."""


class Condition(Protocol):
    """The rows a rule holds on, readable by both engines that apply it."""

    def expr(self) -> pl.Expr:
        """A polars predicate (never null) over the reader's typed frame."""
        ...

    def query(self) -> str:
        """The same predicate as pandas `DataFrame.query` text: how the suite's rule reads (its description)."""
        ...

    def sql(self) -> str:
        """The same predicate as SQL (never null): what the suite evaluates on the loaded rows in DuckDB."""
        ...


def _query_name(column: str) -> str:
    return column if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", column) else f"`{column}`"


@dataclass(frozen=True)
class OneOf:
    """Rows whose `column` is one of `values`; a null is never one of them (so `negate` selects it).

    With `ignore_case` the value is compared trimmed and lower-cased, for exports whose casing varies.
    """

    column: str
    values: tuple[str, ...]
    ignore_case: bool = False
    negate: bool = False

    def _values(self) -> list[str]:
        return [value.strip().lower() for value in self.values] if self.ignore_case else list(self.values)

    def expr(self) -> pl.Expr:
        value = pl.col(self.column)
        if self.ignore_case:
            value = value.str.strip_chars().str.to_lowercase()
        matched = value.is_in(self._values()).fill_null(False)
        return ~matched if self.negate else matched

    def query(self) -> str:
        value = _query_name(self.column) + (".str.strip().str.lower()" if self.ignore_case else "")
        listed = ", ".join(f'"{v}"' for v in self._values())
        return f"{value} {'not in' if self.negate else 'in'} [{listed}]"

    def sql(self) -> str:
        value = quote_identifier(self.column)
        if self.ignore_case:
            value = f"lower(trim({value}, {sql_text(WHITESPACE)}))"
        listed = ", ".join(sql_text(v) for v in self._values())
        return f"{'NOT ' if self.negate else ''}coalesce({value} IN ({listed}), false)"


@dataclass(frozen=True)
class IsNull:
    """Rows where `column` is empty (e.g. FOCUS lines that are not corrections: ChargeClass is null)."""

    column: str

    def expr(self) -> pl.Expr:
        return pl.col(self.column).is_null()

    def query(self) -> str:
        return f"{_query_name(self.column)}.isnull()"

    def sql(self) -> str:
        return f"{quote_identifier(self.column)} IS NULL"


@dataclass(frozen=True)
class AllOf:
    """Rows every condition holds on."""

    conditions: tuple[Condition, ...]

    def expr(self) -> pl.Expr:
        return pl.all_horizontal([condition.expr() for condition in self.conditions])

    def query(self) -> str:
        return " and ".join(f"({condition.query()})" for condition in self.conditions)

    def sql(self) -> str:
        return " AND ".join(f"({condition.sql()})" for condition in self.conditions)


@dataclass(frozen=True)
class NonNegative:
    column: str
    applies: Condition | None = None
    """Rows the rule holds on (e.g. usage lines only: a refund may carry a negative quantity); None: all."""
    applies_to: str = ""
    """How `applies` reads in a message, e.g. `on usage lines`."""
    severity: str = ERROR
    """`warning` where the spec allows a negative value but it is unusual (FOCUS ConsumedQuantity on usage
    lines): the reader loads it and the suite records a warning instead of rejecting (docs/data-quality.md)."""


@dataclass(frozen=True)
class Check:
    """A per-row rule of one format: the rows `failed` selects break it, and `reason` says how."""

    column: str
    failed: pl.Expr
    reason: str
    failed_sql: str | None = None
    """The same predicate as SQL, for readers that check in DuckDB (`check_values_in_duckdb`)."""


def required(column: str, reason: str = "must not be empty") -> Check:
    return Check(column, pl.col(column).is_null(), reason, f"{quote_identifier(column)} IS NULL")


def ordered(end: str, start: str, reason: str, *, exclusive: bool = False) -> Check:
    """`end` not before `start`; with `exclusive` (an end that is the first instant after) strictly after it."""
    failed = pl.col(end) <= pl.col(start) if exclusive else pl.col(end) < pl.col(start)
    return Check(end, failed, reason, f"{quote_identifier(end)} {'<=' if exclusive else '<'} {quote_identifier(start)}")


@dataclass(frozen=True)
class Wording:
    """How a format's `Check` messages read: `named` starts with the column, `found` quotes the bad value."""

    named: bool = True
    found: Callable[[object], str] | None = shown


@dataclass(frozen=True)
class RowRules:
    non_negative: Sequence[NonNegative] = ()
    line_item_key: tuple[str, ...] = ()
    """Columns that identify a line within one delivery; empty where the format has no such key."""
    values: Sequence[Check] = ()
    """The format's own rules, checked in order; the first one broken rejects."""
    wording: Wording = Wording()


def _check_message(check: Check, wording: Wording) -> Callable[[object], str]:
    return lambda value: (
        (f"{check.column} {check.reason}" if wording.named else check.reason)
        + ("" if value is None or wording.found is None else f" (found {wording.found(value)})")
    )


def _too_long_message(column: str) -> Callable[[object], str]:
    return lambda value: (
        f"{column} holds a value of {len(str(value).encode()):,} bytes; "
        f"the limit is {MAX_FIELD_BYTES:,} (a broken export?)"
    )


def _out_of_range_message(column: str) -> Callable[[object], str]:
    return lambda found: f"{column} {plain(found)} is outside the plausible range {EARLIEST.year}–{LATEST.year - 1}"


def _negative_message(rule: NonNegative) -> Callable[[object], str]:
    return lambda found: (
        f"{rule.column} must not be negative{' ' + rule.applies_to if rule.applies_to else ''} (found {plain(found)})"
    )


def _repeated_line_message(key: Sequence[str], values: Mapping[str, object]) -> str:
    shown = ", ".join(f"{column} {plain(values[column])!r}" for column in key)
    return f"the line with {shown} appears on an earlier line of this delivery too (a line delivered twice)"


def check_values(frame: pl.DataFrame, rules: RowRules, *, headers: Mapping[str, str] | None = None) -> None:
    """Raise RejectedInput at the first row breaking one of `rules.values`, rule by rule.

    `headers` maps a column to the header the file spells it with, for the message's column.
    """
    for check in rules.values:
        _reject_where(
            frame,
            check.column,
            check.failed,
            _check_message(check, rules.wording),
            named=(headers or {}).get(check.column, check.column),
        )


def check_rows(frame: pl.DataFrame, rules: RowRules = RowRules()) -> None:
    """Raise RejectedInput at the first row that breaks a rule, naming its file, row and column."""
    for column, dtype in frame.schema.items():
        if dtype == pl.String and not column.startswith("_"):
            _reject_where(frame, column, pl.col(column).str.len_bytes() > MAX_FIELD_BYTES, _too_long_message(column))
    for column, dtype in frame.schema.items():
        if isinstance(dtype, pl.Datetime):
            value = pl.col(column).dt.replace_time_zone(None) if dtype.time_zone else pl.col(column)
            _reject_where(frame, column, (value < EARLIEST) | (value >= LATEST), _out_of_range_message(column))
    for rule in rules.non_negative:
        if rule.severity != ERROR:
            continue
        negative = pl.col(rule.column) < 0
        if rule.applies is not None:
            negative = negative & rule.applies.expr()
        _reject_where(frame, rule.column, negative, _negative_message(rule))
    if rules.line_item_key:
        key = list(rules.line_item_key)
        repeated = pl.all_horizontal(pl.col(key).is_not_null()) & (pl.int_range(pl.len()).over(key) > 0)
        mask = frame.select(repeated.fill_null(False)).to_series()
        if mask.any():
            message = _repeated_line_message(key, frame.row(int(mask.arg_true()[0]), named=True))
            _reject_where(frame, key[-1], repeated, lambda _: message)
    check_values(frame, rules)


def _reject_where(frame: pl.DataFrame, column: str, failed: pl.Expr, describe, *, named: str | None = None) -> None:
    mask = frame.select(failed.fill_null(False)).to_series()
    if not mask.any():
        return
    index = int(mask.arg_true()[0])
    count = int(mask.sum())
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    value = frame[column][index]
    raise RejectedInput(
        str(frame["_source_file"][index]),
        describe(value) + more,
        row=int(frame["_source_row"][index]),
        column=named or column,
    )


@dataclass(frozen=True)
class SqlRule:
    """A rule checked in DuckDB: rows where `failed` holds break it; `describe` words the first one's value."""

    column: str
    failed: str
    describe: Callable[[object], str]
    named: str | None = None
    """The column as the message names it (the file's header); default `column`."""
    value: str | None = None
    """SQL of the value the message quotes; default `column`."""


def check_rows_in_duckdb(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    column_types: Mapping[str, str],
    rules: RowRules,
    *,
    order: str,
    lengths: Mapping[str, str] | None = None,
) -> None:
    """`check_rows` for rows DuckDB typed: the same rules, messages and first row, in one scan of `relation`.

    `relation` (SQL) carries `_source_file` and `_source_row`; `column_types` are its DuckDB types and
    `order` (SQL) sorts its rows as the delivery holds them, so "the first row" is the one polars would name.
    `lengths` may name, per text column, a column of `relation` holding its length in bytes where that is
    cheaper than the typed value's (the stored text is as long wherever it is over the limit).
    """
    sql_rules = [
        SqlRule(
            column,
            f"{(lengths or {}).get(column) or f'strlen({quote_identifier(column)})'} > {MAX_FIELD_BYTES}",
            _too_long_message(column),
        )
        for column, sql_type in column_types.items()
        if sql_type == "VARCHAR" and not column.startswith("_")
    ]
    sql_rules += [
        SqlRule(
            column,
            f"({quote_identifier(column)} < TIMESTAMP '{EARLIEST:%Y-%m-%d}'"
            f" OR {quote_identifier(column)} >= TIMESTAMP '{LATEST:%Y-%m-%d}')",
            _out_of_range_message(column),
        )
        for column, sql_type in column_types.items()
        if sql_type == "TIMESTAMP"
    ]
    sql_rules += [
        SqlRule(
            rule.column,
            f"{quote_identifier(rule.column)} < 0" + (f" AND ({rule.applies.sql()})" if rule.applies else ""),
            _negative_message(rule),
        )
        for rule in rules.non_negative
        if rule.severity == ERROR
    ]
    reject_first_in_duckdb(con, relation, sql_rules, order=order)
    if rules.line_item_key:
        _reject_repeated_line_in_duckdb(con, relation, rules.line_item_key, order=order)
    check_values_in_duckdb(con, relation, rules, order=order)


def check_values_in_duckdb(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    rules: RowRules,
    *,
    order: str,
    headers: Mapping[str, str] | None = None,
) -> None:
    """`check_values` for rows DuckDB typed (each `Check` needs its `failed_sql`)."""
    reject_first_in_duckdb(con, relation, value_rules_in_duckdb(rules, headers=headers), order=order)


def value_rules_in_duckdb(rules: RowRules, *, headers: Mapping[str, str] | None = None) -> list[SqlRule]:
    """A format's `Check`s as `SqlRule`s, worded as `check_values` words them."""
    sql_rules = []
    for check in rules.values:
        if check.failed_sql is None:
            raise ValueError(f"the rule on {check.column} ({check.reason}) has no SQL form")
        named = (headers or {}).get(check.column, check.column)
        sql_rules.append(SqlRule(check.column, check.failed_sql, _check_message(check, rules.wording), named))
    return sql_rules


def reject_first_in_duckdb(
    con: duckdb.DuckDBPyConnection, relation: str, rules: Sequence[SqlRule], *, order: str
) -> None:
    """Raise RejectedInput at the first of `rules` any row of `relation` breaks, naming its first row in `order`.

    One counting scan for all rules; only a broken rule's first row is looked up, by a second query.
    `relation` carries `_source_file` and `_source_row`.
    """
    if not rules:
        return
    failed = [f"coalesce({rule.failed}, false)" for rule in rules]
    counts = con.execute(f"SELECT {', '.join(f'count_if({f})' for f in failed)} FROM ({relation})").fetchall()[0]
    broken = next((number for number, count in enumerate(counts) if count), None)
    if broken is None:
        return
    rule, count = rules[broken], counts[broken]
    shown = rule.value or quote_identifier(rule.column)
    file, row, found = con.execute(
        f"SELECT _source_file, _source_row, {shown} FROM ({relation}) WHERE {failed[broken]} ORDER BY {order} LIMIT 1"
    ).fetchall()[0]
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    raise RejectedInput(str(file), rule.describe(found) + more, row=int(row), column=rule.named or rule.column)


def _reject_repeated_line_in_duckdb(
    con: duckdb.DuckDBPyConnection, relation: str, key: Sequence[str], *, order: str
) -> None:
    """A line item key on two rows: counted by a hash aggregate; the rows are only ordered when there is one."""
    columns = ", ".join(quote_identifier(column) for column in key)
    present = " AND ".join(f"{quote_identifier(column)} IS NOT NULL" for column in key)
    repeated = f"SELECT {columns} FROM ({relation}) WHERE {present} GROUP BY ALL HAVING count(*) > 1"
    if not con.execute(f"SELECT count(*) FROM ({repeated})").fetchall()[0][0]:
        return
    later = f"""
        SELECT *, count(*) OVER () AS _repeats FROM (
            SELECT {columns}, _source_file, _source_row, {order} AS _order,
                   row_number() OVER (PARTITION BY {columns} ORDER BY {order}) AS _occurrence
            FROM ({relation}) WHERE {present}
        ) WHERE _occurrence > 1 ORDER BY _order LIMIT 1
    """
    cursor = con.execute(later)
    names = [description[0] for description in cursor.description]
    first = dict(zip(names, cursor.fetchall()[0], strict=True))
    count = first["_repeats"]
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    raise RejectedInput(
        str(first["_source_file"]),
        _repeated_line_message(key, first) + more,
        row=int(first["_source_row"]),
        column=key[-1],
    )


def flag_rows(
    frame: pl.DataFrame, column: str | None, flagged: pl.Expr, rule: str, message: str
) -> DeliveryWarning | None:
    """A warning about the rows `flagged` selects (None when there are none), naming the first one's file and row.

    For what a reader accepts and records rather than rejects: a value it derived, or one the spec allows.
    """
    mask = frame.select(flagged.fill_null(False)).to_series()
    count = int(mask.sum())
    if not count:
        return None
    index = int(mask.arg_true()[0])
    return _flagged_warning(
        column,
        rule,
        message,
        count,
        str(frame["_source_file"][index]) if "_source_file" in frame.columns else None,
        int(frame["_source_row"][index]) if "_source_row" in frame.columns else None,
    )


@dataclass(frozen=True)
class Flag:
    """What `flag_rows_in_duckdb` looks for: the rows `flagged` (SQL) selects, recorded as `rule` on `column`."""

    column: str | None
    flagged: str
    rule: str
    message: str


def flag_rows_in_duckdb(
    con: duckdb.DuckDBPyConnection, relation: str, flags: Sequence[Flag], *, order: str
) -> tuple[DeliveryWarning, ...]:
    """`flag_rows` for rows DuckDB holds, every flag in one scan of `relation`; `order` (SQL) names the first row.

    `relation` carries `_source_file` and `_source_row`.
    """
    if not flags:
        return ()
    selected = [f"coalesce({flag.flagged}, false)" for flag in flags]
    columns = [
        part
        for condition in selected
        for part in (
            f"count_if({condition})",
            f"arg_min(_source_file, CASE WHEN {condition} THEN {order} END)",
            f"arg_min(_source_row, CASE WHEN {condition} THEN {order} END)",
        )
    ]
    found = con.execute(f"SELECT {', '.join(columns)} FROM ({relation})").fetchall()[0]
    warnings = []
    for number, flag in enumerate(flags):
        count, file, row = found[3 * number : 3 * number + 3]
        if count:
            warnings.append(_flagged_warning(flag.column, flag.rule, flag.message, count, str(file), int(row)))
    return tuple(warnings)


def _flagged_warning(
    column: str | None, rule: str, message: str, count: int, file: str | None, row: int | None
) -> DeliveryWarning:
    return DeliveryWarning(
        rule=rule,
        column=column,
        rows=count,
        message=f"{message} ({count} row{'s' if count > 1 else ''})",
        file=file,
        row=row,
    )
