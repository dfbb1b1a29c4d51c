"""Export manifests decide which files of a delivery are loaded: CUR 2.0 / FOCUS, legacy CUR and Azure listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput
from sources.common.manifests import listed_data_files


def delivery_at(root: Path, name: str = "export") -> Delivery:
    return Delivery(source="focus", path=root / name, landing_root=root)


def touch(path: Path, content: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def test_cur2_data_files_are_resolved_from_s3_uris(tmp_path: Path):
    export = tmp_path / "export"
    listed = touch(export / "data" / "BILLING_PERIOD=2026-05" / "run-2" / "gpu-focus-00001.snappy.parquet")
    touch(export / "data" / "BILLING_PERIOD=2026-05" / "run-1" / "gpu-focus-00001.snappy.parquet")  # older refresh
    manifest = {
        "executionId": "run-2",
        "dataFiles": [
            "s3://billing-bucket/exports/gpu-focus/data/BILLING_PERIOD=2026-05/run-2/gpu-focus-00001.snappy.parquet"
        ],
    }
    touch(export / "metadata" / "BILLING_PERIOD=2026-05" / "gpu-focus-Manifest.json", json.dumps(manifest))
    assert listed_data_files(delivery_at(tmp_path)) == [listed]


def test_legacy_cur_report_keys_and_azure_blobs(tmp_path: Path):
    export = tmp_path / "export"
    part = touch(export / "20260501-20260601" / "asm-7" / "gpu-cur-1.csv.gz")
    touch(
        export / "20260501-20260601" / "gpu-cur-Manifest.json",
        json.dumps({"reportKeys": ["prefix/gpu-cur/20260501-20260601/asm-7/gpu-cur-1.csv.gz"]}),
    )
    assert listed_data_files(delivery_at(tmp_path)) == [part]

    azure = tmp_path / "azure"
    blob = touch(azure / "20260501-20260531" / "run" / "part_0_0001.csv.gz")
    touch(
        azure / "manifest.json",
        json.dumps({"blobs": [{"blobName": "exports/focus/20260501-20260531/run/part_0_0001.csv.gz", "byteCount": 1}]}),
    )
    assert listed_data_files(delivery_at(tmp_path, "azure")) == [blob]


def test_several_manifests_give_each_file_once(tmp_path: Path):
    export = tmp_path / "export"
    part = touch(export / "asm" / "report-1.csv.gz")
    keys = json.dumps({"reportKeys": ["p/report/asm/report-1.csv.gz"]})
    touch(export / "report-Manifest.json", keys)
    touch(export / "asm" / "report-Manifest.json", keys)
    assert listed_data_files(delivery_at(tmp_path)) == [part]


def test_no_manifest_or_no_listing_means_no_opinion(tmp_path: Path):
    touch(tmp_path / "export" / "focus.csv")
    assert listed_data_files(delivery_at(tmp_path)) is None
    touch(tmp_path / "export" / "other-manifest.json", json.dumps({"exportConfig": {"type": "FocusCost"}}))
    assert listed_data_files(delivery_at(tmp_path)) is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "is not a readable JSON manifest"),
        (json.dumps({"dataFiles": []}), "lists no data files"),
        (json.dumps({"dataFiles": "s3://b/x.parquet"}), "`dataFiles` that is not a list of file names"),
        (json.dumps({"blobs": [{"name": "x"}]}), "`blobs` that are not objects with a `blobName`"),
        (json.dumps({"dataFiles": ["s3://b/export/data/missing.parquet"]}), "which this delivery does not hold"),
        (json.dumps({"reportKeys": ["../outside.csv"]}), "climbs out of the delivery"),
        (json.dumps({"dataFiles": ["ftp://host/x.parquet"]}), "unsupported location scheme"),
    ],
)
def test_bad_manifests_reject_the_delivery_naming_the_manifest(tmp_path: Path, content: str, reason: str):
    touch(tmp_path / "export" / "data" / "part-1.parquet")
    touch(tmp_path / "export" / "metadata" / "x-Manifest.json", content)
    with pytest.raises(RejectedInput) as caught:
        listed_data_files(delivery_at(tmp_path))
    assert caught.value.file == "export/metadata/x-Manifest.json"
    assert reason in caught.value.reason
