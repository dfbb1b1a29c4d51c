"""Opening a delivered file: sniffing Parquet or gzip from its bytes, inflating gzip safely, reading CSV as text.

Real files differ from what their names say (a `.csv` that is gzip, a `.gz` that is truncated, a UTF-16
spreadsheet export, a semicolon-separated file); every connector meets the same surprises, so they are
handled once here, each with a message naming the file and, where there is one, the row.
"""

from __future__ import annotations

import csv
import gzip
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput

NULL_LITERALS = ["NULL", "null"]
"""Spellings of null in real files: FOCUS-Sample-Data writes `NULL`, the spec's worked examples `null`."""

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def magic_bytes(path: Path, name: str) -> bytes:
    """The first four bytes, which say what the file is whatever its name claims."""
    try:
        with path.open("rb") as handle:
            return handle.read(4)
    except OSError as exc:
        raise RejectedInput(name, f"cannot be opened: {exc.strerror or exc}") from exc


def read_raw(path: Path, name: str) -> pl.DataFrame:
    """A Parquet file as stored, or a (gzip) CSV file as text columns; `NULL` literals become nulls."""
    magic = magic_bytes(path, name)
    if magic.startswith(PARQUET_MAGIC):
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:
            raise RejectedInput(name, f"is not a readable Parquet file: {first_line(exc)}") from exc
        text = pl.col(pl.String)
        return frame.with_columns(pl.when(text.is_in(NULL_LITERALS)).then(None).otherwise(text).name.keep())
    return read_text_table(path, name)


def read_text_table(path: Path, name: str) -> pl.DataFrame:
    """A (gzip) CSV file as text columns, whatever its name; `NULL` literals become nulls."""
    with decompressed(path, name, gzipped=magic_bytes(path, name).startswith(GZIP_MAGIC)) as csv_path:
        return read_csv(csv_path, name)


@contextmanager
def decompressed(path: Path, name: str, *, gzipped: bool, count_lines: bool = False) -> Iterator[Path]:
    """Yield a plain-text path; gzip is inflated to a temporary file so truncation is detected.

    polars silently returns the rows before the break of a truncated gzip stream; Python's gzip
    module raises instead, which is what a load that must not lose rows needs. With `count_lines`
    (line-per-record formats) the message says how many complete lines precede the break.
    """
    if not gzipped:
        yield path
        return
    with tempfile.NamedTemporaryFile(suffix=".txt") as plain:
        try:
            with gzip.open(path, "rb") as compressed:
                # read1 hands over what was inflated before a break, so the lines before it can be counted
                while chunk := compressed.read1(1 << 20):
                    plain.write(chunk)
        except (EOFError, OSError, zlib.error) as exc:
            if not count_lines:
                raise RejectedInput(name, f"is a truncated or corrupt gzip file: {exc}") from exc
            plain.flush()
            plain.seek(0)
            complete_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: plain.read(1 << 20), b""))
            raise RejectedInput(
                name,
                f"is a truncated or corrupt gzip file ({exc}); {complete_lines} complete line(s) precede the break",
                row=complete_lines + 1,
            ) from exc
        plain.flush()
        yield Path(plain.name)


def check_utf8_text(path: Path, name: str, *, layout: str = "UTF-8 CSV") -> bytes:
    """Reject a UTF-16 (spreadsheet "Unicode text") or binary file from its first 4 KiB; returns them."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith(_UTF16_BOMS) or b"\x00" in head:
        raise RejectedInput(name, f"is not UTF-8 text (UTF-16 or binary); export the file again as {layout}")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:
            raise RejectedInput(name, f"is not UTF-8 text; export the file again as {layout}") from exc
    return head


def read_csv(path: Path, name: str) -> pl.DataFrame:
    """A comma-separated UTF-8 file as text columns, or RejectedInput saying what is wrong with its shape."""
    head = check_utf8_text(path, name)
    header = head.split(b"\n", 1)[0]
    if b"," not in header and any(sep in header for sep in (b";", b"\t", b"|")):
        raise RejectedInput(name, "the header has no commas: the file is delimited by something other than commas")
    try:
        return pl.read_csv(
            path,
            infer_schema=False,
            null_values=NULL_LITERALS,
            raise_if_empty=True,
            encoding="utf8",
        )
    except pl.exceptions.NoDataError as exc:
        raise RejectedInput(name, "is empty") from exc
    except Exception as exc:
        raise _csv_shape_error(path, name) or RejectedInput(
            name, f"is not a readable CSV file: {first_line(exc)}"
        ) from exc


def _csv_shape_error(path: Path, name: str) -> RejectedInput | None:
    """Find the first row whose field count differs from the header (only run once reading failed)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows, [])
        for number, row in enumerate(rows, start=1):
            if len(row) != len(header):
                return RejectedInput(
                    name, f"has {len(row)} fields where the header has {len(header)} (unquoted comma?)", row=number
                )
    return None


def first_line(exc: Exception) -> str:
    """An exception's first line, for a message that must stay one line (polars errors run to pages)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
