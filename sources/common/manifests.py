"""Which data files a delivery's export manifests list, so a connector loads exactly those.

Cloud exports write a manifest after the data files land, naming the files of that run. A landing
folder can hold more (an older run's part files, a half-written refresh); the manifest is the
authority on what belongs to the delivery. The listing keys differ by provider:

- AWS Data Exports (CUR 2.0, FOCUS): `dataFiles`, full S3 URIs, run identity `executionId`,
  `metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`;
- AWS legacy CUR: `reportKeys`, S3 keys relative to the bucket, run identity `assemblyId`, in
  `<report>/yyyymmdd-yyyymmdd/` (each assembly folder also keeps a copy of its own manifest);
- Azure Cost Management exports: `blobs[].blobName` (with `byteCount`), one manifest per run.

Which run is current is a per-format rule, passed as `rule`:

- `UNION` (FOCUS exports): every listed file of every manifest, each once;
- `AWS_CUR`: one run per billing period; where a legacy period folder's manifest and assembly copies
  disagree the period-level one names the latest, and two runs otherwise reject the delivery
  (loading both would count the period twice; which is current is not knowable from the files);
- `azure_export`: exactly one manifest, of this dataset's export type, its blobs the size it says.

Every listed file is resolved to the delivery's own copy with `Delivery.resolve_listed`, which
refuses paths outside the delivery and files the delivery does not hold.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput
from sources.common.files import first_line

UNION = "union"
AWS_CUR = "aws_cur"

_PERIOD_FOLDER = re.compile(r"^\d{8}-\d{8}$")
_BILLING_PERIOD_PART = re.compile(r"^BILLING_PERIOD=(\d{4}-\d{2})$")


def listed_data_files(delivery: Delivery, rule: str = UNION) -> list[Path] | None:
    """The delivery's data files as its current run's manifests list them, in name order.

    None when no manifest lists files. A manifest that is not JSON, or whose listing is malformed
    or empty, rejects the delivery.
    """
    if rule == AWS_CUR:
        return _cur_files(delivery)
    if rule != UNION:
        raise ValueError(f"unknown manifest rule {rule!r}")
    return _union_files(delivery)


def _load(manifest: Path, name: str) -> Any:
    try:
        return json.loads(manifest.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RejectedInput(name, f"is not a readable JSON manifest: {first_line(exc)}") from exc


def _is_file_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)


# --- UNION: every manifest's files ----------------------------------------------------------------


def _union_files(delivery: Delivery) -> list[Path] | None:
    listed: dict[Path, None] = {}
    found_listing = False
    for manifest in delivery.manifests():
        entries = _listing(manifest, delivery.display_name(manifest))
        if entries is None:
            continue
        found_listing = True
        for entry in entries:
            listed[delivery.resolve_listed(entry, manifest=manifest)] = None
    if not found_listing:
        return None
    return sorted(listed)


def _listing(manifest: Path, name: str) -> list[str] | None:
    """The file names one manifest lists, or None when it has no file listing at all."""
    content = _load(manifest, name)
    if not isinstance(content, dict):
        return None
    if "dataFiles" in content:
        entries = _strings(content["dataFiles"], name, "dataFiles")
    elif "reportKeys" in content:
        entries = _strings(content["reportKeys"], name, "reportKeys")
    elif "blobs" in content:
        blobs = content["blobs"]
        if not isinstance(blobs, list) or not all(isinstance(b, dict) and "blobName" in b for b in blobs):
            raise RejectedInput(name, "lists `blobs` that are not objects with a `blobName`")
        entries = _strings([blob["blobName"] for blob in blobs], name, "blobs")
    else:
        return None
    if not entries:
        raise RejectedInput(name, "is a manifest that lists no data files")
    return entries


def _strings(value: Any, name: str, key: str) -> list[str]:
    if not _is_file_list(value):
        raise RejectedInput(name, f"lists `{key}` that is not a list of file names")
    return [item.strip() for item in value]


# --- AWS_CUR: one run per billing period ----------------------------------------------------------


@dataclass(frozen=True)
class _CurManifest:
    path: Path
    period: str
    run: str
    listed: tuple[str, ...]
    period_level: bool
    """A legacy manifest in the `yyyymmdd-yyyymmdd/` folder (not an assembly's own copy)."""


def _cur_files(delivery: Delivery) -> list[Path] | None:
    manifests = [m for m in (_read_cur(delivery, path) for path in delivery.manifests()) if m is not None]
    if not manifests:
        return None
    by_period: dict[str, list[_CurManifest]] = {}
    for manifest in manifests:
        by_period.setdefault(manifest.period, []).append(manifest)
    files: dict[Path, None] = {}
    for period, candidates in sorted(by_period.items()):
        for manifest in _current_cur_run(delivery, period, candidates):
            for entry in manifest.listed:
                files[delivery.resolve_listed(entry, manifest=manifest.path)] = None
    return sorted(files)


def _current_cur_run(delivery: Delivery, period: str, candidates: list[_CurManifest]) -> list[_CurManifest]:
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


def _read_cur(delivery: Delivery, path: Path) -> _CurManifest | None:
    name = delivery.display_name(path)
    content = _load(path, name)
    if not isinstance(content, dict):
        return None
    if "dataFiles" in content:
        listed = _cur_file_list(content["dataFiles"], name, "dataFiles")
        period = _cur2_period(path, content)
        run = str(content.get("executionId") or name)
        return _CurManifest(path, period or name, run, listed, period_level=True)
    if "reportKeys" in content:
        listed = _cur_file_list(content["reportKeys"], name, "reportKeys")
        period = _legacy_period(content) or path.parent.name
        run = str(content.get("assemblyId") or name)
        return _CurManifest(path, period, run, listed, period_level=bool(_PERIOD_FOLDER.match(path.parent.name)))
    return None


def _cur_file_list(value: Any, name: str, key: str) -> tuple[str, ...]:
    if not _is_file_list(value):
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


# --- Azure Cost Management: one export run per delivery -------------------------------------------


@dataclass(frozen=True)
class AzureExport:
    files: list[Path]
    data_version: str | None


def azure_export(delivery: Delivery, dataset: str, dataset_of_type: dict[str, str]) -> AzureExport | None:
    """The export run's manifest.json: its type must be `dataset`, and its blobs are the files to load.

    `dataset_of_type` maps a lower-cased `exportConfig.type` to the dataset it exports.
    """
    manifests = delivery.manifests()
    if not manifests:
        return None
    if len(manifests) > 1:
        listed = ", ".join(delivery.display_name(path) for path in manifests)
        raise RejectedInput(
            delivery.name, f"holds {len(manifests)} manifests ({listed}); deliver one export run at a time"
        )
    path = manifests[0]
    where = delivery.display_name(path)
    content = _load(path, where)
    if not isinstance(content, dict):
        raise RejectedInput(where, "is not a Cost Management export manifest (not a JSON object)")
    config = content.get("exportConfig") or {}
    export_type = str(config.get("type") or "")
    if export_type and dataset_of_type.get(export_type.lower()) != dataset:
        hint = " (FocusCost exports load as source focus)" if export_type.lower().startswith("focus") else ""
        raise RejectedInput(
            where, f"describes a {export_type} export, not {dataset}: it belongs to another source{hint}", column="type"
        )
    blobs = content.get("blobs")
    if not isinstance(blobs, list) or not blobs:
        raise RejectedInput(where, "lists no blobs: no data files to load", column="blobs")
    files = []
    for number, blob in enumerate(blobs, start=1):
        blob_name = blob.get("blobName") if isinstance(blob, dict) else None
        if not isinstance(blob_name, str) or not blob_name.strip():
            raise RejectedInput(where, f"blob {number} has no blobName", column="blobs")
        file = delivery.resolve_listed(blob_name, manifest=path)
        expected = blob.get("byteCount")
        if isinstance(expected, int) and file.stat().st_size != expected:
            raise RejectedInput(
                delivery.display_name(file),
                f"is {file.stat().st_size} bytes but the manifest lists {expected}: incomplete or altered copy",
            )
        files.append(file)
    version = config.get("dataVersion")
    return AzureExport(files=files, data_version=str(version) if version else None)
