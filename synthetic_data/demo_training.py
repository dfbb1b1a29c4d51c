"""The demo organisation's training jobs: a Slurm `sacct` export of the owned cluster and a SkyPilot cost report.

Acme's owned cluster is the two 8×H100 servers of `demo_gpu_clouds.SERVERS` (gpu-fra1-01, gpu-ams1-01), one Slurm
partition `h100` (seed slurm_partitions maps it to On-premises H100). `JOBS` are its GPU jobs of the demo months,
day and hour offsets from the first demo day, in UTC (the export's local time is UTC): the planned pretraining run
`acme_pretrain_3b` (seed planned_training_runs) on one server for eight days, a fine-tune, a failed and a cancelled
job, and a CPU job that holds no GPU. gpu-ams1-01 lends GPUs 4-7 to a Kubernetes model server all the time
(`demo_telemetry.SERVING_PODS`), so Slurm has only its GPUs 0-3 (gres.conf) and a job there asks for four at most;
`slurm_allocations` says which GPUs each job held when, for the telemetry of that server. `CLUSTERS` are the
research team's SkyPilot clusters on Lambda, RunPod and AWS, as `sky cost-report` prints them at 23:00 UTC on the
demo's last day (LAUNCHED relative to that instant).

`expected_runs` gives each run's GPU-hours as the tests recompute them, from these tables, never from the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from synthetic_data.demo_gpu_clouds import SERVERS
from synthetic_data.focus_samples import billing_months

SACCT_FIELDS = (
    "JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|ElapsedRaw|State|NNodes|NodeList|AllocTRES"
)
SLURM_FILE = "sacct-acme-h100.txt"


@dataclass(frozen=True)
class Job:
    job_id: str
    name: str
    user: str
    account: str
    partition: str
    start_day: int
    start_hour: int
    hours: Decimal
    state: str
    server: int | None
    """Index into SERVERS, None for a CPU job."""
    gres: str
    """`gres/gpu=8` or a typed `gres/gpu:h100=4`; empty for no GPU."""
    gpus: int


JOBS = (
    Job("20311", "sft-7b-chat", "mara", "inference", "h100", 9, 7, Decimal(60), "COMPLETED", 1, "gres/gpu=4", 4),
    Job("20315", "ablation-lr", "jon", "research", "h100", 12, 14, Decimal("6.5"), "FAILED", 1, "gres/gpu:h100=4", 4),
    Job("20320", "tokenize-web", "li", "data", "cpu", 20, 2, Decimal(3), "COMPLETED", None, "", 0),
    Job("20402", "acme_pretrain_3b", "jon", "research", "h100", 34, 8, Decimal(192), "COMPLETED", 0, "gres/gpu=8", 8),
    Job("20417", "eval-3b", "jon", "research", "h100", 43, 10, Decimal("0.75"), "CANCELLED by 2001", 1,
        "gres/gpu:h100=2,gres/gpu=2", 2),
)  # fmt: skip


@dataclass(frozen=True)
class Cluster:
    name: str
    launched_days_ago: int
    duration: str
    duration_hours: Decimal
    resources: str
    gpus: int
    status: str
    hourly_price: str
    cost: str


CLUSTERS = (
    Cluster("acme-ft-8b", 16, "20h 0m 0s", Decimal(20), "1x Lambda(gpu_8x_h100_sxm5, {'H100': 8})", 8,
            "TERMINATED", "$ 23.92", "$ 478.40"),
    Cluster("dev-a100", 21, "2 days 4h 30m 0s", Decimal("52.5"), "1x RunPod(1x_A100-80GB_SECURE, {'A100-80GB': 1})",
            1, "STOPPED", "$ 1.64", "$ 86.10"),
    Cluster("sky-jobs-controller-5d2e", 25, "3 weeks 4 days 0h 0m 0s", Decimal(600), "1x AWS(m6i.xlarge)", 0, "UP",
            "$ 0.19", "$ 115.20"),
)  # fmt: skip


def _start(month: datetime) -> datetime:
    """A billing month's bound as a naive UTC time."""
    return month.replace(tzinfo=None)


def _host(server: int | None) -> str:
    return SERVERS[server].hostname.split(".", 1)[0] if server is not None else "cpu-01"


def write_demo_training(out_dir: Path, *, start_month: str, months: int) -> dict[str, Path]:
    """The sacct export and the cost-report capture, byte-identical for the same months."""
    out_dir.mkdir(parents=True, exist_ok=True)
    first = _start(billing_months(start_month, 1)[0].start)
    lines = [SACCT_FIELDS]
    for job in JOBS:
        start = first + timedelta(days=job.start_day, hours=job.start_hour)
        seconds = int(job.hours * 3600)
        end = start + timedelta(seconds=seconds)
        tres = f"billing={max(job.gpus, 1) * 16},cpu={max(job.gpus, 1) * 16}" + (f",{job.gres}" if job.gres else "")
        elapsed = f"{seconds // 86400}-" if seconds >= 86400 else ""
        elapsed += f"{seconds % 86400 // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
        lines.append(
            "|".join(
                (
                    job.job_id, job.name, job.user, job.account, job.partition,
                    (start - timedelta(minutes=5)).isoformat(), start.isoformat(), end.isoformat(), elapsed,
                    str(seconds), job.state, "1", _host(job.server), f"{tres},mem=512G,node=1",
                )
            )
        )  # fmt: skip
    slurm = out_dir / SLURM_FILE
    slurm.write_text("\n".join(lines) + "\n", encoding="utf-8")
    printed = _start(billing_months(start_month, months)[-1].end) - timedelta(hours=1)
    header = ("NAME", "LAUNCHED", "DURATION", "RESOURCES", "STATUS", "COST/hr", "COST (est.)")
    rows = [header] + [
        (c.name, f"{c.launched_days_ago} days ago", c.duration, c.resources, c.status, c.hourly_price, c.cost)
        for c in CLUSTERS
    ]
    widths = [max(len(row[column]) for row in rows) + 2 for column in range(len(header))]
    table = ["".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    skypilot = out_dir / f"sky-cost-report__{_unix(printed)}.txt"
    skypilot.write_text("Clusters\n" + "\n".join(table) + "\n", encoding="utf-8")
    return {"slurm": slurm, "skypilot": skypilot}


def _unix(moment: datetime) -> int:
    """Seconds since the epoch of a naive UTC time."""
    return int((moment - datetime(1970, 1, 1)).total_seconds())


def slurm_allocations(start_month: str) -> list[tuple[int, int, datetime, datetime]]:
    """(server index, GPUs held, start, end) of every GPU job, in UTC. The jobs of one server never overlap, so each
    holds that server's first GPUs (Slurm hands out the devices gres.conf lists in order)."""
    first = billing_months(start_month, 1)[0].start
    allocations = []
    for job in JOBS:
        if job.server is None or not job.gpus:
            continue
        start = first + timedelta(days=job.start_day, hours=job.start_hour)
        allocations.append((job.server, job.gpus, start, start + timedelta(seconds=int(job.hours * 3600))))
    return allocations


def expected_runs() -> dict[str, tuple[str, Decimal]]:
    """run name -> (source, GPU-hours) for every job or cluster that held GPUs (the same whatever the months)."""
    runs = {job.name: ("slurm", job.gpus * job.hours) for job in JOBS if job.gpus}
    runs |= {c.name: ("skypilot", c.gpus * c.duration_hours) for c in CLUSTERS if c.gpus}
    return runs
