"""Reading one Parquet delivery both ways, as one streamed DuckDB query and file by file into a polars frame
(the path of a delivery that mixes formats), and comparing what comes out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipelines.lib.catalog.billing import BillingSource
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.lake import Lake
from pipelines.lib.warehouse.loads import load_delivery
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput


@dataclass(frozen=True)
class BothReaders:
    """A format's two ways of reading a delivery's files, and the billing source they load into."""

    source: BillingSource
    delivered_files: Callable[[Delivery], list[Path]]
    parquet_parts: Callable[[list[Path], list[str]], list[Any] | None]
    in_duckdb: Callable[[list[Any]], ParsedDelivery]
    file_by_file: Callable[[list[Path], list[str]], ParsedDelivery]

    def delivery(self, folder: Path) -> Delivery:
        return Delivery(source=self.source.name, path=folder, landing_root=folder.parent)

    def parsed_both_ways(self, folder: Path) -> tuple[ParsedDelivery, ParsedDelivery]:
        """Each way's result; the delivery must be Parquet."""
        target = self.delivery(folder)
        files = self.delivered_files(target)
        names = [target.display_name(file) for file in files]
        parts = self.parquet_parts(files, names)
        assert parts is not None, "the delivery should be read as Parquet parts"
        return self.in_duckdb(parts), self.file_by_file(files, names)

    def outcomes(self, folder: Path) -> tuple[object, object]:
        """What each reader does with the delivery: its rows as a frame, or the rejection's message."""
        target = self.delivery(folder)
        files = self.delivered_files(target)
        names = [target.display_name(file) for file in files]
        parts = self.parquet_parts(files, names)
        assert parts is not None, "the delivery should be read as Parquet parts"
        found = []
        for read in (lambda: self.in_duckdb(parts), lambda: self.file_by_file(files, names)):
            try:
                found.append(read().to_polars())
            except RejectedInput as error:
                found.append(error.describe())
        return found[0], found[1]

    def assert_same_raw_table(self, tmp_path: Path, folder: Path) -> int:
        """Load the delivery through each reader into its own warehouse; the raw rows must be identical.

        Compared in DuckDB, both ways with EXCEPT ALL (the lake's files hold rows in no particular order),
        after the column names and types; returns the rows loaded.
        """
        target = self.delivery(folder)
        parsed = self.parsed_both_ways(folder)
        homes = [FinopsHome(tmp_path / "duckdb").create_folders(), FinopsHome(tmp_path / "polars").create_folders()]
        for home, one in zip(homes, parsed, strict=True):
            with connect(home.warehouse) as con:
                load_delivery(
                    con,
                    self.source.raw_table,
                    source=self.source.name,
                    delivery=target.name,
                    sha256=target.sha256(),
                    frame=one.frame,
                    format_version=one.format_version,
                )
        one, other = (self._raw_rows(home) for home in homes)
        with duckdb.connect() as con:
            assert con.execute(f"DESCRIBE {one}").fetchall() == con.execute(f"DESCRIBE {other}").fetchall()
            rows = con.execute(f"SELECT count(*) FROM ({one})").fetchall()[0][0]
            assert rows == con.execute(f"SELECT count(*) FROM ({other})").fetchall()[0][0]
            assert con.execute(f"SELECT count(*) FROM (({one}) EXCEPT ALL ({other}))").fetchall() == [(0,)]
            assert con.execute(f"SELECT count(*) FROM (({other}) EXCEPT ALL ({one}))").fetchall() == [(0,)]
        return rows

    def _raw_rows(self, home: FinopsHome) -> str:
        folder = Lake(home.lake).folder(self.source.raw_table.name)
        files = f"read_parquet('{folder}/*/*/*.parquet', union_by_name = true)"
        return f"SELECT * EXCLUDE (_load_id, _ingested_at) FROM {files}"


def set_value(part: int, row: int, column: str, value: Any) -> Callable[[list[dict], list[dict]], None]:
    """A change to two part files' rows (lists of dicts): `column` of row `row` (from 1) of part `part` (1 or 2)."""

    def change(first: list[dict], second: list[dict]) -> None:
        (first if part == 1 else second)[row - 1][column] = value

    return change
