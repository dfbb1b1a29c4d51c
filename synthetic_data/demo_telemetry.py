"""GPU telemetry for the demo organisation's AWS GPU fleet and one owned server, as DCGM-through-Prometheus answers
and nvidia-smi logs.

The AWS machines are the ones the demo's AWS bills pay for: the same fleets (`demo_aws.CUR2_FLEET`,
`demo_aws.LEGACY_FLEET`), the same running intervals and the same instance ids, drawn from the same
seeded generators in the same order as the bill writers. While an instance runs, each of its GPUs
reports a sample every step; how busy it is follows its workload:

| workload | fleet | SM-active |
|---|---|---|
| training | p5-pretrain, p4d-sweep (spot) | 0.80–0.95, but ≤ 0.05 in the first hour of a run (loading) |
| serving | p5-chat (reserved, always on) | 0.20–0.50 weekdays 08–20 UTC, ≤ 0.04 nights and weekends |
| evaluation | p4d-eval (Savings Plan, always on) | 0.50–0.75 weekdays 09–18 UTC, ≤ 0.03 otherwise |
| inference | g5-ocr, g6e-embed | 0.20–0.50 08–20 UTC, ≤ 0.05 otherwise |
| batch | g6e-batch (spot) | 0.40–0.90 |
| serving | owned-gpu-ams1 (on-premises), GPUs 4-7 | as p5-chat |
| Slurm | owned-gpu-ams1, GPUs 0-3 | as training while a Slurm job holds them, else ≤ 0.03 |

The main organisation's clusters (CUR 2.0 accounts) run NVIDIA's DCGM exporter scraped by
Prometheus: one recorded `query_range` answer per metric and UTC day, in the layout the telemetry
asset keeps its own fetches in (`prometheus/<day>/<metric>__<step>s__<start>-<end>.json.gz`, the energy counter's
`….counter.json.gz`: its values are the bare counter's readings). Their
series carry the node's providerID, so they name their instance. The H100 nodes do not export
`DCGM_FI_PROF_GR_ENGINE_ACTIVE` (as on GPU Operator 24.9.2), so their active ratio falls back to GPU
utilization. The acquired subsidiary (legacy CUR) logs `nvidia-smi --format=csv -l 300` to one file
per host and month, and `host_map.csv` maps those host names to instance ids.

The owned server gpu-ams1-01 (`demo_gpu_clouds.SERVERS`, asset ACME-GPU-0002, team inference, always on) runs the
same exporter on all eight GPUs, without a providerID: `host_map.csv` maps its host name to the asset id its cost
lines carry (provider On-premises). A Kubernetes pod holds GPUs 4-7 and serves Llama-3.1-70B-Instruct; GPUs 0-3 are
the Slurm jobs' (`demo_training.slurm_allocations`), series without pod labels.

The p4d-eval node is the demo's Kubernetes cluster: its exporter maps pods to GPUs, so its series carry
the pod that holds each GPU (`KUBERNETES_PODS`, the same schedule every UTC day), one series per GPU and
pod, and a GPU no pod holds has a series without pod labels. GPUs 0-3 run one 4-GPU pod all day, pods on
GPUs 4-6 start and stop within the day, two pods share GPU 6 by time-slicing from 13:30 to 14:00. GPU 7 is
split into MIG slices (`MIG_SLICES`: 3g.20gb, 1g.5gb, 1g.5gb of an A100 40GB; 2/7 unpartitioned), each its own
series under the parent's UUID with `GPU_I_ID` and `GPU_I_PROFILE` for the profiling metrics, the pods of
`KUBERNETES_MIG_PODS` on them, one 1g.5gb slice never held; the parent's own series carries the device-level
metrics (memory, power) and DCGM's GPU_UTIL sentinel, as under MIG. Every slice reports the GPU's generated
values, so the GPU's active ratio is 5/7 of them. The metric values are the node's as before: only the labels
tell the pods apart.

Every DCGM GPU exports its energy counter (`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, mJ since boot): it restarts from 0
whenever an instance starts (a boot) and once on the owned server, which reboots at 03:00 UTC on the tenth day it is
in service; each step adds the step's power × its seconds. The nvidia-smi hosts log power only.

`expected_utilization.json` is the generator's own ledger, per UTC day and instance: GPU-hours with
telemetry, active GPU-hours (GR-engine, else GPU-util / 100) and effective GPU-hours (SM-active; none
for nvidia-smi hosts, which do not report it), in exact decimals, built from the values as generated,
never by reading the files back, with the GPUs' energy in kWh (power × seconds, which the counter's increases
also sum to); and per UTC day, instance and pod (`pods`, DCGM nodes only) the
GPU-hours the pod held, a step shared by n pods counting 1/n to each.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from sources.telemetry import samples
from sources.telemetry.prometheus import matrix_payload
from synthetic_data import demo_aws
from synthetic_data.demo_common import GPU_MODELS, instance_schedules, rng_for, text
from synthetic_data.demo_gpu_clouds import SERVERS
from synthetic_data.demo_training import slurm_allocations
from synthetic_data.focus_samples import BillingMonth, billing_months

PROMETHEUS_STEP_SECONDS = 900
NVIDIA_SMI_INTERVAL_SECONDS = 300
EXPECTED_FILE = "expected_utilization.json"
HOST_MAP_FILE = "host_map.csv"

# GPU model (seed vocabulary) -> (nvidia-smi / DCGM modelName, framebuffer MiB, board power W)
GPU_HARDWARE = {
    "H100": ("NVIDIA H100 80GB HBM3", 81559, 700),
    "A100 40GB": ("NVIDIA A100-SXM4-40GB", 40960, 400),
    "A10G": ("NVIDIA A10G", 23028, 300),
    "L40S": ("NVIDIA L40S", 46068, 350),
}
WORKLOADS = {
    "p5-pretrain": "training",
    "p4d-sweep": "training",
    "p5-chat": "serving",
    "p4d-eval": "evaluation",
    "g5-ocr": "inference",
    "g6e-embed": "inference",
    "g6e-batch": "batch",
    "owned-gpu-ams1": "serving",
}
KUBERNETES_FLEET = "p4d-eval"
KUBERNETES_PODS = (
    # (GPU, namespace, pod, container, from, to): UTC minutes of each day, multiples of the 15-minute step
    *((gpu, "eval-llm", "llm-eval-0", "harness", 0, 1440) for gpu in range(4)),
    (4, "eval-vision", "vision-eval-a", "harness", 0, 540),
    (4, "eval-vision", "vision-eval-b", "harness", 540, 1290),
    (5, "notebooks", "nb-alice", "jupyter", 480, 1080),
    (6, "eval-vision", "vision-embed", "embedder", 360, 840),
    (6, "notebooks", "nb-bob", "jupyter", 810, 960),
)
"""The demo cluster's pods; `dbt_project/seeds/kubernetes_namespace_teams.csv` maps eval-llm and eval-vision to
teams and leaves notebooks without one. GPU 7 is split into MIG slices (`MIG_SLICES`)."""
MIG_GPU = 7
MIG_SLICES = (("1", "3g.20gb"), ("2", "1g.5gb"), ("3", "1g.5gb"))
"""GPU 7 of the demo cluster: (GPU_I_ID, GPU_I_PROFILE), A100 40GB profiles."""
KUBERNETES_MIG_PODS = (
    # (slice GPU_I_ID, namespace, pod, container, from, to): UTC minutes, whole hours
    ("1", "eval-llm", "llm-judge-0", "judge", 0, 1440),
    ("2", "notebooks", "nb-carol", "jupyter", 600, 1020),
)
"""Pods holding MIG slices (`nvidia.com/mig-3g.20gb`, `nvidia.com/mig-1g.5gb`); slice 3 is never held."""
MIG_SENTINEL = "9223372036854775794"
"""What DCGM reports for DCGM_FI_DEV_GPU_UTIL on a GPU in MIG mode (not supported)."""
MIG_SLICE_METRICS = frozenset({samples.SM_ACTIVE, samples.GR_ENGINE_ACTIVE, samples.TENSOR_ACTIVE})
"""The profiling metrics DCGM reports per slice; the others stay on the parent GPU's series."""


def mig_share(profile: str) -> Decimal:
    """A slice's share of its GPU as the models compute it: g/7 to 12 decimals, half away from zero."""
    return (Decimal(profile.split("g.")[0]) / 7).quantize(Decimal("1e-12"), ROUND_HALF_UP)


SERVING_FLEET = "p5-chat"
OWNED_SERVER = 1
"""Index into `demo_gpu_clouds.SERVERS`: gpu-ams1-01, the inference team's server, the one with telemetry."""
OWNED_FLEET = "owned-gpu-ams1"
SERVING_PODS = (
    # (fleet, served model, pod, first GPU, GPUs): one vLLM server per pod, as vLLM is deployed on Kubernetes
    (SERVING_FLEET, "Llama-3.1-8B-Instruct", "vllm-llama-3-1-8b-0", 0, 4),
    (SERVING_FLEET, "Qwen2.5-72B-Instruct", "vllm-qwen2-5-72b-0", 4, 4),
    (OWNED_FLEET, "Llama-3.1-70B-Instruct", "vllm-llama-3-1-70b-0", 4, 4),
)
"""The model servers in namespace `inference`: each serves one model on four H100s, two on the AWS chat node, one on
the owned server, whose GPUs 0-3 stay with Slurm (`demo_serving` records their vLLM counters under the same pod
labels)."""
NO_GR_ENGINE_MODELS = frozenset({"H100"})
"""DCGM profiling field GR_ENGINE_ACTIVE missing on these nodes: the models fall back to GPU_UTIL / 100."""
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
OWNED_REBOOT_AFTER = timedelta(days=9, hours=3)
"""The owned server reboots this long after the start of its first UTC day in service: its counters restart from 0."""


@dataclass(frozen=True)
class GpuHost:
    """One running instance of the billed fleet and what its telemetry calls it."""

    fleet: str
    resource_id: str
    zone: str
    host: str
    gpu_model: str
    gpus: int
    team: str
    intervals: list[tuple[datetime, datetime]]
    via: str  # dcgm_prometheus | nvidia_smi
    provider_name: str = "AWS"
    """On-premises hosts have no providerID label: the host map names their asset."""


def demo_gpu_hosts(seed: int, months: Sequence[BillingMonth]) -> list[GpuHost]:
    """The AWS GPU instances exactly as demo_aws draws them (same generators, same order), then the owned server
    with telemetry, in service from its purchase (or the window's start) to the window's end."""
    hosts = []
    for fleets, via in (
        (demo_aws.CUR2_FLEET, samples.SOURCE_PROMETHEUS),
        (demo_aws.LEGACY_FLEET, samples.SOURCE_NVIDIA_SMI),
    ):
        for fleet in fleets:
            if fleet.instance_type.name not in GPU_MODELS:
                continue
            gpu_model, gpus = GPU_MODELS[fleet.instance_type.name]
            fleet_rng = rng_for(seed, demo_aws.SOURCE, fleet.name, "resources")
            schedules = instance_schedules(seed, demo_aws.SOURCE, fleet.name, fleet.count, fleet.pattern, months)
            for number, intervals in enumerate(schedules, start=1):
                resource_id = f"i-{fleet_rng.getrandbits(68):017x}"
                zone = fleet_rng.choice(fleet.region.zones)
                if via == samples.SOURCE_PROMETHEUS:
                    octets = rng_for(seed, "telemetry", resource_id).sample(range(1, 255), 3)
                    host = f"ip-10-{octets[0]}-{octets[1]}-{octets[2]}.{fleet.region.code}.compute.internal"
                else:
                    host = f"vision-{fleet.name.split('-', 1)[1]}-{number:02d}"
                hosts.append(
                    GpuHost(fleet.name, resource_id, zone, host, gpu_model, gpus, fleet.owner.team, intervals, via)
                )
    server = SERVERS[OWNED_SERVER]
    purchased = datetime(server.purchase_date.year, server.purchase_date.month, server.purchase_date.day, tzinfo=UTC)
    hosts.append(
        GpuHost(
            OWNED_FLEET,
            server.asset_id,
            server.site,
            server.hostname.split(".", 1)[0],
            server.gpu_model,
            server.gpu_count,
            server.owner.team,
            [(max(months[0].start, purchased), months[-1].end)],
            samples.SOURCE_PROMETHEUS,
            "On-premises",
        )
    )
    return hosts


def _sm_active(workload: str, moment: int, run_start: int, rng: random.Random) -> float:
    """SM-active of the step starting at `moment` (Unix seconds) for a run that started at `run_start`."""
    hour = moment // 3600 % 24
    weekday = (moment // 86400 + 3) % 7 < 5  # 1970-01-01 was a Thursday
    if workload == "training":
        return rng.uniform(0.0, 0.05) if moment - run_start < 3600 else rng.uniform(0.80, 0.95)
    if workload == "serving":
        return rng.uniform(0.20, 0.50) if weekday and 8 <= hour < 20 else rng.uniform(0.0, 0.04)
    if workload == "evaluation":
        return rng.uniform(0.50, 0.75) if weekday and 9 <= hour < 18 else rng.uniform(0.0, 0.03)
    if workload == "inference":
        return rng.uniform(0.20, 0.50) if 8 <= hour < 20 else rng.uniform(0.0, 0.05)
    if workload == "idle":
        return rng.uniform(0.0, 0.03)
    return rng.uniform(0.40, 0.90)


@dataclass(frozen=True)
class Sample:
    """One GPU sample in integers: ratios in 1/10,000, GPU util in %, memory in MiB, power in 1/100 W, the energy
    counter in mJ since boot."""

    at: int
    sm: int
    gr: int
    util: int
    tensor: int
    fb_mib: int
    power_cw: int
    energy_mj: int

    def value(self, metric: str) -> str:
        if metric == samples.SM_ACTIVE:
            return _ratio(self.sm)
        if metric == samples.GR_ENGINE_ACTIVE:
            return _ratio(self.gr)
        if metric == samples.TENSOR_ACTIVE:
            return _ratio(self.tensor)
        if metric == samples.GPU_UTIL:
            return str(self.util)
        if metric == samples.FB_USED:
            return str(self.fb_mib)
        if metric == samples.TOTAL_ENERGY:
            return str(self.energy_mj)
        return f"{self.power_cw // 100}.{self.power_cw % 100:02d}"


def _ratio(units: int) -> str:
    return f"{units // 10000}.{units % 10000:04d}"


def _gpu_samples(host: GpuHost, gpu: int, step: int, seed: int, slurm_jobs: list[tuple[int, int]]) -> list[Sample]:
    """One GPU's samples while its instance runs; a sample at `at` covers the step before it. A GPU of the owned
    server that no pod holds trains while one of `slurm_jobs` (start, end in Unix seconds) holds it, else idles.
    The energy counter starts from 0 with each running interval (a boot) and at the owned server's reboot."""
    rng = rng_for(seed, "telemetry", host.resource_id, str(gpu))
    _, memory_mib, board_watts = GPU_HARDWARE[host.gpu_model]
    slurm_gpu = host.fleet == OWNED_FLEET and node_pod(host, gpu) is None
    result = []
    reboot_at = None
    if host.fleet == OWNED_FLEET:
        first_day = host.intervals[0][0].replace(hour=0, minute=0, second=0, microsecond=0)
        reboot_at = int((first_day + OWNED_REBOOT_AFTER).timestamp())
    for begin, end in host.intervals:
        begin_at, end_at = int(begin.timestamp()), int(end.timestamp())
        first = begin_at + step
        moment = first + (-first % step)
        counter = 0
        while moment <= end_at:
            if moment - step == reboot_at:
                counter = 0
            workload, run_start = WORKLOADS[host.fleet], begin_at
            if slurm_gpu:
                jobs = [start for start, stop in slurm_jobs if start <= moment - step < stop]
                workload, run_start = ("training", jobs[0]) if jobs else ("idle", begin_at)
            sm = round(_sm_active(workload, moment - step, run_start, rng) * 10000)
            gr = sm if sm < 100 else min(10000, round(sm * 1.1 + 200))
            util = min(100, round(gr / 100 + 15)) if gr > 500 else round(gr / 100)
            power_cw = 7000 + (board_watts - 70) * gr // 100
            counter += power_cw * step * 10  # 1/100 W × s × 10 = mJ
            result.append(
                Sample(
                    at=moment,
                    sm=sm,
                    gr=gr,
                    util=util,
                    tensor=round(sm * 0.55),
                    fb_mib=int(memory_mib * (0.85 if gr > 500 else 0.08)),
                    power_cw=power_cw,
                    energy_mj=counter,
                )
            )
            moment += step
    return result


def _active_units(host: GpuHost, sample: Sample) -> int:
    """The active ratio in 1/10,000: GR-engine, or GPU util / 100 where GR-engine is not reported
    (the H100 nodes' exporter, and nvidia-smi, which has no such field)."""
    if host.via == samples.SOURCE_NVIDIA_SMI or host.gpu_model in NO_GR_ENGINE_MODELS:
        return sample.util * 100
    return sample.gr


def node_pod(host: GpuHost, gpu: int) -> tuple[str, str, str] | None:
    """The pod holding a GPU of a DCGM node outside the demo cluster: namespace, pod, container. The model servers'
    GPUs belong to their pods (`SERVING_PODS`), the owned server's others to Slurm (no pod); the other nodes run one
    pod per 8 GPUs."""
    for fleet, _, pod, first, gpus in SERVING_PODS:
        if fleet == host.fleet and first <= gpu < first + gpus:
            return host.team, pod, "vllm"
    if host.fleet == OWNED_FLEET:
        return None
    return host.team, f"{host.fleet}-{gpu // 8}", "worker"


def _pods_at(host: GpuHost, gpu: int, moment: int) -> list[tuple[str, str, str]]:
    """(namespace, pod, container) of the pods holding a GPU in the step starting at `moment`: on the demo cluster
    its schedule, on the other DCGM nodes one pod per node all the time (namespace = team), on nvidia-smi hosts none."""
    if host.via != samples.SOURCE_PROMETHEUS:
        return []
    if host.fleet != KUBERNETES_FLEET:
        held = node_pod(host, gpu)
        return [held] if held else []
    minute = moment % 86400 // 60
    return [
        (namespace, pod, container)
        for held, namespace, pod, container, begin, end in KUBERNETES_PODS
        if held == gpu and begin <= minute < end
    ]


def _is_mig(host: GpuHost, gpu: int) -> bool:
    return host.fleet == KUBERNETES_FLEET and gpu == MIG_GPU


def _slice_pods_at(instance: str, moment: int) -> list[tuple[str, str, str]]:
    """(namespace, pod, container) of the pods holding a MIG slice in the step starting at `moment`."""
    minute = moment % 86400 // 60
    return [
        (namespace, pod, container)
        for held, namespace, pod, container, begin, end in KUBERNETES_MIG_PODS
        if held == instance and begin <= minute < end
    ]


def _mig_series(
    labels: dict[str, str], points: list[Sample], step: int, texts: dict[str, list[str]]
) -> list[tuple[str, dict[str, str], list[tuple[int, str]]]]:
    """A MIG GPU's day as the exporter writes it: (metric, labels, points). The profiling metrics per slice, one
    series per pod holding it and one without pod labels while none does; the other metrics on the parent, with
    GPU_UTIL as DCGM's sentinel."""
    result = []
    labels = {
        key: value for key, value in labels.items() if key not in ("exported_namespace", "exported_pod", "container")
    }
    pod_keys = ("exported_namespace", "exported_pod", "exported_container")
    for instance, profile in MIG_SLICES:
        by_pod: dict[tuple[str, str, str] | None, list[int]] = defaultdict(list)
        for position, sample in enumerate(points):
            for held in _slice_pods_at(instance, sample.at - step) or [None]:
                by_pod[held].append(position)
        for held, positions in by_pod.items():
            slice_labels = labels | {"GPU_I_ID": instance, "GPU_I_PROFILE": profile}
            if held is not None:
                slice_labels |= dict(zip(pod_keys, held, strict=True))
            for metric in sorted(MIG_SLICE_METRICS & texts.keys()):
                result.append((metric, slice_labels, [(points[p].at, texts[metric][p]) for p in positions]))
    for metric, values in texts.items():
        if metric not in MIG_SLICE_METRICS:
            shown = [MIG_SENTINEL] * len(values) if metric == samples.GPU_UTIL else values
            result.append((metric, labels, [(sample.at, value) for sample, value in zip(points, shown, strict=True)]))
    return result


def _series_by_pods(
    host: GpuHost, gpu: int, labels: dict[str, str], points: list[Sample], step: int
) -> list[tuple[dict[str, str], list[int]]]:
    """A GPU's points of one day (by position) as the exporter's series: one for every other host; on the demo
    cluster one per pod holding the GPU, and one without pod labels while none does (its scrape renames the
    workload's labels exported_*)."""
    if host.fleet != KUBERNETES_FLEET:
        return [(labels, list(range(len(points))))]
    node = {
        key: value for key, value in labels.items() if key not in ("exported_namespace", "exported_pod", "container")
    }
    series: dict[tuple[str, str, str] | None, list[int]] = defaultdict(list)
    for position, sample in enumerate(points):
        for held in _pods_at(host, gpu, sample.at - step) or [None]:
            series[held].append(position)
    pod_keys = ("exported_namespace", "exported_pod", "exported_container")
    return [
        (node if held is None else node | dict(zip(pod_keys, held, strict=True)), positions)
        for held, positions in series.items()
    ]


def write_demo_telemetry(
    out_dir: Path, seed: int = 42, start_month: str = "2026-09", months: int = 2
) -> dict[str, Path]:
    """Write Prometheus recordings, nvidia-smi logs, the host map and the ledger; returns their paths."""
    out_dir = Path(out_dir)
    periods = billing_months(start_month, months)
    prometheus_dir = out_dir / "prometheus"
    smi_dir = out_dir / "nvidia_smi"
    days = [day.date() for period in periods for day in period.days]
    # resource -> day number -> [telemetry seconds, active units x seconds, SM-active units x seconds, 1/100 W x s]
    ledger_units: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    # (day number, resource, namespace, pod) -> GPU-seconds held
    pod_seconds: dict[tuple[int, str, str, str], Decimal] = defaultdict(Decimal)
    facts: dict[str, GpuHost] = {}
    # (day, metric) -> list of (labels, points)
    series: dict[tuple[date, str], list] = defaultdict(list)
    smi_rows: dict[tuple[str, str], list[str]] = defaultdict(list)
    slurm_jobs = [
        (int(start.timestamp()), int(end.timestamp()), gpus)
        for server, gpus, start, end in slurm_allocations(start_month)
        if server == OWNED_SERVER
    ]
    for host in demo_gpu_hosts(seed, periods):
        facts[host.resource_id] = host
        step = PROMETHEUS_STEP_SECONDS if host.via == samples.SOURCE_PROMETHEUS else NVIDIA_SMI_INTERVAL_SECONDS
        model_name = GPU_HARDWARE[host.gpu_model][0]
        uuid_rng = rng_for(seed, "telemetry/uuid", host.resource_id)
        for gpu in range(host.gpus):
            uuid = "GPU-" + "-".join(f"{uuid_rng.getrandbits(bits):0{bits // 4}x}" for bits in (32, 16, 16, 16, 48))
            by_day: dict[date, list[Sample]] = defaultdict(list)
            sums = ledger_units[host.resource_id]
            held_by_slurm = [(start, end) for start, end, gpus in slurm_jobs if gpu < gpus]
            for sample in _gpu_samples(host, gpu, step, seed, held_by_slurm):
                day_number = (sample.at - step) // 86400
                by_day[day_number].append(sample)
                day_sums = sums[day_number]
                day_sums[0] += step
                # a MIG GPU is as busy as the slice-weighted sum of its slices, each reporting the GPU's values
                weight = sum(mig_share(profile) for _, profile in MIG_SLICES) if _is_mig(host, gpu) else 1
                day_sums[1] += _active_units(host, sample) * step * weight
                if host.via == samples.SOURCE_PROMETHEUS:  # nvidia-smi has no SM-active
                    day_sums[2] += sample.sm * step * weight
                day_sums[3] += sample.power_cw * step
                holders = (
                    [
                        (_slice_pods_at(instance, sample.at - step), mig_share(profile))
                        for instance, profile in MIG_SLICES
                    ]
                    if _is_mig(host, gpu)
                    else [(_pods_at(host, gpu, sample.at - step), Decimal(1))]
                )
                for held, share in holders:
                    for namespace, pod, _ in held:
                        pod_seconds[(day_number, host.resource_id, namespace, pod)] += Decimal(step) * share / len(held)
                if host.via == samples.SOURCE_NVIDIA_SMI:
                    moment = datetime.fromtimestamp(sample.at, UTC)
                    smi_rows[(host.host, moment.strftime("%Y-%m"))].append(
                        f"{moment:%Y/%m/%d %H:%M:%S}.000, {model_name}, {uuid}, {sample.util} %, "
                        f"{sample.fb_mib} MiB, {sample.value(samples.POWER_USAGE)} W"
                    )
            if host.via != samples.SOURCE_PROMETHEUS:
                continue
            labels = {
                "gpu": str(gpu),
                "UUID": uuid,
                "device": f"nvidia{gpu}",
                "modelName": model_name,
                "Hostname": host.host,
            }
            if host.provider_name == "AWS":
                labels["provider_id"] = f"aws:///{host.zone}/{host.resource_id}"
            # The p4d cluster's Prometheus scrapes with honorLabels: false, so pod labels arrive renamed.
            pod_keys = ("exported_namespace", "exported_pod") if host.fleet.startswith("p4d") else ("namespace", "pod")
            if held := node_pod(host, gpu):
                labels |= {pod_keys[0]: held[0], pod_keys[1]: held[1], "container": held[2]}
            for day_number, points in by_day.items():
                day = date.fromordinal(EPOCH_ORDINAL + day_number)
                texts = {
                    samples.SM_ACTIVE: [_ratio(sample.sm) for sample in points],
                    samples.GPU_UTIL: [str(sample.util) for sample in points],
                    samples.TENSOR_ACTIVE: [_ratio(sample.tensor) for sample in points],
                    samples.FB_USED: [str(sample.fb_mib) for sample in points],
                    samples.POWER_USAGE: [sample.value(samples.POWER_USAGE) for sample in points],
                    samples.TOTAL_ENERGY: [sample.value(samples.TOTAL_ENERGY) for sample in points],
                }
                if host.gpu_model not in NO_GR_ENGINE_MODELS:
                    texts[samples.GR_ENGINE_ACTIVE] = [_ratio(sample.gr) for sample in points]
                if _is_mig(host, gpu):
                    for metric, series_labels, kept in _mig_series(labels, points, step, texts):
                        series[(day, metric)].append((series_labels, kept))
                    continue
                for series_labels, positions in _series_by_pods(host, gpu, labels, points, step):
                    for metric, values in texts.items():
                        kept = [(points[position].at, values[position]) for position in positions]
                        series[(day, metric)].append((series_labels, kept))
    for day in days:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=PROMETHEUS_STEP_SECONDS)
        end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
        folder = prometheus_dir / day.isoformat()
        folder.mkdir(parents=True, exist_ok=True)
        for metric in PROMETHEUS_METRICS:
            # the counter's readings are marked: an unmarked counter capture is read as increase() answers
            marker = ".counter" if metric == samples.TOTAL_ENERGY else ""
            window = f"{int(start.timestamp())}-{int(end.timestamp())}"
            name = f"{metric}__{PROMETHEUS_STEP_SECONDS}s__{window}{marker}.json.gz"
            (folder / name).write_bytes(
                gzip.compress(matrix_payload(series.get((day, metric), [])), compresslevel=1, mtime=0)
            )
    smi_dir.mkdir(parents=True, exist_ok=True)
    header = "timestamp, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]"
    for (host_name, month), lines in sorted(smi_rows.items()):
        (smi_dir / f"{host_name}--{month}.csv").write_text("\n".join([header, *sorted(lines)]) + "\n", encoding="utf-8")
    host_map = out_dir / HOST_MAP_FILE
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["host", "resource_id", "provider_name", "valid_from", "valid_to"])
    for host in facts.values():
        if host.via == samples.SOURCE_NVIDIA_SMI or host.provider_name != "AWS":
            writer.writerow([host.host, host.resource_id, host.provider_name, "", ""])
    host_map.write_text(buffer.getvalue(), encoding="utf-8")
    expected = out_dir / EXPECTED_FILE
    rows = [
        {
            "day": day.isoformat(),
            "resource_id": resource_id,
            "host": facts[resource_id].host,
            "fleet": facts[resource_id].fleet,
            "gpu_model": facts[resource_id].gpu_model,
            "team": facts[resource_id].team,
            "via": facts[resource_id].via,
            "telemetry_gpu_hours": text(Decimal(seconds) / 3600),
            "active_gpu_hours": text(Decimal(active) / 36_000_000),
            "effective_gpu_hours": text(Decimal(effective) / 36_000_000),
            "energy_kwh": text(Decimal(centiwatt_seconds) / 360_000_000),
        }
        for resource_id, by_day in sorted(ledger_units.items())
        for day_number, (seconds, active, effective, centiwatt_seconds) in sorted(by_day.items())
        for day in [date.fromordinal(EPOCH_ORDINAL + day_number)]
    ]
    document = {
        "seed": seed,
        "prometheus_step_seconds": PROMETHEUS_STEP_SECONDS,
        "nvidia_smi_interval_seconds": NVIDIA_SMI_INTERVAL_SECONDS,
        "days": rows,
        "pods": [
            {
                "day": date.fromordinal(EPOCH_ORDINAL + day_number).isoformat(),
                "resource_id": resource_id,
                "namespace": namespace,
                "pod": pod,
                "held_gpu_hours": text(seconds / 3600),
            }
            for (day_number, resource_id, namespace, pod), seconds in sorted(pod_seconds.items())
        ],
    }
    expected.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return {"prometheus": prometheus_dir, "nvidia_smi": smi_dir, "host_map": host_map, "expected": expected}


PROMETHEUS_METRICS = (
    samples.SM_ACTIVE,
    samples.GR_ENGINE_ACTIVE,
    samples.GPU_UTIL,
    samples.TENSOR_ACTIVE,
    samples.FB_USED,
    samples.POWER_USAGE,
    samples.TOTAL_ENERGY,
)
