"""Writing raw deliveries into the DuckDB warehouse: idempotent, restatements atomic, audited.

Every load runs in one transaction: delete the rows of the (account, billing period) keys the
delivery covers, insert the delivery, record it in `audit.loads` and `audit.load_totals`, and for
every key that held rows before, what it held before and after in `audit.restatements`. Either
all of it lands or none of it does (a process killed mid-load leaves the warehouse as it was:
DuckDB only writes a transaction to its log on commit). A delivery whose sha256 was loaded
before changes nothing. A `before_commit` callback (the quality gate) sees the delivery's rows in
raw inside the transaction and can still reject it: raising rolls the whole load back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.operations.test_hooks import pause_if_requested
from pipelines.lib.settings import duckdb_memory_limit
from sources.focus.columns import DECIMAL_PRECISION, DECIMAL_SCALE

MONEY_SQL_TYPE = f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})"


def quote_identifier(name: str) -> str:
    """A column, table or schema name as a SQL identifier: double-quoted, inner quotes doubled.

    Names come from code (table specs) or the catalog, never from data; quoting keeps even an odd
    catalog name an identifier.
    """
    return '"' + name.replace('"', '""') + '"'


class WarehouseBusy(RuntimeError):
    """Another process holds the DuckDB file's write lock (DuckDB allows one writer process)."""


@dataclass(frozen=True)
class RawTable:
    """A raw table and the columns the loader needs to restate and audit it."""

    name: str
    columns: dict[str, pl.DataType]
    restatement_key: tuple[str, str]
    """(account column, billing period start column): a new delivery replaces these keys whole."""
    currency_column: str
    billed_cost_column: str
    effective_cost_column: str
    snapshot: bool = False
    """True for inventories: every delivery is the whole table and replaces all of it."""

    @property
    def account_column(self) -> str:
        return self.restatement_key[0]

    @property
    def period_column(self) -> str:
        return self.restatement_key[1]


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


@contextmanager
def connect(path: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection that is always closed: DuckDB allows one writer process at a time."""
    if read_only and not path.exists():
        raise FileNotFoundError(f"no warehouse at {path}: run `gpu-finops demo` or `gpu-finops ingest` first")
    try:
        con = duckdb.connect(str(path), read_only=read_only, config={"memory_limit": duckdb_memory_limit()})
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        raise WarehouseBusy(
            f"the warehouse {path} is locked by another process (DuckDB allows one writer at a time): "
            f"{str(exc).strip().splitlines()[0]}. Wait for that run to finish and try again; in Dagster, "
            "writers queue in the duckdb_writer concurrency pool."
        ) from exc
    try:
        yield con
    finally:
        con.close()


def _sql_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMP"
    if dtype == pl.Date:
        return "DATE"
    if dtype == pl.Int64:
        return "BIGINT"
    return "VARCHAR"


def ensure_tables(con: duckdb.DuckDBPyConnection, table: RawTable | ReferenceTable) -> None:
    columns = ",\n  ".join(f'"{name}" {_sql_type(dtype)}' for name, dtype in table.columns.items())
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    con.execute("CREATE SCHEMA IF NOT EXISTS audit")
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {table.name} (\n  {columns},\n"
        "  _load_id VARCHAR NOT NULL,\n  _ingested_at TIMESTAMP NOT NULL\n)"
    )
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS audit.loads (
            load_id VARCHAR PRIMARY KEY,
            source VARCHAR NOT NULL,
            raw_table VARCHAR NOT NULL,
            delivery VARCHAR NOT NULL,
            sha256 VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            row_count BIGINT NOT NULL,
            replaced_row_count BIGINT NOT NULL,
            billing_periods VARCHAR NOT NULL,
            cost_totals VARCHAR NOT NULL,
            format_version VARCHAR,
            loaded_at TIMESTAMP NOT NULL,
            superseded_by VARCHAR
        )
        """
    )
    con.execute(
        f"""
        CREATE TABLE IF NOT EXISTS audit.restatements (
            load_id VARCHAR NOT NULL,
            raw_table VARCHAR NOT NULL,
            billing_account_id VARCHAR NOT NULL,
            billing_period_start TIMESTAMP NOT NULL,
            billing_currency VARCHAR,
            replaced_load_ids VARCHAR NOT NULL,
            rows_before BIGINT NOT NULL,
            billed_cost_before {MONEY_SQL_TYPE},
            effective_cost_before {MONEY_SQL_TYPE},
            rows_after BIGINT NOT NULL,
            billed_cost_after {MONEY_SQL_TYPE},
            effective_cost_after {MONEY_SQL_TYPE},
            restated_at TIMESTAMP NOT NULL
        )
        """
    )
    con.execute(
        f"""
        CREATE TABLE IF NOT EXISTS audit.load_totals (
            load_id VARCHAR NOT NULL,
            billing_account_id VARCHAR NOT NULL,
            billing_period_start TIMESTAMP NOT NULL,
            billing_currency VARCHAR NOT NULL,
            row_count BIGINT NOT NULL,
            billed_cost {MONEY_SQL_TYPE} NOT NULL,
            effective_cost {MONEY_SQL_TYPE} NOT NULL
        )
        """
    )


def find_load(con: duckdb.DuckDBPyConnection, source: str, sha256: str) -> str | None:
    """The load that already holds this delivery, if any (none before the first load ever)."""
    audit_exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'audit' AND table_name = 'loads'"
    ).fetchone()[0]
    if not audit_exists:
        return None
    row = con.execute(
        "SELECT load_id FROM audit.loads WHERE source = ? AND sha256 = ? ORDER BY loaded_at LIMIT 1",
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
    frame: pl.DataFrame,
    format_version: str | None = None,
    before_commit: Callable[[str], object] | None = None,
) -> LoadOutcome:
    """Load one parsed delivery, replacing the account × billing-period keys it covers (or all, for a snapshot).

    `before_commit(load_id)` runs last inside the transaction, with the delivery's rows in raw; if it
    raises, nothing of the load is committed.
    """
    ensure_tables(con, table)
    existing = find_load(con, source, sha256)
    if existing is not None:
        return _outcome_of(con, existing, status="duplicate")

    load_id = str(uuid.uuid4())
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    names = list(table.columns)
    account, period = (f'"{column}"' for column in table.restatement_key)
    replaced_rows = (
        "true"
        if table.snapshot
        else f"({account}, {period}) IN (SELECT DISTINCT {account}, {period} FROM incoming_delivery)"
    )
    with _staged(con, "incoming_delivery", frame.select(names)):
        replaced_loads = [
            row[0]
            for row in con.execute(f"SELECT DISTINCT _load_id FROM {table.name} WHERE {replaced_rows}").fetchall()
        ]
        if replaced_loads:
            _record_restatement(con, table, replaced_rows, load_id, loaded_at)
        replaced = _replace_rows(con, table.name, names, replaced_rows, "incoming_delivery", load_id, loaded_at)
        con.execute(
            f"""
            INSERT INTO audit.load_totals
            SELECT ?, {account}, {period}, "{table.currency_column}", count(*),
                   sum("{table.billed_cost_column}"), sum("{table.effective_cost_column}")
            FROM incoming_delivery
            GROUP BY {account}, {period}, "{table.currency_column}"
            """,
            [load_id],
        )
        periods = _billing_periods(con, load_id)
        con.execute(
            "INSERT INTO audit.loads VALUES (?, ?, ?, ?, ?, 'loaded', ?, ?, ?, ?, ?, ?, NULL)",
            [
                load_id,
                source,
                table.name,
                delivery,
                sha256,
                frame.height,
                replaced,
                json.dumps(periods),
                json.dumps(_totals(con, load_id)),
                format_version,
                loaded_at,
            ],
        )
        if replaced_loads:
            # A previous load is superseded once none of its rows remain (a restatement can
            # replace only some of the billing periods a delivery carried).
            con.execute(
                f"""
                UPDATE audit.loads SET status = 'superseded', superseded_by = ?
                WHERE load_id IN (SELECT unnest(?::VARCHAR[]))
                  AND load_id NOT IN (SELECT DISTINCT _load_id FROM {table.name})
                """,
                [load_id, replaced_loads],
            )
        if before_commit is not None:
            before_commit(load_id)
    return _outcome_of(con, load_id, status="loaded")


def _record_restatement(
    con: duckdb.DuckDBPyConnection, table: RawTable, replaced_rows: str, load_id: str, loaded_at: datetime
) -> None:
    """Per restated account × billing period × currency: rows and cost before this load and after it.

    Only keys that held rows before are restatements; a currency the key gains or loses shows with
    zero rows on the side that lacks it.
    """
    account, period, currency = (f'"{c}"' for c in (*table.restatement_key, table.currency_column))
    billed, effective = f'"{table.billed_cost_column}"', f'"{table.effective_cost_column}"'
    con.execute(
        f"""
        INSERT INTO audit.restatements
        WITH before AS (
            SELECT {account} AS account, {period} AS period, {currency} AS currency,
                   string_agg(DISTINCT _load_id, ',' ORDER BY _load_id) AS load_ids,
                   count(*) AS row_count, sum({billed}) AS billed, sum({effective}) AS effective
            FROM {table.name} WHERE {replaced_rows}
            GROUP BY ALL
        ),
        after AS (
            SELECT {account} AS account, {period} AS period, {currency} AS currency,
                   count(*) AS row_count, sum({billed}) AS billed, sum({effective}) AS effective
            FROM incoming_delivery
            GROUP BY ALL
        ),
        restated_keys AS (SELECT DISTINCT account, period FROM before)
        SELECT ?, ?, coalesce(b.account, a.account), coalesce(b.period, a.period), coalesce(b.currency, a.currency),
               coalesce(b.load_ids, ''), coalesce(b.row_count, 0), b.billed, b.effective,
               coalesce(a.row_count, 0), a.billed, a.effective, ?
        FROM before AS b
        FULL OUTER JOIN after AS a
          ON a.account = b.account AND a.period = b.period AND a.currency IS NOT DISTINCT FROM b.currency
        WHERE (coalesce(b.account, a.account), coalesce(b.period, a.period))
              IN (SELECT account, period FROM restated_keys)
        """,
        [load_id, table.name, loaded_at],
    )


def _billing_periods(con: duckdb.DuckDBPyConnection, load_id: str) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT strftime(billing_period_start, '%Y-%m-%d') FROM audit.load_totals "
        "WHERE load_id = ? ORDER BY 1",
        [load_id],
    ).fetchall()
    return [row[0] for row in rows]


def _totals(con: duckdb.DuckDBPyConnection, load_id: str) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT billing_currency, sum(billed_cost), sum(effective_cost) FROM audit.load_totals "
        "WHERE load_id = ? GROUP BY 1 ORDER BY 1",
        [load_id],
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
        billing_periods=_billing_periods(con, load_id),
        totals=_totals(con, load_id),
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
            where l.raw_table = ? and l.status <> 'superseded'
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


@dataclass(frozen=True)
class ReferenceTable:
    """A raw table of reference data (exchange rates, market prices) replaced by key, not by billing period."""

    name: str
    columns: dict[str, pl.DataType]
    replace_key: tuple[str, ...]
    """A load replaces every row whose key values it carries (e.g. rate_date: a day's rates are restated whole)."""


def load_reference_rows(
    con: duckdb.DuckDBPyConnection,
    table: ReferenceTable,
    *,
    source: str,
    delivery: str,
    sha256: str,
    frame: pl.DataFrame,
    format_version: str | None = None,
) -> LoadOutcome:
    """Replace the keys `frame` carries in one transaction and record the load in audit.loads."""
    ensure_tables(con, table)
    existing = find_load(con, source, sha256)
    if existing is not None:
        return _outcome_of(con, existing, status="duplicate")
    load_id = str(uuid.uuid4())
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    names = list(table.columns)
    key = ", ".join(f'"{column}"' for column in table.replace_key)
    replaced_keys = f"({key}) IN (SELECT DISTINCT {key} FROM incoming_reference)"
    with _staged(con, "incoming_reference", frame.select(names)):
        replaced = _replace_rows(con, table.name, names, replaced_keys, "incoming_reference", load_id, loaded_at)
        con.execute(
            "INSERT INTO audit.loads VALUES (?, ?, ?, ?, ?, 'loaded', ?, ?, '[]', '{}', ?, ?, NULL)",
            [load_id, source, table.name, delivery, sha256, frame.height, replaced, format_version, loaded_at],
        )
    return _outcome_of(con, load_id, status="loaded")


@contextmanager
def _staged(con: duckdb.DuckDBPyConnection, view: str, frame: pl.DataFrame) -> Iterator[None]:
    """`frame` visible to SQL as `view` inside one transaction: committed whole, or rolled back whole.

    Arrow's string views are polars' own layout: DuckDB scans the frame's memory instead of a copy of it.
    """
    con.register(view, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
    try:
        con.begin()
        yield
        pause_if_requested("committing")
        con.commit()
    except BaseException:
        con.rollback()
        raise
    finally:
        con.unregister(view)


def _replace_rows(
    con: duckdb.DuckDBPyConnection,
    table_name: str,
    names: list[str],
    replaced_where: str,
    view: str,
    load_id: str,
    loaded_at: datetime,
) -> int:
    """Delete the rows `replaced_where` selects, insert the staged view's rows; the number deleted."""
    quoted = ", ".join(f'"{name}"' for name in names)
    replaced = con.execute(f"DELETE FROM {table_name} WHERE {replaced_where}").fetchone()[0]
    con.execute(
        f"INSERT INTO {table_name} ({quoted}, _load_id, _ingested_at) SELECT {quoted}, ?, ? FROM {view}",
        [load_id, loaded_at],
    )
    return replaced
