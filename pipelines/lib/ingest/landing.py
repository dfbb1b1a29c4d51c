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

from pipelines.lib.foundation.atomic_files import discard, remove_leftovers, temporary_name
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


REJECTED_BEFORE_LOADING = "Nothing from this delivery was written to the warehouse. Fix the file and ingest it again."


def quarantine(
    home: FinopsHome, delivery: Delivery, error: RejectedInput, *, outcome: str = REJECTED_BEFORE_LOADING
) -> Path:
    """Move a rejected delivery out of the landing zone and write a reason file beside it (`outcome`: what
    became of it and what to do). A delivery no longer in the landing zone gets its reason file only."""
    folder = home.quarantine / delivery.source
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / delivery.path.name
    if delivery.path.exists():
        shutil.move(str(delivery.path), target)
    reason = reason_file(home, delivery.source, delivery.path.name)
    lines = [
        f"delivery: {delivery.source}/{delivery.name}",
        f"rejected at: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"file: {error.file}",
        f"row: {error.row if error.row is not None else '-'}",
        f"column: {error.column or '-'}",
        f"reason: {error.reason}",
        "",
        outcome,
    ]
    reason.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def reason_file(home: FinopsHome, source: str, name: str) -> Path:
    """Where `quarantine` explains why the delivery `name` of `source` is there."""
    return home.quarantine / source / f"{name}.reason.txt"


def release(home: FinopsHome, source: str, name: str) -> Delivery:
    """Move a quarantined delivery back into the landing zone under its own (arrival-stamped) name, to load again."""
    quarantined = home.quarantine / source / name
    if not quarantined.exists():
        raise FileNotFoundError(f"{source}/{name} is not in {home.quarantine / source}")
    root = home.landing_for(source)
    root.mkdir(parents=True, exist_ok=True)
    target = root / name
    if target.exists():
        raise FileExistsError(f"{target} is already in the landing zone")
    shutil.move(str(quarantined), target)
    reason_file(home, source, name).unlink(missing_ok=True)
    return Delivery(source=source, path=target, landing_root=root)
