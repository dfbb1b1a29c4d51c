"""The landing zone: deliveries waiting under FINOPS_HOME/landing/<source>/, and quarantine.

A delivery is one file, or one folder whose files arrived together (e.g. the part files of one
export run). Deliveries are processed in name order; files registered through the CLI get a
UTC arrival stamp as prefix, so name order is arrival order.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from pipelines.lib.reporting.atomic_files import discard, remove_leftovers, temporary_name
from pipelines.lib.settings import FinopsHome
from sources.common.delivery import Delivery, is_hidden
from sources.common.errors import RejectedInput

_STAMP_FORMAT = "%Y%m%dT%H%M%S%fZ"


def pending_deliveries(home: FinopsHome, source: str) -> list[Delivery]:
    root = home.landing_for(source)
    if not root.exists():
        return []
    return [
        Delivery(source=source, path=entry, landing_root=root)
        for entry in sorted(root.iterdir())
        if not is_hidden(Path(entry.name))
    ]


def register(home: FinopsHome, source: str, path: Path) -> Delivery:
    """Copy a file or folder into the landing zone of `source` under an arrival-stamped name.

    The copy is made under a hidden name (which the landing sensor skips) and renamed when complete, so the
    sensor, polling meanwhile, never loads half a delivery; a copy killed halfway is removed by the next one.
    """
    path = path.expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    root = home.landing_for(source)
    root.mkdir(parents=True, exist_ok=True)
    if path.is_relative_to(root) and path.parent == root:
        return Delivery(source=source, path=path, landing_root=root)
    target = root / f"{datetime.now(UTC).strftime(_STAMP_FORMAT)}__{path.name}"
    remove_leftovers(root)
    staging = temporary_name(target)
    try:
        if path.is_dir():
            shutil.copytree(path, staging, symlinks=False)
        else:
            shutil.copy2(path, staging)
        os.rename(staging, target)
    finally:
        discard(staging)
    return Delivery(source=source, path=target, landing_root=root)


def quarantine(home: FinopsHome, delivery: Delivery, error: RejectedInput) -> Path:
    """Move a rejected delivery out of the landing zone and write a reason file beside it."""
    folder = home.quarantine / delivery.source
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / delivery.path.name
    shutil.move(str(delivery.path), target)
    reason = folder / f"{delivery.path.name}.reason.txt"
    lines = [
        f"delivery: {delivery.source}/{delivery.name}",
        f"rejected at: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"file: {error.file}",
        f"row: {error.row if error.row is not None else '-'}",
        f"column: {error.column or '-'}",
        f"reason: {error.reason}",
        "",
        "Nothing from this delivery was written to the warehouse. Fix the file and ingest it again.",
    ]
    reason.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target
