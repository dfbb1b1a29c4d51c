"""nvidia-smi CSV logs and the host map: parsing, rejections with file/row/column, and the landing-zone load."""

from __future__ import annotations

import logging
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.telemetry.assets import nvidia_smi_gpu_samples
from pipelines.lib.catalog.telemetry import HOST_MAP_SOURCE, NVIDIA_SMI_SAMPLES, NVIDIA_SMI_SOURCE
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import ingest_host_maps, ingest_nvidia_smi_logs
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from sources.common.errors import RejectedInput
from sources.telemetry.host_map import read_host_map
from sources.telemetry.nvidia_smi import host_of, read_nvidia_smi_log
from tests.support import FIXTURES_ROOT

FIXTURE = FIXTURES_ROOT / "telemetry" / "nvidia-smi-node-a.csv"
GPU1 = "GPU-aaaa0000-0000-0000-0000-000000000001"
GPU2 = "GPU-aaaa0000-0000-0000-0000-000000000002"
HEADER = "timestamp, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
log = logging.getLogger(__name__)


def _log_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_log_with_units_na_values_and_a_repeated_header_becomes_dcgm_named_rows(tmp_path: Path):
    path = shutil.copy(FIXTURE, tmp_path / "gpu-node-a--2026-10-05.csv")
    frame = read_nvidia_smi_log(Path(path), timezone="Europe/Berlin")
    # 6 samples (2 GPUs x 3 times; the second header line dropped) x 3 fields
    assert frame.height == 18
    assert set(frame["host"]) == {"gpu-node-a"}
    assert set(frame["source"]) == {"nvidia_smi"}
    assert set(frame["metric"]) == {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE"}
    util = frame.filter(frame["metric"] == "DCGM_FI_DEV_GPU_UTIL").sort("gpu_uuid", "sampled_at")
    # 12:00 in Berlin (CEST, UTC+2) is 10:00 UTC
    assert util["sampled_at"].to_list()[:3] == [
        datetime(2026, 10, 5, 10, 0, 0),
        datetime(2026, 10, 5, 10, 0, 10),
        datetime(2026, 10, 5, 10, 0, 20),
    ]
    assert util["value"].to_list() == [Decimal(95), Decimal(40), Decimal(100), None, Decimal(0), Decimal(5)]
    power = frame.filter((frame["metric"] == "DCGM_FI_DEV_POWER_USAGE") & (frame["gpu_uuid"] == GPU2)).sort(
        "sampled_at"
    )
    assert power["value"].to_list() == [None, None, Decimal("61.25")]  # [N/A], [Not Supported]
    memory = frame.filter((frame["metric"] == "DCGM_FI_DEV_FB_USED") & (frame["gpu_uuid"] == GPU1))
    assert set(memory["value"]) == {Decimal(30720)}
    assert set(frame["sample_seconds"]) == {10}  # -l 10, from the gaps between a GPU's samples
    assert set(frame["gpu_model_name"]) == {"NVIDIA A100-SXM4-40GB"}
    assert set(frame["sample_date"]) == {date(2026, 10, 5)}
    # lineage: the file's line numbers, the repeated header being line 6
    assert sorted(set(util.filter(util["gpu_uuid"] == GPU2)["source_row"])) == [3, 5, 8]


def test_host_name_comes_from_the_file_name_without_the_arrival_stamp():
    assert (
        host_of(Path("20261005T120000123456Z__ip-10-0-1-23.ec2.internal--day1.csv.gz")) == "ip-10-0-1-23.ec2.internal"
    )
    assert host_of(Path("node7.csv")) == "node7"


@pytest.mark.parametrize(
    ("text", "row", "column", "reason"),
    [
        (HEADER + "2026-10-05 12:00:00, A, GPU-1, 5 %, 1 MiB, 1 W\n", 2, "timestamp", "YYYY/MM/DD HH:MM:SS.mmm"),
        (
            HEADER
            + "2026/10/05 12:00:00.000, A, GPU-1, 5 %, 1 MiB, 1 W\n"
            + "2026/10/05 12:00:05.000, A, GPU-1, busy, 1 MiB, 1 W\n",
            3,
            "utilization.gpu",
            "is not a number",
        ),
        (HEADER + "2026/10/05 12:00:00.000, A, , 5 %, 1 MiB, 1 W\n", 2, "uuid", "must not be empty"),
        ("timestamp, name, utilization.gpu [%]\n2026/10/05 12:00:00.000, A, 5 %\n", 1, None, "no uuid field"),
        (HEADER + "2026/10/05 12:00:00.000, A, GPU-1, 5 %, 1 MiB, 1 W\n", None, None, "single sample"),
    ],
)
def test_bad_logs_are_rejected_naming_file_row_and_column(tmp_path: Path, text, row, column, reason):
    path = _log_file(tmp_path, "node-b.csv", text)
    with pytest.raises(RejectedInput) as error:
        read_nvidia_smi_log(path)
    assert error.value.file == "node-b.csv"
    assert (error.value.row, error.value.column) == (row, column)
    assert reason in error.value.reason


def test_host_map_reads_windows_and_rejects_a_host_mapped_twice_at_once(tmp_path: Path):
    good = _log_file(
        tmp_path,
        "hosts.csv",
        "host,resource_id,provider_name,valid_from,valid_to\n"
        "vision-ocr-01,i-0aaa,AWS,,2026-10-01\n"
        "vision-ocr-01,i-0bbb,AWS,2026-10-01,\n",
    )
    frame = read_host_map(good)
    assert frame.select("host", "resource_id", "valid_from", "valid_to").rows() == [
        ("vision-ocr-01", "i-0aaa", None, date(2026, 10, 1)),
        ("vision-ocr-01", "i-0bbb", date(2026, 10, 1), None),
    ]
    overlapping = _log_file(
        tmp_path, "bad.csv", "host,resource_id\nvision-ocr-01,i-0aaa\nvision-ocr-02,i-0ccc\nvision-ocr-01,i-0bbb\n"
    )
    with pytest.raises(RejectedInput, match="maps to two resources at once") as error:
        read_host_map(overlapping)
    assert (error.value.row, error.value.column) == (3, "host")


def test_landing_zone_logs_load_once_replace_per_file_day_and_host_and_bad_ones_go_to_quarantine(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(FIXTURE, logs / "gpu-node-a.csv")
    register(home, NVIDIA_SMI_SOURCE, logs)
    register(home, NVIDIA_SMI_SOURCE, _log_file(tmp_path, "gpu-node-b.csv", HEADER + "not a log\n"))
    register(home, HOST_MAP_SOURCE, _log_file(tmp_path, "hosts.csv", "host,resource_id\ngpu-node-a,asset-7\n"))
    with connect(home.warehouse) as con:
        results = ingest_nvidia_smi_logs(home, con, timezone="UTC", log=log)
        assert [(r.status, r.rows) for r in results] == [("loaded", 18), ("rejected", 0)]
        assert "gpu-node-b.csv, row 2, column timestamp" in results[1].reason
        assert [r.status for r in ingest_nvidia_smi_logs(home, con, timezone="UTC", log=log)] == ["duplicate"]
        # the same log delivered again with one more sample replaces its own rows for that day and host
        longer = tmp_path / "again"
        longer.mkdir()
        (longer / "gpu-node-a.csv").write_text(
            FIXTURE.read_text() + f"2026/10/05 12:00:30.000, NVIDIA A100-SXM4-40GB, {GPU1}, 7 %, 1 MiB, 70.00 W\n"
        )
        register(home, NVIDIA_SMI_SOURCE, longer)
        again = ingest_nvidia_smi_logs(home, con, timezone="UTC", log=log)
        assert [(r.status, r.rows, r.replaced_rows) for r in again if r.status == "loaded"] == [("loaded", 21, 18)]
        assert con.execute(f"select count(*) from {NVIDIA_SMI_SAMPLES.name}").fetchone()[0] == 21
        mapped = ingest_host_maps(home, con, log=log)
        assert [(r.status, r.rows) for r in mapped] == [("loaded", 1)]
    assert (home.quarantine / NVIDIA_SMI_SOURCE).exists()
    assert len(list((home.quarantine / NVIDIA_SMI_SOURCE).glob("*.reason.txt"))) == 1


def test_the_asset_reads_local_times_in_the_settings_time_zone(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, NVIDIA_SMI_SOURCE, shutil.copy(FIXTURE, tmp_path / "gpu-node-a.csv"))
    result = dg.materialize(
        [nvidia_smi_gpu_samples],
        resources={
            "duckdb": DuckDBResource(database=str(home.warehouse)),
            "settings": Settings(home=home, nvidia_smi_timezone="Europe/Berlin"),
        },
    )
    assert result.success
    with connect(home.warehouse) as con:
        first = con.execute(f"select min(sampled_at) from {NVIDIA_SMI_SAMPLES.name}").fetchone()[0]
    assert first == datetime(2026, 10, 5, 10, 0, 0)  # the log's 12:00:00 in Berlin (CEST, UTC+2)
