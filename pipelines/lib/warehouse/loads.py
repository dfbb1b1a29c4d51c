"""Loading raw deliveries into the lake that DuckDB (and Spark) read: idempotent, restatements atomic, audited.

A load stages, under the lake's `_staging/<load_id>/`, the new version of every partition folder it touches
(one folder per account × billing period for billing tables: a delivery replaces those keys whole) and its
audit records (`audit.loads`, `audit.load_totals`, and for every key that held rows before, what it held
before and after in `audit.restatements`); then it commits through the lake's journal and swaps the folders
in (lake.py: a process killed at any point leaves the old or the new state once the next writer recovers).
`raw.<table>` and `audit.<table>` are DuckDB views over those files, so models, CLI and checks read the same
names as ever. A delivery whose sha256 was loaded before changes nothing. A `before_commit` callback (the
quality gate) sees `raw.<table>` as it will be after the load, inside the DuckDB transaction that records its
results, and can still reject it: raising discards the staged files and rolls the transaction back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import duckdb
import polars as pl

from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.warehouse.lake import (
    SCHEMA_FILE,
    Lake,
    Staging,
    files_view_sql,
    folder_name,
    partitions_of,
    sql_text,
    write_parquet,
)
from pipelines.lib.warehouse.tables import AUDIT_COLUMNS, MONEY_SQL_TYPE, lake_columns, recover_and_ensure_tables
from sources.common.delivery import TypedQuery
from sources.common.sql import quote_identifier


@dataclass(frozen=True)
class LoadOutcome:
    status: str
    """`loaded`, or `duplicate` when this exact delivery was loaded before (nothing changed)."""
    load_id: str
    rows: int
    replaced_rows: int
    billing_periods: list[str]
    totals: dict[str, dict[str, str]]
    """Per currency: billed and effective cost as decimal strings."""


def find_load(con: duckdb.DuckDBPyConnection, source: str, sha256: str) -> str | None:
    """The load that already holds this delivery, if any (none before the first load ever)."""
    audit_exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'audit' AND table_name = 'loads'"
    ).fetchone()[0]
    if not audit_exists:
        return None
    row = con.execute(
        "SELECT load_id FROM audit.loads WHERE source = ? AND sha256 = ? AND status <> 'withheld' "
        "ORDER BY loaded_at LIMIT 1",
        [source, sha256],
    ).fetchone()
    return row[0] if row else None


def load_delivery(
    con: duckdb.DuckDBPyConnection,
    table: RawTable,
    *,
    source: str,
    delivery: str,
    sha256: str,
    frame: pl.DataFrame | TypedQuery,
    format_version: str | None = None,
    before_commit: Callable[[str], object] | None = None,
) -> LoadOutcome:
    """Load one parsed delivery, replacing the account × billing-period keys it covers (or all, for a snapshot).

    `before_commit(load_id)` runs last before the commit, with `raw.<table>` showing what it will hold once
    the load commits; if it raises, nothing of the load is committed.
    """
    lake = recover_and_ensure_tables(con, table)
    existing = find_load(con, source, sha256)
    if existing is not None:
        return _outcome_of(con, existing, status="duplicate")

    load_id = str(uuid.uuid4())
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    account, period, currency = (quote_identifier(c) for c in (*table.restatement_key, table.currency_column))
    billed, effective = quote_identifier(table.billed_cost_column), quote_identifier(table.effective_cost_column)
    rows = frame.rows if isinstance(frame, TypedQuery) else frame.height
    with _staged_load(con, lake, load_id, frame, list(table.columns), keep_replaced=True) as staging:
        replaced = _stage_rows(
            con, staging, table, table.restatement_key, table.restatement_key, loaded_at, replace_all=table.snapshot
        )
        if replaced.load_ids:
            _record_restatement(con, staging, table, replaced.sql, loaded_at)
        totals = staging.file(f"audit/load_totals/{load_id}.parquet")
        write_parquet(
            con,
            f"""
            SELECT ?::VARCHAR AS load_id, {account}::VARCHAR AS billing_account_id,
                   {period}::TIMESTAMP AS billing_period_start, {currency}::VARCHAR AS billing_currency,
                   count(*)::BIGINT AS row_count, sum({billed})::{MONEY_SQL_TYPE} AS billed_cost,
                   sum({effective})::{MONEY_SQL_TYPE} AS effective_cost
            FROM incoming_rows
            GROUP BY {account}, {period}, {currency}
            """,
            totals,
            [load_id],
        )
        totals_sql = files_view_sql([str(totals)])
        _stage_load_record(
            con,
            staging,
            [source, table.name, delivery, sha256, rows, replaced.rows],
            json.dumps(_billing_periods(con, totals_sql)),
            json.dumps(_totals(con, totals_sql)),
            [format_version, loaded_at, ",".join(replaced.load_ids)],
        )
        if before_commit is not None:
            current = partitions_of(lake, table.name)
            unchanged = [
                path for folder, paths in current.items() if folder not in staging.partitions for path in paths
            ]
            preview = [lake.folder(table.name) / SCHEMA_FILE, *unchanged, *staging.staged_files()]
            con.execute(f"CREATE OR REPLACE VIEW {table.name} AS {files_view_sql(str(p) for p in preview)}")
            before_commit(load_id)
            con.execute(f"CREATE OR REPLACE VIEW {table.name} AS {files_view_sql(lake.files_glob(table.name))}")
    return _outcome_of(con, load_id, status="loaded")


@dataclass(frozen=True)
class _Replaced:
    """The rows of the lake a load replaces."""

    sql: str
    """A query returning them (no rows when nothing is replaced)."""
    rows: int
    load_ids: list[str]


def _stage_rows(
    con: duckdb.DuckDBPyConnection,
    staging: Staging,
    table: RawTable | ReferenceTable,
    partition_by: tuple[str, ...],
    replace_key: tuple[str, ...],
    loaded_at: datetime,
    *,
    replace_all: bool = False,
    whole_partitions: Sequence[tuple[Any, ...]] = (),
) -> _Replaced:
    """Stage the new version of every partition the staged view's rows fall in: its rows, plus, where a
    partition is wider than the replace key, the old rows of keys the load does not carry (each in a file
    named after its own load). `whole_partitions` are replaced whole even when the load has no row in them."""
    lake, view, load_id = staging.lake, "incoming_rows", staging.load_id
    columns = lake_columns(table)
    base = lake.folder(table.name).relative_to(lake.root).as_posix()

    def folder(values: tuple[Any, ...]) -> str:
        return "/".join([base, *(folder_name(value) for value in values)])

    by = ", ".join(quote_identifier(c) for c in partition_by)
    delivered = {folder(values): values for values in con.execute(f"SELECT DISTINCT {by} FROM {view}").fetchall()}
    existing = partitions_of(lake, table.name)
    whole = set(delivered) if partition_by == replace_key else set()
    whole |= {folder(values) for values in whole_partitions}
    if replace_all:
        whole |= set(existing)
    key = ", ".join(quote_identifier(c) for c in replace_key)
    carried = f"coalesce(({key}) IN (SELECT DISTINCT {key} FROM {view}), false)"
    whole_files: list[str] = []
    partial_files: list[str] = []
    for relative in sorted(set(delivered) | whole):
        target = staging.partition(relative)
        for old in existing.get(relative, []):
            if relative in whole:
                whole_files.append(str(old))
                continue
            partial_files.append(str(old))
            kept = f"SELECT * FROM read_parquet({sql_text(str(old))}) WHERE NOT {carried}"
            if con.execute(f"SELECT count(*) FROM ({kept})").fetchall()[0][0]:
                write_parquet(con, kept, target / old.name)
        if relative in delivered:
            selected = ", ".join(
                f"CAST({quote_identifier(name)} AS {sql_type}) AS {quote_identifier(name)}"
                for name, sql_type in columns.items()
                if name not in ("_load_id", "_ingested_at")
            )
            match = " AND ".join(f"{quote_identifier(c)} IS NOT DISTINCT FROM ?" for c in partition_by)
            write_parquet(
                con,
                f"SELECT {selected}, ?::VARCHAR AS _load_id, ?::TIMESTAMP AS _ingested_at FROM {view} WHERE {match}",
                target / f"{load_id}.parquet",
                [load_id, loaded_at, *delivered[relative]],
            )
    parts = [files_view_sql(whole_files)] if whole_files else []
    if partial_files:
        parts.append(f"{files_view_sql(partial_files)} WHERE {carried}")
    if not parts:
        return _Replaced(f"{files_view_sql(str(lake.folder(table.name) / SCHEMA_FILE))} WHERE false", 0, [])
    sql = " UNION ALL BY NAME ".join(f"({part})" for part in parts)
    rows = con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]
    load_ids = [row[0] for row in con.execute(f"SELECT DISTINCT _load_id FROM ({sql}) ORDER BY 1").fetchall()]
    return _Replaced(sql, rows, load_ids)


def _stage_load_record(
    con: duckdb.DuckDBPyConnection,
    staging: Staging,
    described: list[Any],
    billing_periods: str,
    cost_totals: str,
    rest: list[Any],
) -> None:
    """The load's row of audit.loads, in the order of `AUDIT_COLUMNS`."""
    values = [staging.load_id, *described, billing_periods, cost_totals, *rest]
    columns = AUDIT_COLUMNS["audit.loads"]
    selected = ", ".join(f"?::{sql_type} AS {quote_identifier(name)}" for name, sql_type in columns.items())
    write_parquet(con, f"SELECT {selected}", staging.file(f"audit/loads/{staging.load_id}.parquet"), values)


def _record_restatement(
    con: duckdb.DuckDBPyConnection, staging: Staging, table: RawTable, replaced_sql: str, loaded_at: datetime
) -> None:
    """Per restated account × billing period × currency: rows and cost before this load and after it.

    Only keys that held rows before are restatements; a currency the key gains or loses shows with
    zero rows on the side that lacks it.
    """
    account, period, currency = (quote_identifier(c) for c in (*table.restatement_key, table.currency_column))
    billed, effective = quote_identifier(table.billed_cost_column), quote_identifier(table.effective_cost_column)
    write_parquet(
        con,
        f"""
        WITH before AS (
            SELECT {account} AS account, {period} AS period, {currency} AS currency,
                   string_agg(DISTINCT _load_id, ',' ORDER BY _load_id) AS load_ids,
                   count(*) AS row_count, sum({billed}) AS billed, sum({effective}) AS effective
            FROM ({replaced_sql})
            GROUP BY ALL
        ),
        after AS (
            SELECT {account} AS account, {period} AS period, {currency} AS currency,
                   count(*) AS row_count, sum({billed}) AS billed, sum({effective}) AS effective
            FROM incoming_rows
            GROUP BY ALL
        ),
        restated_keys AS (SELECT DISTINCT account, period FROM before)
        SELECT ?::VARCHAR AS load_id, ?::VARCHAR AS raw_table,
               coalesce(b.account, a.account)::VARCHAR AS billing_account_id,
               coalesce(b.period, a.period)::TIMESTAMP AS billing_period_start,
               coalesce(b.currency, a.currency)::VARCHAR AS billing_currency,
               coalesce(b.load_ids, '') AS replaced_load_ids, coalesce(b.row_count, 0)::BIGINT AS rows_before,
               b.billed::{MONEY_SQL_TYPE} AS billed_cost_before, b.effective::{MONEY_SQL_TYPE} AS effective_cost_before,
               coalesce(a.row_count, 0)::BIGINT AS rows_after, a.billed::{MONEY_SQL_TYPE} AS billed_cost_after,
               a.effective::{MONEY_SQL_TYPE} AS effective_cost_after, ?::TIMESTAMP AS restated_at
        FROM before AS b
        FULL OUTER JOIN after AS a
          ON a.account = b.account AND a.period = b.period AND a.currency IS NOT DISTINCT FROM b.currency
        WHERE (coalesce(b.account, a.account), coalesce(b.period, a.period))
              IN (SELECT account, period FROM restated_keys)
        """,
        staging.file(f"audit/restatements/{staging.load_id}.parquet"),
        [staging.load_id, table.name, loaded_at],
    )


def _billing_periods(con: duckdb.DuckDBPyConnection, totals_sql: str, params: Sequence[Any] = ()) -> list[str]:
    rows = con.execute(
        f"SELECT DISTINCT strftime(billing_period_start, '%Y-%m-%d') FROM ({totals_sql}) ORDER BY 1", list(params)
    ).fetchall()
    return [row[0] for row in rows]


def _totals(con: duckdb.DuckDBPyConnection, totals_sql: str, params: Sequence[Any] = ()) -> dict[str, dict[str, str]]:
    rows = con.execute(
        f"SELECT billing_currency, sum(billed_cost), sum(effective_cost) FROM ({totals_sql}) GROUP BY 1 ORDER BY 1",
        list(params),
    ).fetchall()
    return {currency: {"billed": _plain(billed), "effective": _plain(eff)} for currency, billed, eff in rows}


def _plain(value: Decimal) -> str:
    """A decimal as ordinary text with trailing zeros dropped (`12.5`, not `1.25E+1`)."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _outcome_of(con: duckdb.DuckDBPyConnection, load_id: str, *, status: str) -> LoadOutcome:
    row_count, replaced = con.execute(
        "SELECT row_count, replaced_row_count FROM audit.loads WHERE load_id = ?", [load_id]
    ).fetchone()
    return LoadOutcome(
        status=status,
        load_id=load_id,
        rows=row_count,
        replaced_rows=replaced,
        billing_periods=_billing_periods(con, "SELECT * FROM audit.load_totals WHERE load_id = ?", [load_id]),
        totals=_totals(con, "SELECT * FROM audit.load_totals WHERE load_id = ?", [load_id]),
    )


def audit_mismatches(con: duckdb.DuckDBPyConnection, table: RawTable) -> tuple[list[str], list[tuple]]:
    """Keys where `table` does not hold exactly what the latest delivery of that key held.

    For each billing account × billing period, the rows in raw must be those of the latest load
    that carried the key, with the count and totals recorded when it was loaded: nothing lost,
    nothing left over from a restated delivery, nothing counted twice. Returns (header, rows).
    """
    account, period, currency = (f'"{c}"' for c in (*table.restatement_key, table.currency_column))
    billed, effective = f'"{table.billed_cost_column}"', f'"{table.effective_cost_column}"'
    cursor = con.execute(
        f"""
        with latest_load as (
            select t.billing_account_id, t.billing_period_start, arg_max(t.load_id, l.loaded_at) as load_id
            from audit.load_totals as t
            join audit.loads as l using (load_id)
            where l.raw_table = ? and l.status not in ('superseded', 'withheld')
            group by t.billing_account_id, t.billing_period_start
        ),
        expected as (
            select t.*
            from audit.load_totals as t
            join latest_load using (load_id, billing_account_id, billing_period_start)
        ),
        actual as (
            select _load_id as load_id, {account} as billing_account_id, {period} as billing_period_start,
                   {currency} as billing_currency, count(*) as row_count,
                   sum({billed}) as billed_cost, sum({effective}) as effective_cost
            from {table.name}
            group by _load_id, {account}, {period}, {currency}
        )
        select coalesce(e.billing_account_id, a.billing_account_id) as billing_account_id,
               coalesce(e.billing_period_start, a.billing_period_start) as billing_period_start,
               coalesce(e.billing_currency, a.billing_currency) as billing_currency,
               e.load_id as expected_load, a.load_id as found_load,
               e.billed_cost as expected_billed, a.billed_cost as found_billed,
               e.row_count as expected_rows, a.row_count as found_rows
        from expected as e
        full outer join actual as a
          on e.load_id = a.load_id and e.billing_account_id = a.billing_account_id
         and e.billing_period_start = a.billing_period_start and e.billing_currency = a.billing_currency
        where e.load_id is null or a.load_id is null
           or e.row_count <> a.row_count or e.billed_cost <> a.billed_cost or e.effective_cost <> a.effective_cost
        """,
        [table.name],
    )
    return [column[0] for column in cursor.description], cursor.fetchall()


def load_reference_rows(
    con: duckdb.DuckDBPyConnection,
    table: ReferenceTable,
    *,
    source: str,
    delivery: str,
    sha256: str,
    frame: pl.DataFrame,
    format_version: str | None = None,
    whole_partitions: Sequence[tuple[Any, ...]] = (),
) -> LoadOutcome:
    """Replace the keys `frame` carries (and `whole_partitions` whole) and record the load in audit.loads."""
    lake = recover_and_ensure_tables(con, table)
    existing = find_load(con, source, sha256)
    if existing is not None:
        return _outcome_of(con, existing, status="duplicate")
    load_id = str(uuid.uuid4())
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    with _staged_load(con, lake, load_id, frame, list(table.columns)) as staging:
        replaced = _stage_rows(
            con,
            staging,
            table,
            table.partition_columns,
            table.replace_key,
            loaded_at,
            whole_partitions=whole_partitions,
        )
        _stage_load_record(
            con,
            staging,
            [source, table.name, delivery, sha256, frame.height, replaced.rows],
            "[]",
            "{}",
            [format_version, loaded_at, ",".join(replaced.load_ids)],
        )
    return _outcome_of(con, load_id, status="loaded")


@contextmanager
def _staged_load(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    load_id: str,
    incoming: pl.DataFrame | TypedQuery,
    columns: list[str],
    *,
    keep_replaced: bool = False,
) -> Iterator[Staging]:
    """`incoming` (a reader's frame or typed query) visible to SQL as `incoming_rows`, with `columns`, while the
    load's files are staged; then committed whole, or discarded whole.

    DuckDB's transaction holds what the load writes there (the quality gate's results): it commits first, then
    the lake's journal does (see lake.py; recovery deletes results of a load whose journal was never written).
    Arrow's string views are polars' own layout: DuckDB scans the frame's memory instead of a copy of it. A typed
    query becomes a temporary view, made and dropped outside the transaction as a registered frame is, and
    each statement of the load reads from the delivery's files only the columns it needs. Rows are written in no
    particular order (lineage keeps each one's file and row), which lets DuckDB write a file from both cores.
    `keep_replaced`: a billing load keeps what it replaces until the models publish it (lake.py).
    """
    if isinstance(incoming, TypedQuery):
        selected = ", ".join(quote_identifier(column) for column in columns)
        con.execute(f"CREATE OR REPLACE TEMP VIEW incoming_rows AS SELECT {selected} FROM ({incoming.sql})")
    else:
        con.register("incoming_rows", incoming.select(columns).to_arrow(compat_level=pl.CompatLevel.newest()))
    staging = Staging(lake, load_id, keep_replaced=keep_replaced)
    con.execute("SET preserve_insertion_order = false")
    try:
        con.begin()
        yield staging
        pause_if_requested("committing")
        con.commit()
    except BaseException:
        con.rollback()
        staging.abandon()
        raise
    finally:
        con.execute("RESET preserve_insertion_order")
        if isinstance(incoming, TypedQuery):
            con.execute("DROP VIEW IF EXISTS incoming_rows")
        else:
            con.unregister("incoming_rows")
    staging.commit()
