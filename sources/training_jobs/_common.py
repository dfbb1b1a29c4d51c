"""What the Slurm and SkyPilot readers share: reading the text, rejecting the first bad row by file, row and column."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.row_checks import MAX_FIELD_BYTES

LANDING_STAMP = re.compile(r"^\d{8}T\d{6}\d*Z__")
"""The arrival stamp the landing zone puts before a file's name."""


def read_text(path: Path, name: str) -> str:
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
        return raw.decode("utf-8-sig")
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise RejectedInput(name, f"cannot read the file ({error})") from None
    except UnicodeDecodeError:
        raise RejectedInput(name, "not UTF-8 text") from None


def source_ref(name: str) -> str:
    """The file as the user named it (arrival stamp removed): a re-delivery of it replaces its rows."""
    return LANDING_STAMP.sub("", Path(name).name)


def reject_first(frame: pl.DataFrame, name: str, column: str, failed: pl.Expr, reason: str, *, shown: str) -> None:
    """Reject the delivery at the first row where `failed` holds, naming the file's line and the column."""
    bad = frame.filter(failed.fill_null(False))
    if bad.height:
        more = f" ({bad.height - 1} more row(s) like it)" if bad.height > 1 else ""
        raise RejectedInput(
            name, f"{column} {reason} (found {bad[shown][0]!r}){more}", row=int(bad["_line"][0]), column=column
        )


def reject_long_fields(frame: pl.DataFrame, name: str, columns: list[str]) -> None:
    for column in columns:
        reject_first(
            frame,
            name,
            column,
            pl.col(column).str.len_bytes() > MAX_FIELD_BYTES,
            f"is longer than {MAX_FIELD_BYTES:,} bytes (a broken export?)",
            shown=column,
        )
