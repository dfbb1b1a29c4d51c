"""The demo's training jobs: deterministic files in the documented layouts, the GPU-hours the generator meant, and a
run the planned-runs seed names, so fct_training_runs has an estimate to compare with on the demo."""

from __future__ import annotations

import csv
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

import polars as pl

from pipelines.lib.settings import DBT_PROJECT_DIR
from sources.training_jobs.skypilot import read_cost_report
from sources.training_jobs.slurm import read_sacct_export
from synthetic_data.demo_gpu_clouds import SERVERS
from synthetic_data.demo_telemetry import OWNED_FLEET, OWNED_SERVER, SERVING_PODS
from synthetic_data.demo_training import expected_runs, slurm_allocations, write_demo_training


def test_the_files_are_byte_identical_for_the_same_months(tmp_path: Path):
    first = write_demo_training(tmp_path / "a", start_month="2026-09", months=2)
    second = write_demo_training(tmp_path / "b", start_month="2026-09", months=2)
    assert {k: p.read_bytes() for k, p in first.items()} == {k: p.read_bytes() for k, p in second.items()}
    assert first["skypilot"].name == "sky-cost-report__1793487600.txt"  # 2026-10-31 23:00 UTC


def test_the_readers_find_the_gpu_hours_the_generator_meant(tmp_path: Path):
    written = write_demo_training(tmp_path, start_month="2026-09", months=2)
    jobs = read_sacct_export(written["slurm"]).filter(pl.col("gpus") > 0)
    clusters = read_cost_report(written["skypilot"]).filter(pl.col("accelerators_per_node") > 0)
    read = {
        row["job_name"]: ("slurm", Decimal(row["gpus"] * row["elapsed_seconds"]) / 3600)
        for row in jobs.iter_rows(named=True)
    }
    read |= {
        row["cluster_name"]: (
            "skypilot",
            row["node_count"] * row["accelerators_per_node"] * row["duration_seconds"] / 3600,
        )
        for row in clusters.iter_rows(named=True)
    }
    assert read == expected_runs()
    owned = {server.hostname.split(".")[0] for server in SERVERS}
    assert set(jobs["hosts"].to_list()) <= owned  # the owned cluster's servers


def test_slurm_jobs_leave_the_owned_model_servers_gpus_alone(tmp_path: Path):
    """gpu-ams1-01 lends GPUs to a Kubernetes model server all the time: the jobs the export shows there ask for no
    more than the GPUs left, no two jobs share a server at once, and `slurm_allocations` (what that server's
    telemetry draws) are the export's jobs."""
    jobs = read_sacct_export(write_demo_training(tmp_path, start_month="2026-09", months=2)["slurm"])
    jobs = jobs.filter(pl.col("gpus") > 0)
    server = SERVERS[OWNED_SERVER]
    lent = sum(gpus for fleet, _, _, _, gpus in SERVING_PODS if fleet == OWNED_FLEET)
    on_server = jobs.filter(pl.col("hosts") == server.hostname.split(".")[0])
    assert lent == 4 and on_server.height == 3
    assert on_server["gpus"].max() <= server.gpu_count - lent
    for _, group in jobs.group_by("hosts"):
        spans = sorted(zip(group["started_at"], group["ended_at"], strict=True))
        assert all(end <= start for (_, end), (start, _) in pairwise(spans)), spans
    allocations = {
        (SERVERS[index].hostname.split(".")[0], gpus, start.replace(tzinfo=None), end.replace(tzinfo=None))
        for index, gpus, start, end in slurm_allocations("2026-09")
    }
    assert allocations == set(jobs.select("hosts", "gpus", "started_at", "ended_at").iter_rows())


def test_the_planned_demo_run_is_in_the_seed_and_its_realized_mfu_is_plausible():
    with (DBT_PROJECT_DIR / "seeds" / "planned_training_runs.csv").open(encoding="utf-8") as handle:
        plan = next(row for row in csv.DictReader(handle) if row["run_name"] == "acme_pretrain_3b")
    with (DBT_PROJECT_DIR / "seeds" / "gpu_specs.csv").open(encoding="utf-8") as handle:
        peak = Decimal(next(row for row in csv.DictReader(handle) if row["gpu_model"] == "H100")["bf16_dense_tflops"])
    _, hours = expected_runs()["acme_pretrain_3b"]
    flops = 6 * Decimal(plan["parameters"]) * Decimal(plan["tokens"])
    realized = flops / (hours * peak * Decimal(10) ** 12 * 3600)
    assert plan["gpu_model"] == "H100" and hours == 1536
    assert Decimal("0.15") < realized < Decimal(plan["mfu"])  # inside the guardrail, below the plan: overhead
