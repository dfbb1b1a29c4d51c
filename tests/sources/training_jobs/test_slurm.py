"""The sacct reader on an export in Slurm's documented `--parsable2` layout, and on broken ones."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

import pytest

from sources.common.errors import RejectedInput
from sources.training_jobs.slurm import expand_hostlist, read_sacct_export
from tests.support import FIXTURES_ROOT

EXPORT = FIXTURES_ROOT / "training_jobs" / "sacct-h100-cluster.txt"
HEADER = "JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|ElapsedRaw|State|NNodes|NodeList|AllocTRES"
GOOD = (
    "7|train|ann|research|h100|2026-09-01T00:00:00|2026-09-01T01:00:00|2026-09-01T02:00:00|01:00:00|3600|COMPLETED|1|"
    "gpu-01|cpu=8,gres/gpu=8,node=1"
)


def write(tmp_path: Path, *lines: str, name: str = "export.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_allocation_is_read_with_its_gpus_time_and_hosts():
    frame = read_sacct_export(EXPORT)
    with EXPORT.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="|"))
    assert frame["job_id"].to_list() == [row["JobID"] for row in rows]
    assert frame["elapsed_seconds"].to_list() == [int(row["ElapsedRaw"]) for row in rows]
    by_job = {row["job_id"]: row for row in frame.iter_rows(named=True)}
    assert by_job["4101"]["gpus"] == 16 and by_job["4101"]["hosts"] == "gpu-01,gpu-02"
    assert (by_job["4102"]["gpus"], by_job["4102"]["gpu_type"]) == (4, "h100")  # typed gres only
    assert (by_job["4104"]["gpus"], by_job["4104"]["gpu_type"]) == (8, "h100")  # typed and untyped: counted once
    assert (by_job["4104"]["state"], by_job["4104"]["state_as_delivered"]) == ("CANCELLED", "CANCELLED by 1001")
    assert by_job["4102"]["state"] == "FAILED" and by_job["4103"]["gpus"] == 0
    assert by_job["4105"]["started_at"] is None and by_job["4105"]["hosts"] is None  # pending: Unknown, None assigned
    assert by_job["4101"]["started_at"] == datetime(2026, 9, 14, 9)
    assert by_job["4101"]["source_row"] == 2 and by_job["4101"]["source_ref"] == EXPORT.name


def test_local_times_are_read_in_the_clusters_time_zone():
    frame = read_sacct_export(EXPORT, timezone="Europe/Berlin")
    assert frame.filter(job_id="4101")["started_at"][0] == datetime(2026, 9, 14, 7)  # CEST is UTC+2


def test_parsable_with_trailing_separators_and_job_steps_reads_the_allocations(tmp_path: Path):
    path = write(
        tmp_path,
        HEADER + "|",
        GOOD + "|",
        "7.batch|batch||research||2026-09-01T00:00:00|2026-09-01T01:00:00|2026-09-01T02:00:00|01:00:00|3600|COMPLETED|1|gpu-01|cpu=8,gres/gpu=8,node=1|",
    )  # fmt: skip
    frame = read_sacct_export(path)
    assert frame["job_id"].to_list() == ["7"] and frame["gpus"].to_list() == [8]


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        (GOOD.replace("2026-09-01T01:00:00", "yesterday"), "Start", "is not a YYYY-MM-DDTHH:MM:SS time"),
        (GOOD.replace("|3600|", "|an hour|"), "ElapsedRaw", "is not a whole number of seconds"),
        (GOOD.replace("gres/gpu=8", "gres/gpu=eight"), "AllocTRES", "gres/gpu count"),
        (GOOD.replace("gpu-01", "gpu-[05-01]"), "NodeList", "not a Slurm host list range"),
        (GOOD.replace("|1|gpu", "|one|gpu"), "NNodes", "is not a whole number of nodes"),
    ],
)
def test_a_bad_value_rejects_the_file_naming_row_and_column(tmp_path: Path, line: str, column: str, message: str):
    path = write(tmp_path, HEADER, GOOD.replace("7|", "6|", 1), line)
    with pytest.raises(RejectedInput) as raised:
        read_sacct_export(path, name="landing/slurm_sacct/export.txt")
    error = raised.value
    assert (error.file, error.row, error.column) == ("landing/slurm_sacct/export.txt", 3, column)
    assert message in error.reason


def test_a_header_without_the_fields_it_needs_is_rejected(tmp_path: Path):
    path = write(tmp_path, "JobID|JobName|State", "7|train|COMPLETED")
    with pytest.raises(RejectedInput, match="header lacks User, Account, Partition, Start, End, ElapsedRaw, NNodes"):
        read_sacct_export(path)


def test_the_same_job_twice_is_rejected(tmp_path: Path):
    with pytest.raises(RejectedInput) as raised:
        read_sacct_export(write(tmp_path, HEADER, GOOD, GOOD))
    assert (raised.value.row, raised.value.column) == (3, "JobID")


def test_an_unknown_time_zone_is_rejected():
    with pytest.raises(RejectedInput, match="not an IANA time zone"):
        read_sacct_export(EXPORT, timezone="Mars/Olympus")


@pytest.mark.parametrize(
    ("node_list", "hosts"),
    [
        ("gpu-[01-03,07]", ["gpu-01", "gpu-02", "gpu-03", "gpu-07"]),
        ("gpu-[08-10],login1", ["gpu-08", "gpu-09", "gpu-10", "login1"]),
        ("rack[1-2]-n[1-2]", ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]),
        ("None assigned", []),
    ],
)
def test_host_lists_expand_as_scontrol_show_hostnames_does(node_list: str, hosts: list[str]):
    assert expand_hostlist(node_list) == hosts
