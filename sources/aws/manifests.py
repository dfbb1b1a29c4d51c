"""Which files of a CUR delivery to load, from its manifests.

AWS writes a manifest after the data files of a run land, and the manifest is the authority on
what belongs to the run: a synced bucket prefix also holds older runs' part files.

- CUR 2.0 (Data Exports): `metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`, files in
  `dataFiles` (S3 URIs), run identity `executionId`.
- Legacy CUR: `<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json`, files in `reportKeys` (S3 keys),
  run identity `assemblyId`; each assembly folder also keeps a copy of its own manifest, so a
  synced prefix holds one manifest per assembly but only the period-level one names the latest.

Listed files are resolved with `Delivery.resolve_listed`, which refuses anything outside the
delivery. Two different runs for one billing period reject the delivery: loading both would count
the period twice, and which one is current is not knowable from the files alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sources.delivery import Delivery
from sources.errors import RejectedInput

_PERIOD_FOLDER = re.compile(r"^\d{8}-\d{8}$")
_BILLING_PERIOD_PART = re.compile(r"^BILLING_PERIOD=(\d{4}-\d{2})$")


@dataclass(frozen=True)
class _Manifest:
    path: Path
    period: str
    run: str
    listed: tuple[str, ...]
    period_level: bool
    """A legacy manifest in the `yyyymmdd-yyyymmdd/` folder (not an assembly's own copy)."""


def listed_files(delivery: Delivery) -> list[Path] | None:
    """The data files the delivery's CUR manifests list, or None when it has no CUR manifest."""
    manifests = [m for m in (_read(delivery, path) for path in delivery.manifests()) if m is not None]
    if not manifests:
        return None
    by_period: dict[str, list[_Manifest]] = {}
    for manifest in manifests:
        by_period.setdefault(manifest.period, []).append(manifest)
    files: dict[Path, None] = {}
    for period, candidates in sorted(by_period.items()):
        for manifest in _current_run(delivery, period, candidates):
            for entry in manifest.listed:
                files[delivery.resolve_listed(entry, manifest=manifest.path)] = None
    return sorted(files)


def _current_run(delivery: Delivery, period: str, candidates: list[_Manifest]) -> list[_Manifest]:
    runs = {manifest.run for manifest in candidates}
    if len(runs) == 1:
        return candidates
    period_level = [manifest for manifest in candidates if manifest.period_level]
    if len({manifest.run for manifest in period_level}) == 1:
        return period_level
    names = ", ".join(sorted(delivery.display_name(manifest.path) for manifest in candidates))
    raise RejectedInput(
        delivery.display_name(candidates[0].path),
        f"billing period {period} has manifests of {len(runs)} different export runs ({names}); "
        "deliver one run per billing period",
    )


def _read(delivery: Delivery, path: Path) -> _Manifest | None:
    name = delivery.display_name(path)
    try:
        content: Any = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RejectedInput(name, f"is not a readable JSON manifest: {exc}") from exc
    if not isinstance(content, dict):
        return None
    if "dataFiles" in content:
        listed = _file_list(content["dataFiles"], name, "dataFiles")
        period = _cur2_period(path, content)
        run = str(content.get("executionId") or name)
        return _Manifest(path, period or name, run, listed, period_level=True)
    if "reportKeys" in content:
        listed = _file_list(content["reportKeys"], name, "reportKeys")
        period = _legacy_period(content) or path.parent.name
        run = str(content.get("assemblyId") or name)
        return _Manifest(path, period, run, listed, period_level=bool(_PERIOD_FOLDER.match(path.parent.name)))
    return None


def _file_list(value: Any, name: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise RejectedInput(name, f"has `{key}` that is not a list of file names")
    if not value:
        raise RejectedInput(name, f"lists no data files in `{key}`")
    return tuple(item.strip() for item in value)


def _cur2_period(path: Path, content: dict[str, Any]) -> str | None:
    period = content.get("billingPeriod")
    if isinstance(period, dict) and period.get("start"):
        return str(period["start"])[:7]
    if isinstance(period, str) and period:
        return period[:7]
    for part in reversed(path.parts):
        match = _BILLING_PERIOD_PART.match(part)
        if match:
            return match.group(1)
    return None


def _legacy_period(content: dict[str, Any]) -> str | None:
    period = content.get("billingPeriod")
    if isinstance(period, dict) and period.get("start"):
        return str(period["start"])[:8]
    return None
