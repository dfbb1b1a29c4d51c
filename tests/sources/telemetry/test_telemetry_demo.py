"""The demo's telemetry: the recordings and logs read back through the real parsers agree with its ledger."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from pipelines.lib.ingest.telemetry import stored_responses
from sources.telemetry import prometheus
from sources.telemetry.host_map import read_host_map
from sources.telemetry.nvidia_smi import read_nvidia_smi_log
from sources.training_jobs.slurm import read_sacct_export
from synthetic_data.demo_gpu_clouds import SERVERS
from synthetic_data.demo_telemetry import MIG_SENTINEL, MIG_SLICES, mig_share, write_demo_telemetry
from synthetic_data.demo_training import write_demo_training


def test_demo_telemetry_parses_and_matches_its_ledger(tmp_path: Path):
    written = write_demo_telemetry(tmp_path / "a", seed=3, start_month="2026-10", months=1)
    ledger = json.loads(written["expected"].read_text())
    rows = ledger["days"]
    host_map = read_host_map(written["host_map"])
    mapped = dict(zip(host_map["host"], host_map["resource_id"], strict=True))
    frames = [
        prometheus.parse_responses(stored_responses(folder, "recorded"))
        for folder in sorted(written["prometheus"].iterdir())
    ]
    frames += [read_nvidia_smi_log(path) for path in sorted(written["nvidia_smi"].iterdir())]
    series_rows = pl.concat(frames).with_columns(
        resource=pl.coalesce("resource_id", pl.col("host").replace_strict(mapped, default=None))
    )
    # the energy captures are marked as the counter's readings, so they are re-parsed as such, never as increases
    energy_queries = series_rows.filter(pl.col("metric") == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")["promql"]
    assert energy_queries.unique().to_list() == ["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
    # the cluster's GPU shared by two pods has one series per pod: the same sample twice, once per pod; the MIG GPU's
    # slices are series of their own under the parent's UUID
    samples = series_rows.unique(
        subset=["gpu_uuid", "gpu_instance_id", "metric", "sampled_at"], keep="first", maintain_order=True
    )
    shares = {profile: mig_share(profile) for _, profile in MIG_SLICES}
    # a slice weighs its share of the GPU (g/7 to 12 decimals, as the models compute it), a whole GPU 1
    share = pl.col("gpu_instance_profile").replace_strict(shares, default=1, return_dtype=pl.Decimal(38, 12))
    series_rows = series_rows.with_columns(share=share)
    samples = samples.with_columns(share=share)
    assert series_rows.height - samples.height == 2 * 7 * 31  # 2 shared 15-minute steps a day, 7 metrics, 31 days
    assert samples.filter(pl.col("resource").is_null()).is_empty(), "every host names its billed instance"
    # per day and instance: observed seconds, and SM-active x seconds, from the parsed samples
    # and active x seconds: GR-engine where the GPU reports it, else GPU util / 100
    observed: dict[tuple[str, str], int] = defaultdict(int)
    effective: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    active: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    reports_gr = set(samples.filter(pl.col("metric") == "DCGM_FI_PROF_GR_ENGINE_ACTIVE")["gpu_uuid"])
    for day, resource, uuid, metric, value, seconds, weight in samples.select(
        pl.col("sample_date").cast(pl.String), "resource", "gpu_uuid", "metric", "value", "sample_seconds", "share"
    ).iter_rows():
        if metric == "DCGM_FI_DEV_GPU_UTIL":
            observed[(day, resource)] += seconds
            if uuid not in reports_gr:
                active[(day, resource)] += value / 100 * seconds
        if metric == "DCGM_FI_PROF_GR_ENGINE_ACTIVE":
            active[(day, resource)] += value * seconds * weight
        if metric == "DCGM_FI_PROF_SM_ACTIVE":
            effective[(day, resource)] += value * seconds * weight
    assert {(row["day"], row["resource_id"]) for row in rows} == set(observed)
    for row in rows:
        key = (row["day"], row["resource_id"])
        assert Decimal(row["telemetry_gpu_hours"]) == Decimal(observed[key]) / 3600
        assert Decimal(row["effective_gpu_hours"]) == effective[key] / 3600
        assert Decimal(row["active_gpu_hours"]) == active[key] / 3600
    # energy: per GPU, the counter's increases in time order, a drop being a restart from 0 (the reading is the
    # increase); a GPU's first reading and nvidia-smi's samples integrate power over the sample's seconds
    energy: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    resets: dict[str, int] = defaultdict(int)
    power = {
        (uuid, at): value * seconds * 1000  # mJ
        for uuid, at, value, seconds in samples.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE")
        .select("gpu_uuid", "sampled_at", "value", "sample_seconds")
        .iter_rows()
    }
    previous: dict[str, Decimal] = {}
    for day, resource, uuid, at, value in (
        samples.filter(pl.col("metric") == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
        .sort("gpu_uuid", "sampled_at")
        .select(pl.col("sample_date").cast(pl.String), "resource", "gpu_uuid", "sampled_at", "value")
        .iter_rows()
    ):
        if uuid not in previous:
            energy[(day, resource)] += power[(uuid, at)]
        elif value < previous[uuid]:
            energy[(day, resource)] += value
            resets[resource] += 1
        else:
            energy[(day, resource)] += value - previous[uuid]
        previous[uuid] = value
    for day, resource, uuid, at in (
        samples.filter(pl.col("metric") == "DCGM_FI_DEV_POWER_USAGE", ~pl.col("gpu_uuid").is_in(list(previous)))
        .select(pl.col("sample_date").cast(pl.String), "resource", "gpu_uuid", "sampled_at")
        .iter_rows()
    ):
        energy[(day, resource)] += power[(uuid, at)]
    assert {(row["day"], row["resource_id"]): Decimal(row["energy_kwh"]) for row in rows} == {
        key: mj / 3_600_000_000 for key, mj in energy.items()
    }
    # H100 nodes export no GR_ENGINE_ACTIVE (the fallback case); the A100 nodes do
    models = samples.filter(pl.col("metric") == "DCGM_FI_PROF_GR_ENGINE_ACTIVE")["gpu_model_name"].unique().to_list()
    assert models == ["NVIDIA A100-SXM4-40GB"]
    # the cluster's pods: per day, GPU-seconds held from the series' pod labels, a step shared by two pods half each,
    # a MIG slice's step its share
    held: dict[tuple[str, str, str, str], Decimal] = defaultdict(Decimal)
    pod_rows = series_rows.filter(pl.col("metric") == "DCGM_FI_PROF_SM_ACTIVE", pl.col("pod").is_not_null())
    sharing = pod_rows.group_by("gpu_uuid", "gpu_instance_id", "sampled_at").agg(pods=pl.len())
    for day, resource, namespace, pod, seconds, pods, weight in (
        pod_rows.join(sharing, on=["gpu_uuid", "gpu_instance_id", "sampled_at"], nulls_equal=True)
        .select(
            pl.col("sample_date").cast(pl.String), "resource", "namespace", "pod", "sample_seconds", "pods", "share"
        )
        .iter_rows()
    ):
        held[(day, resource, namespace, pod)] += Decimal(seconds) * weight / pods
    assert {
        (row["day"], row["resource_id"], row["namespace"], row["pod"]): Decimal(row["held_gpu_hours"])
        for row in ledger["pods"]
    } == {key: seconds / 3600 for key, seconds in held.items()}
    # the demo cluster (the eval-llm namespace's node) on a full day: 4 GPUs of llm-eval-0, 21.5 hours on GPU 4, 10 on
    # GPU 5, 10 shared on GPU 6; on GPU 7's MIG slices llm-judge-0 24 hours of the 3g.20gb, nb-carol 7 of a 1g.5gb
    (node,) = series_rows.filter(pl.col("namespace") == "eval-llm")["resource"].unique()
    full_day = [row for row in ledger["pods"] if (row["day"], row["resource_id"]) == ("2026-10-15", node)]
    assert sum(Decimal(row["held_gpu_hours"]) for row in full_day) == (
        4 * 24 + Decimal("21.5") + 10 + 10 + 24 * shares["3g.20gb"] + 7 * shares["1g.5gb"]
    )
    assert {row["namespace"] for row in full_day} == {"eval-llm", "eval-vision", "notebooks"}
    on_node = series_rows.filter(pl.col("resource") == node)
    mig = on_node.filter(pl.col("gpu_index") == 7)
    assert mig.filter(pl.col("pod").is_not_null()).select("gpu_instance_profile", "pod").unique().sort(
        "pod"
    ).rows() == [
        ("3g.20gb", "llm-judge-0"),
        ("1g.5gb", "nb-carol"),
    ]
    # under MIG the parent's GPU_UTIL is DCGM's sentinel: loaded as no reading
    util = mig.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    assert util["value_invalid"].all() and util["value"].null_count() == util.height > 0 and MIG_SENTINEL
    assert set(mig.filter(pl.col("gpu_instance_id").is_not_null())["metric"]) == {
        "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    }
    assert on_node.filter(pl.col("pod").is_null())["gpu_index"].unique().sort().to_list() == [4, 5, 6, 7]
    # the owned server: no providerID, the host map names its asset; one 4-GPU model server on GPUs 4-7 every day,
    # GPUs 0-3 without pod labels, training (SM-active, after a first hour of loading) only while a Slurm job of the
    # sacct export holds them, else idle
    (server,) = [server for server in SERVERS if server.hostname.startswith("gpu-ams1-01.")]
    owned = series_rows.filter(pl.col("resource") == server.asset_id)
    assert owned["host"].unique().to_list() == ["gpu-ams1-01"] and owned["resource_id"].unique().to_list() == [None]
    assert mapped["gpu-ams1-01"] == server.asset_id
    served = owned.filter(pl.col("pod").is_not_null())
    assert served.select("namespace", "pod").unique().rows() == [("inference", "vllm-llama-3-1-70b-0")]
    assert served["gpu_index"].unique().sort().to_list() == [4, 5, 6, 7]
    assert owned.filter(pl.col("pod").is_null())["gpu_index"].unique().sort().to_list() == [0, 1, 2, 3]
    assert {
        row["day"]: Decimal(row["held_gpu_hours"]) for row in ledger["pods"] if row["resource_id"] == server.asset_id
    } == {f"2026-10-{day:02d}": Decimal(96) for day in range(1, 32)}
    # its one reboot (10 October, 03:00 UTC) restarts the counter of each of its 8 GPUs
    assert resets[server.asset_id] == 8
    jobs = read_sacct_export(write_demo_training(tmp_path / "jobs", start_month="2026-10", months=1)["slurm"])
    held = [
        (row["started_at"], row["ended_at"], row["gpus"])
        for row in jobs.filter(pl.col("hosts") == "gpu-ams1-01", pl.col("gpus") > 0).iter_rows(named=True)
    ]
    assert held, "the month has Slurm jobs on the server"
    slurm_gpus = owned.filter(pl.col("metric") == "DCGM_FI_PROF_SM_ACTIVE", pl.col("pod").is_null())
    busy = 0
    for at, gpu, sm, seconds in slurm_gpus.select("sampled_at", "gpu_index", "value", "sample_seconds").iter_rows():
        step_start = at.replace(tzinfo=None) - timedelta(seconds=seconds)
        jobs = [start for start, end, gpus in held if start <= step_start < end and gpu < gpus]
        if jobs and step_start >= jobs[0] + timedelta(hours=1):
            assert sm >= Decimal("0.8"), (at, gpu, sm)
            busy += seconds
        elif not jobs:
            assert sm <= Decimal("0.03"), (at, gpu, sm)
    in_month = [(start, end, gpus) for start, end, gpus in held if end <= datetime(2026, 11, 1)]
    assert busy == sum((end - start - timedelta(hours=1)).total_seconds() * gpus for start, end, gpus in in_month) > 0
    # same seed, same bytes
    again = write_demo_telemetry(tmp_path / "b", seed=3, start_month="2026-10", months=1)
    assert again["expected"].read_bytes() == written["expected"].read_bytes()
