"""What a connector is handed (one delivery) and what it hands back (a typed frame).

A delivery is one file, or one folder whose files arrived together: the part files of one export
run, usually with the export's manifest. Connectors never see the landing zone or the warehouse;
they read a `Delivery` and return a `ParsedDelivery` or raise `RejectedInput`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

import duckdb
import polars as pl

from sources.common.errors import RejectedInput

DATA_SUFFIXES = (".csv", ".csv.gz", ".gz", ".parquet", ".json", ".jsonl", ".ndjson")
MANIFEST_SUFFIXES = ("manifest.json",)
_CLOUD_SCHEMES = {"s3", "gs", "http", "https", "abfs", "abfss", "wasbs"}
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


LINEAGE_SCHEMA: dict[str, pl.DataType] = {"_source_file": pl.String(), "_source_row": pl.Int64()}
"""The last columns of every connector's frame: the file a row came from (its display name) and its row there."""


@dataclass(frozen=True)
class DeliveryWarning:
    """Something odd a reader accepted: the spec allows it or providers emit it, or a value had to be derived.

    The delivery loads; the warning is recorded with its load in `audit.quality_results` (severity
    `warning`) and shown by the CLI, the WARN asset check and the report (docs/data-quality.md).
    """

    rule: str
    """A short, stable name for what was seen, e.g. `ChargeType derived as Usage`."""
    column: str | None
    rows: int
    """How many rows it concerns."""
    message: str
    """What was seen and what the reader did about it, for a person."""
    file: str | None = None
    row: int | None = None
    """The first row it concerns, as in a rejection's message."""

    def describe(self) -> str:
        where = [part for part in (self.file, f"row {self.row}" if self.row is not None else None) if part]
        if self.column is not None:
            where.append(f"column {self.column}")
        return (f"{', '.join(where)}: " if where else "") + self.message


@dataclass(frozen=True)
class TypedQuery:
    """Rows a reader typed in DuckDB: a query over the delivery's own files, in the raw table's column order.

    Columnar deliveries take this path (sources/common/typed_sql.py): the reader has checked every row with
    it, and the loader streams it into the lake, so no delivery is ever held whole in memory.
    """

    sql: str
    rows: int


@dataclass(frozen=True)
class ParsedDelivery:
    frame: pl.DataFrame | TypedQuery
    """Rows in the raw table's column order and types, lineage columns included: a polars frame, or the query
    a DuckDB reader typed them with."""
    format_version: str | None = None
    """The export format and version the parser recognised, e.g. `FOCUS 1.2` or `CUR 2.0`."""
    warnings: tuple[DeliveryWarning, ...] = ()
    """What the reader accepted with a warning (derived values, oddities the spec allows)."""

    @property
    def rows(self) -> int:
        return self.frame.rows if isinstance(self.frame, TypedQuery) else self.frame.height

    def to_polars(self) -> pl.DataFrame:
        """Every row as one polars frame, for tests and small tools (the loader streams a typed query instead)."""
        if isinstance(self.frame, TypedQuery):
            with duckdb.connect() as con:
                return con.sql(self.frame.sql).pl()
        return self.frame


@dataclass(frozen=True)
class Delivery:
    source: str
    path: Path
    landing_root: Path

    @property
    def name(self) -> str:
        """The delivery's path relative to its source's landing folder, as recorded in audit.loads."""
        return self.path.relative_to(self.landing_root).as_posix()

    def all_files(self) -> list[Path]:
        """Every file the delivery holds (hidden and `_`-prefixed entries excluded), in name order.

        A symbolic link that leads out of the delivery (a delivery dropped into the landing zone
        pointing at `/etc/passwd` or at another delivery) rejects the delivery: nothing outside it
        is ever read or hashed as part of it.
        """
        root = self.path if self.path.is_dir() else self.path.parent
        if self.path.is_file() or self.path.is_symlink():
            files = [self.path]
        else:
            files = sorted(
                path for path in self.path.rglob("*") if path.is_file() and not is_hidden(path.relative_to(self.path))
            )
        real_root = root.resolve()
        for file in files:
            if not file.resolve().is_relative_to(real_root):
                raise RejectedInput(
                    self.display_name(file),
                    "is a symbolic link, which links outside the delivery; copy the file in instead",
                )
        return files

    def files(self) -> list[Path]:
        """The data files of the delivery (manifests excluded)."""
        return [path for path in self.all_files() if _is_data_file(path) and not is_manifest(path)]

    def manifests(self) -> list[Path]:
        return [path for path in self.all_files() if is_manifest(path)]

    def display_name(self, file: Path) -> str:
        """A file's name for lineage and messages: relative to the landing folder of its source."""
        return file.relative_to(self.landing_root).as_posix()

    def sha256(self) -> str:
        """Content hash; for a folder, over its files' relative paths and contents (manifests included)."""
        digest = hashlib.sha256()
        for file in self.all_files():
            if self.path.is_dir():
                digest.update(file.relative_to(self.path).as_posix().encode() + b"\0")
            with file.open("rb") as handle:
                for chunk in iter(lambda h=handle: h.read(1 << 20), b""):
                    digest.update(chunk)
        return digest.hexdigest()

    def resolve_listed(self, listed: str, *, manifest: Path) -> Path:
        """The delivery's own copy of a file a manifest lists, refusing anything outside the delivery.

        Manifests name files by their cloud location (`s3://bucket/prefix/export/data/…/part-1.parquet`,
        an Azure blob name) or by a relative path. The local copy is the delivery file whose path
        ends with the longest run of the listed path's trailing segments. A listed path that climbs
        out (`..`), is an absolute local path, or resolves (through a symlink) outside the delivery
        is rejected, as is one the delivery does not hold.
        """
        where = self.display_name(manifest)
        if listed.startswith(("/", "\\")) or _WINDOWS_DRIVE.match(listed):
            raise RejectedInput(where, f"lists {listed!r}: an absolute local path, outside the delivery")
        parsed = urlparse(listed)
        if parsed.scheme in _CLOUD_SCHEMES:
            raw_path = unquote(parsed.path)
        elif parsed.scheme:
            raise RejectedInput(where, f"lists {listed!r}: unsupported location scheme {parsed.scheme!r}")
        else:
            raw_path = listed
        parts = [part for part in PurePosixPath(raw_path.replace("\\", "/")).parts if part not in ("", "/", ".")]
        if ".." in parts:
            raise RejectedInput(where, f"lists {listed!r}: a path that climbs out of the delivery")
        root = self.path if self.path.is_dir() else self.path.parent
        real_root = root.resolve()
        for start in range(len(parts)):
            candidate = root.joinpath(*parts[start:])
            if candidate.is_file() or candidate.is_symlink():
                if not candidate.resolve().is_relative_to(real_root):
                    raise RejectedInput(where, f"lists {listed!r}, which links outside the delivery")
                return candidate
        raise RejectedInput(where, f"lists {listed!r}, which this delivery does not hold")


def is_manifest(path: Path) -> bool:
    return path.name.lower().endswith(MANIFEST_SUFFIXES)


def is_hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)


def _is_data_file(path: Path) -> bool:
    return path.name.lower().endswith(DATA_SUFFIXES)
