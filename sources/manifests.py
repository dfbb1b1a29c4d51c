"""Which data files a delivery's export manifests list, so a connector loads exactly those.

Cloud exports write a manifest after the data files land, naming the files of that run. A landing
folder can hold more (an older run's part files, a half-written refresh); the manifest is the
authority on what belongs to the delivery. The listing keys differ by provider:

- AWS Data Exports (CUR 2.0, FOCUS): `dataFiles`, full S3 URIs;
- AWS legacy CUR: `reportKeys`, S3 keys relative to the bucket;
- Azure Cost Management exports: `blobs[].blobName`.

Every listed file is resolved to the delivery's own copy with `Delivery.resolve_listed`, which
refuses paths outside the delivery and files the delivery does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sources.delivery import Delivery
from sources.errors import RejectedInput


def listed_data_files(delivery: Delivery) -> list[Path] | None:
    """The delivery's data files as its manifests list them, or None when no manifest lists files.

    With several manifests (one per billing period, or a legacy CUR period manifest beside its
    assembly's copy) the union is returned, each file once, in name order. A manifest that is
    not JSON, or whose listing is malformed or empty, rejects the delivery.
    """
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
    try:
        content: Any = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RejectedInput(name, f"is not a readable JSON manifest: {exc}") from exc
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
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise RejectedInput(name, f"lists `{key}` that is not a list of file names")
    return [item.strip() for item in value]
