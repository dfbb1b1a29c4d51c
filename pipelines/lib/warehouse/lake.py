"""The raw layer as plain Parquet under the lake: one truth that DuckDB and Spark both read.

Layout (`FINOPS_LAKE`, default `$FINOPS_HOME/lake`):

    raw/<table>/schema.parquet                     zero rows with the table's columns: readable before any delivery
    raw/<table>/<part>[/<part>…]/<load_id>.parquet one folder per partition (billing account × billing period,
                                                   a reference table's key); a file holds one load's rows only
    audit/<table>/<load_id>.parquet                append-only records of each load (loads, load_totals, restatements)
    _staging/<load_id>/…                           a load being written, mirroring the layout above
    _journal/<load_id>.json                        the commit point: the partitions and files the load swaps in
    _trash/<load_id>/…                             partition folders swapped out, deleted once the swap is done
    _unpublished/<load_id>/…                       the folders a billing load swapped out, kept until the models
                                                   accept it (`publish`) or it is withheld (`withdraw` swaps them back)

Names starting with `_` or `.` are not data for Spark, and DuckDB's views glob only `raw/<table>/` and
`audit/<table>/`, so nothing staged is ever read. Commit protocol: stage every new partition folder and
audit file under `_staging/<load_id>/`, then write the journal (write to a temporary name, fsync, rename:
atomic) — the commit point —, then swap each partition folder (old one renamed to the trash, staged one
renamed in), move the audit files in, delete trash, staging and journal. `recover` runs before every load:
it rolls committed journals forward (each step is idempotent) and deletes staging without a journal. A
reader sees each partition old or new; the swap of a load's partitions is not atomic across partitions
(readers run between writes here: ingest, then the build).

Write, audit, publish: a billing load is committed to raw before the models have seen it, so it keeps what it
replaced under `_unpublished/<load_id>/` (`<n>/` the previous version of its n-th partition, absent where the
partition is new). A model build that accepts the load publishes it (the kept folders are deleted); one whose rules
fail on its rows withdraws it: a journaled swap (the same commit protocol) puts the kept folders back wherever the
load's own file is still in place, so a later load that replaced a partition since keeps it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import duckdb

from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.settings import lake_root
from sources.common.sql import sql_text, sql_text_list

SCHEMA_FILE = "schema.parquet"
LOAD_FILE = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.parquet$"
"""A data file is named after the load whose rows it holds (a UUID)."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,99}")


@dataclass(frozen=True)
class Lake:
    root: Path

    def folder(self, table_name: str) -> Path:
        """`raw.aws_cur_line_items` → `<lake>/raw/aws_cur_line_items`."""
        schema, table = table_name.split(".")
        return self.root / schema / table

    @property
    def staging(self) -> Path:
        return self.root / "_staging"

    @property
    def journal(self) -> Path:
        return self.root / "_journal"

    @property
    def trash(self) -> Path:
        return self.root / "_trash"

    @property
    def unpublished(self) -> Path:
        return self.root / "_unpublished"

    def files_glob(self, table_name: str) -> str:
        return f"{self.folder(table_name)}/**/*.parquet"


def warehouse_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The connection's database file (None in memory)."""
    path = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return path[0][0] if path else None


def lake_of(con: duckdb.DuckDBPyConnection) -> Lake:
    """The lake beside this connection's warehouse file (`FINOPS_LAKE` when set)."""
    warehouse = warehouse_path(con)
    return Lake(lake_root(Path(warehouse).parent if warehouse else None))


def folder_name(value: Any) -> str:
    """A partition value as one path segment that both engines read as data and every filesystem accepts.

    Plain identifiers stay readable; anything else (slashes, a leading `_` or `.`, spaces) becomes a slug plus
    a hash of the value, so distinct values never share a folder.
    """
    if value is None:
        return "null"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d") if value.time() == time() else value.strftime("%Y-%m-%dT%H%M%S.%f")
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    if _SAFE_NAME.fullmatch(text) and text != "null" and not text.startswith("x-"):
        return text
    slug = re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-.")[:40]
    return f"x-{slug}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def write_parquet(con: duckdb.DuckDBPyConnection, select_sql: str, target: Path, params: Sequence[Any] = ()) -> None:
    """`select_sql`'s rows as one Parquet file, streamed by DuckDB (memory follows its row groups)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY ({select_sql}) TO {sql_text(str(target))} (FORMAT parquet)", list(params))


def _columns_sql(columns: dict[str, str]) -> str:
    return ", ".join(f'CAST(NULL AS {sql_type}) AS "{name}"' for name, sql_type in columns.items())


def ensure_schema_file(con: duckdb.DuckDBPyConnection, lake: Lake, table_name: str, columns: dict[str, str]) -> None:
    """The table's zero-row file, (re)written when missing or when the declared columns changed."""
    target = lake.folder(table_name) / SCHEMA_FILE
    if target.exists():
        found = con.execute(f"DESCRIBE SELECT * FROM read_parquet({sql_text(str(target))})").fetchall()
        if [(row[0], row[1]) for row in found] == [(name, t.replace(", ", ",")) for name, t in columns.items()]:
            return
    temporary = target.with_name(".schema.parquet.tmp")
    write_parquet(con, f"SELECT {_columns_sql(columns)} LIMIT 0", temporary)
    os.replace(temporary, target)


def is_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """True if `name` is a base table of this warehouse (a raw or audit table from before the lake)."""
    schema, table = name.split(".")
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ? AND database_name = "
            "current_database()",
            [schema, table],
        ).fetchall()[0][0]
    )


def ensure_view(con: duckdb.DuckDBPyConnection, name: str, select_sql: str) -> None:
    """`name` as a view of `select_sql`, recreated when it reads something else (e.g. the lake moved)."""
    schema, view = name.split(".")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    found = con.execute(
        "SELECT sql FROM duckdb_views() WHERE schema_name = ? AND view_name = ? AND database_name = current_database()",
        [schema, view],
    ).fetchall()
    if found and select_sql in found[0][0]:
        return
    con.execute(f"CREATE OR REPLACE VIEW {name} AS {select_sql}")


def files_view_sql(paths: Iterable[str] | str) -> str:
    """Every file of a table (a glob or a list of files) as one relation, columns matched by name."""
    if isinstance(paths, str):
        return f"SELECT * FROM read_parquet({sql_text(paths)}, union_by_name = true)"
    return f"SELECT * FROM read_parquet({sql_text_list(paths)}, union_by_name = true)"


def partitions_of(lake: Lake, table_name: str) -> dict[str, list[Path]]:
    """Each partition folder of a table (relative to the lake) holding data, with its files."""
    folder = lake.folder(table_name)
    found: dict[str, list[Path]] = {}
    if folder.exists():
        for path in sorted(folder.rglob("*.parquet")):
            if path.parent != folder:
                found.setdefault(path.parent.relative_to(lake.root).as_posix(), []).append(path)
    return found


@dataclass
class Staging:
    """One load's files under `_staging/<load_id>/`, mirroring where they go; committed by `commit`."""

    lake: Lake
    load_id: str
    partitions: list[str] = field(default_factory=list)
    """Partition folders (relative to the lake) the load replaces; an empty staged folder removes one."""
    files: list[str] = field(default_factory=list)
    """Audit files (relative to the lake) the load adds."""
    keep_replaced: bool = False
    """Keep the partition folders the load replaces under `_unpublished/<load_id>/` until it is published."""
    discard: list[str] = field(default_factory=list)
    """Folders (relative to the lake) deleted once the swap is done: the kept folders of a load withdrawn."""

    @property
    def folder(self) -> Path:
        return self.lake.staging / self.load_id

    def partition(self, relative: str) -> Path:
        staged = self.folder / relative
        if relative not in self.partitions:
            staged.mkdir(parents=True, exist_ok=True)
            self.partitions.append(relative)
        return staged

    def file(self, relative: str) -> Path:
        self.files.append(relative)
        return self.folder / relative

    def staged_files(self) -> list[Path]:
        return [path for relative in self.partitions for path in sorted((self.folder / relative).glob("*.parquet"))]

    def commit(self) -> None:
        """Write the journal atomically (the commit point), then swap everything in."""
        self.lake.journal.mkdir(parents=True, exist_ok=True)
        journal = self.lake.journal / f"{self.load_id}.json"
        temporary = journal.with_suffix(".json.tmp")
        with temporary.open("w") as out:
            record = {
                "load_id": self.load_id,
                "partitions": self.partitions,
                "files": self.files,
                "keep_replaced": self.keep_replaced,
                "discard": self.discard,
            }
            json.dump(record, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, journal)
        _fsync_folder(self.lake.journal)
        _roll_forward(self.lake, journal)

    def abandon(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _roll_forward(lake: Lake, journal: Path) -> None:
    """Apply a committed journal; every step checks what is done, so a crash anywhere in here is resumed."""
    record = json.loads(journal.read_text())
    load_id = record["load_id"]
    keep = record.get("keep_replaced", False)
    staged, trash = lake.staging / load_id, (lake.unpublished if keep else lake.trash) / load_id
    if keep:
        _write_once(trash / UNPUBLISHED_RECORD, {"load_id": load_id, "partitions": record["partitions"]})
    for number, relative in enumerate(record["partitions"]):
        source, target = staged / relative, lake.root / relative
        if not source.exists():
            continue  # swapped in before a crash
        if target.exists():
            trash.mkdir(parents=True, exist_ok=True)
            target.rename(trash / str(number))
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        if number == 0 and len(record["partitions"]) > 1:
            pause_if_requested("swapping")
    for relative in record["files"]:
        source, target = staged / relative, lake.root / relative
        if source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
    if not keep:
        shutil.rmtree(trash, ignore_errors=True)
    for relative in record.get("discard", []):
        shutil.rmtree(lake.root / relative, ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)
    journal.unlink()


def _write_once(path: Path, content: dict[str, Any]) -> None:
    """`content` as JSON at `path` (atomically), unless an earlier attempt already wrote it."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(content))
    os.replace(temporary, path)


UNPUBLISHED_RECORD = "partitions.json"
"""In `_unpublished/<load_id>/`: the partitions the load swapped in, in the order of the kept `<n>/` folders."""


def unpublished_loads(lake: Lake) -> list[str]:
    """Billing loads committed to raw that no successful model build has accepted yet."""
    if not lake.unpublished.exists():
        return []
    return sorted(path.parent.name for path in lake.unpublished.glob(f"*/{UNPUBLISHED_RECORD}"))


def publish(lake: Lake, load_ids: Iterable[str]) -> None:
    """The models accepted these loads: what they replaced is no longer needed to withdraw them."""
    for load_id in load_ids:
        shutil.rmtree(lake.unpublished / load_id, ignore_errors=True)


def stage_withdrawal(lake: Lake, load_id: str) -> Staging:
    """A staging that takes an unpublished load back out of the lake; commit it to withdraw the load.

    Where the load's own file is still in place, the partition gets back the version the load replaced. Where a
    later unpublished load has replaced the partition since, that load keeps it, and what it would put back if it
    were withdrawn too (its kept version, holding this load's file) becomes this load's kept version instead, so
    loads can be withdrawn in any order and a withdrawn load's rows never come back. Kept files are linked, not
    moved, into the staging: until the journal commits, every kept folder stays whole.
    """
    kept = lake.unpublished / load_id
    staging = Staging(lake, f"{load_id}.withdrawn", discard=[kept.relative_to(lake.root).as_posix()])
    holding_this_load = {
        relative: folder
        for other in unpublished_loads(lake)
        if other != load_id
        for number, relative in enumerate(_kept_partitions(lake, other))
        if ((folder := lake.unpublished / other / str(number)) / f"{load_id}.parquet").exists()
    }
    for number, relative in enumerate(_kept_partitions(lake, load_id)):
        if (lake.root / relative / f"{load_id}.parquet").exists():
            target = staging.partition(relative)
        elif relative in holding_this_load:
            target = staging.partition(holding_this_load[relative].relative_to(lake.root).as_posix())
        else:
            continue
        previous = kept / str(number)
        for path in sorted(previous.glob("*.parquet")) if previous.exists() else []:
            _link_or_copy(path, target / path.name)
    return staging


def _kept_partitions(lake: Lake, load_id: str) -> list[str]:
    return json.loads((lake.unpublished / load_id / UNPUBLISHED_RECORD).read_text())["partitions"]


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def recover(con: duckdb.DuckDBPyConnection, lake: Lake) -> list[str]:
    """Finish committed loads a crash interrupted and discard uncommitted ones; the ids discarded.

    Runs in the (single) writer before it loads. A discarded load's quality results, committed to the
    warehouse just before a crash that came ahead of the journal, are deleted with it.
    """
    if lake.journal.exists():
        for leftover in lake.journal.glob("*.tmp"):
            leftover.unlink()
        for journal in sorted(lake.journal.glob("*.json")):
            _roll_forward(lake, journal)
    discarded = []
    if lake.staging.exists():
        for staged in sorted(lake.staging.iterdir()):
            shutil.rmtree(staged, ignore_errors=True)
            discarded.append(staged.name)
    shutil.rmtree(lake.trash, ignore_errors=True)
    if discarded and is_table(con, "audit.quality_results"):
        con.execute("DELETE FROM audit.quality_results WHERE load_id IN (SELECT unnest(?::VARCHAR[]))", [discarded])
    return discarded
