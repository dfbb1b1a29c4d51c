"""`make bench`: DuckDB's own load of N CUR 2.0 line items against the project's ingest and dbt build.

For each N (default 1M, 10M and 30M), in one run:

  (a) baseline     DuckDB alone: CREATE TABLE AS SELECT the same columns FROM read_parquet(the same files)
  (b) ingest       the project's ingest of the same deliveries (hash, parse, validate, load, audit)
  (c) transform    `dbt build` of everything downstream (models and their tests), from an empty warehouse
  (d) daily        one more day is delivered (the month to date, re-delivered as AWS does): ingest, then the
                   build the dbt asset plans (what the delivery changed) and runs
  (e) nothing new  the same build again with nothing loaded since: the fixed cost of a daily run

and once per run, one region's AWS EC2 price list CSV (about 700 MB) parsed as the price feed does.

Every phase runs as a child process; a sampler thread sums the resident memory of the phase's process tree
(the child and every descendant, dbt included) with psutil every 50 ms, so "peak RSS" is what the phase made
the machine hold at once. This process, the instrument, is not counted (its imports hold about 0.14 GB that no
phase uses); the report records its size. Results go to JSON and to the markdown table in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import psutil

from bench.curve import DEFAULT_PNG, write_curve
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import DBT_PROJECT_DIR, ENGINES, PROJECT_ROOT, FinopsHome
from synthetic_data import demo_aws, scale
from synthetic_data.scale import Written

DEFAULT_START = date(2025, 1, 1)
DEFAULT_DAYS = 349
"""Through 15 December: a year of history, and the daily delivery re-delivers December to date."""
TARGETS = {
    "ingest_vs_baseline": 1.4,
    "ingest_transform_vs_baseline": 2.8,
    "peak_rss_gb": 2.0,
    "daily_vs_full": 0.08,
    "no_change_seconds": 5.0,
    "daily_vs_smallest": 1.2,
    "peak_vs_smallest": 1.2,
    "price_list_peak_rss_gb": 1.0,
}
"""Issue 39's targets (the ingest ratios, the daily run against the full one at 10M and more, a run with nothing
new) and issue 19's scaling ones: against the smallest N of the same run, the daily run may cost at most 1.2× (its
cost follows the delivery, not the history) and the peak memory grow at most 1.2× (flat)."""
SMALL_RUN_ROWS = 1_000_000
SMALL_RUN_DAILY_VS_FULL = 0.25
"""Up to this N the full run is short, so the daily run's fixed cost weighs more: its target is 25%."""


def daily_vs_full_target(rows: int) -> float:
    return SMALL_RUN_DAILY_VS_FULL if rows <= SMALL_RUN_ROWS else TARGETS["daily_vs_full"]


PRICE_LIST_FILLER_ROWS = 1_500_000
"""CPU price rows around the real GPU rows: about the 700 MB of a real us-east-1 EC2 price list CSV."""
BASELINE_MEMORY_LIMIT = "3GB"
"""DuckDB's own load runs with this memory limit whatever the project's (FINOPS_DUCKDB_MEMORY_LIMIT): the reference
must not slow down when the project holds less (at 1.5GB the 10M CTAS took 64 s instead of 41 s), and 3GB is the
limit every earlier figure in docs/benchmarks.md was measured with."""


class TreeMemory:
    """Peak of the summed RSS of a process and all its descendants, sampled every `interval` seconds, and the CPU
    time of the process and each descendant as last sampled."""

    def __init__(self, root_pid: int, interval: float = 0.05, limit_bytes: int | None = None) -> None:
        self.root = psutil.Process(root_pid)
        self.interval = interval
        self.limit_bytes = limit_bytes
        self.peak = 0
        self.exceeded = False
        self._cpu_by_pid: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def sampled_cpu_seconds(self) -> float:
        """User + system seconds of the process and its descendants, each as last seen (the time after a last sample
        is missed)."""
        return sum(self._cpu_by_pid.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                children = self.root.children(recursive=True)
            except psutil.Error:
                children = []  # the root ended: its descendants, if any, are no longer its tree
            total = _tree_rss([self.root, *children])
            self.peak = max(self.peak, total)
            for process in [self.root, *children]:
                with contextlib.suppress(psutil.Error):
                    times = process.cpu_times()
                    self._cpu_by_pid[process.pid] = times.user + times.system
            if self.limit_bytes and total > self.limit_bytes and not self.exceeded:
                # A guard for a shared machine: stop the phase, not the whole box (nor the harness).
                self.exceeded = True
                for process in [*children, self.root]:
                    if process.pid != os.getpid():
                        with contextlib.suppress(psutil.Error):
                            process.kill()
            self._stop.wait(self.interval)


def _tree_rss(processes: list[psutil.Process]) -> int:
    memory = []
    for process in processes:
        try:
            info = process.memory_info()
            memory.append(ProcessMemory(process.pid, process.ppid(), info.rss, info.vms))
        except psutil.Error:
            continue  # ended between listing and reading: counts as nothing
    return summed_rss(memory)


@dataclass(frozen=True)
class ProcessMemory:
    pid: int
    ppid: int
    rss: int
    vms: int


def summed_rss(processes: list[ProcessMemory]) -> int:
    """The summed RSS of a process tree, a child that still shares its parent's memory counted once.

    A JVM starts helpers (Hadoop's `chmod` for every file Spark writes) with posix_spawn: until the child execs, it
    runs in the parent's address space and reports the parent's RSS and VMS. Summed, one JVM looked like two (a
    4.7 GB Spark driver read as 10.6 GB). A child whose RSS and VMS both equal its parent's is in that window.
    """
    by_pid = {process.pid: process for process in processes}
    total = 0
    for process in processes:
        parent = by_pid.get(process.ppid)
        if parent is not None and (parent.rss, parent.vms) == (process.rss, process.vms):
            continue
        total += process.rss
    return total


@dataclass
class Phase:
    name: str
    seconds: float
    rows: int
    peak_rss_bytes: int
    cpu_seconds: float
    """User + system CPU of the phase's processes: unlike wall time, barely moved by other load on the machine."""
    dbt: dict[str, object] | None = None
    """For dbt phases: dbt's own elapsed time, node seconds per resource type and the slowest nodes."""
    plan: dict[str, object] | None = None
    """For build phases: the plan's scope, its reason, the nodes it selected and the seconds planning took."""

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


@dataclass
class Run:
    rows: int
    days: int
    phases: dict[str, Phase] = field(default_factory=dict)

    def ratio(self, names: tuple[str, ...], over: tuple[str, ...], *, cpu: bool = False) -> float:
        """Summed wall (or CPU) seconds of `names` over those of `over`."""

        def cost(phases: tuple[str, ...]) -> float:
            return sum(self.phases[name].cpu_seconds if cpu else self.phases[name].seconds for name in phases)

        return cost(names) / cost(over)

    def summary(self) -> dict[str, object]:
        base, ingest, full = ("baseline",), ("ingest",), ("ingest", "transform")
        daily = ("daily_ingest", "daily_transform")
        return {
            "rows": self.rows,
            "days": self.days,
            "phases": {
                name: asdict(phase) | {"rows_per_second": round(phase.rows_per_second)}
                for name, phase in self.phases.items()
            },
            "ingest_vs_baseline": round(self.ratio(ingest, base), 2),
            "ingest_transform_vs_baseline": round(self.ratio(full, base), 2),
            "daily_vs_full": round(self.ratio(daily, full), 3),
            "daily_transform_vs_transform": round(self.ratio(("daily_transform",), ("transform",)), 3),
            "daily_selection_seconds": self.phases["daily_transform"].plan["selection_seconds"],
            "no_change_seconds": self.phases["no_change"].seconds,
            "cpu": {
                "ingest_vs_baseline": round(self.ratio(ingest, base, cpu=True), 2),
                "ingest_transform_vs_baseline": round(self.ratio(full, base, cpu=True), 2),
                "daily_vs_full": round(self.ratio(daily, full, cpu=True), 3),
            },
            # The target is the memory of the project's own phases; the baseline is DuckDB alone.
            "peak_rss_gb": round(
                max(phase.peak_rss_bytes for name, phase in self.phases.items() if name != "baseline") / 1e9, 2
            ),
        }


def measure_phase(
    name: str, command: list[str], *, rows: int, env: dict[str, str], cwd: Path, limit: int | None
) -> Phase:
    """Run one phase as a child process; its wall time and the peak memory of its process tree while it ran."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    phase = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreeMemory(phase.pid, limit_bytes=limit) as memory:
        stdout, stderr = phase.communicate()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # rusage counts descendants once they are reaped; a JVM that pyspark leaves to end on its own never is.
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = max(reaped, memory.sampled_cpu_seconds)
    _progress(name, seconds, cpu, memory.peak)
    if memory.exceeded:
        raise SystemExit(f"{name}: stopped, the process tree passed the memory guard ({limit / 1e9:.1f} GB)")
    if phase.returncode != 0:
        tail = "\n".join((stdout + stderr).strip().splitlines()[-30:])
        raise SystemExit(f"{name} failed (exit {phase.returncode}):\n{tail}")
    printed = stdout.strip().splitlines()
    plan = json.loads(printed[-1]) if printed and printed[-1].startswith("{") else None
    return Phase(name, round(seconds, 3), rows, memory.peak, round(cpu, 3), plan=plan)


def _progress(name: str, seconds: float, cpu: float, peak: int) -> None:
    """One line per finished phase on stdout, so a run stopped part-way still shows what it measured."""
    print(f"    {name}: {seconds:.1f} s wall, {cpu:.1f} s CPU, peak {peak / 1e9:.2f} GB", flush=True)


def _dbt_parse(target: Path, env: dict[str, str]) -> None:
    """Parse the project into `target` once, untimed: a deployed project has its manifest (Dagster parses it at
    start-up), and the builds' plans read it. No `--vars`: changed vars make dbt parse the whole project again,
    which a scheduled run does not do."""
    parse = [str(Path(sys.executable).parent / "dbt"), "parse", "--target-path", str(target), "--quiet"]
    subprocess.run(parse, cwd=DBT_PROJECT_DIR, env=env, check=True, capture_output=True)


def generated_data(args: argparse.Namespace, rows: int, data: Path) -> tuple[list[Written], Written]:
    """The history deliveries and the next day's delivery for `rows`, generated once and reused.

    Generation is deterministic (seed, rows, days, start and the generator's own code), so a folder
    whose `generated.json` records the same inputs holds exactly the files a new run would write:
    a long run measured again does not spend its first half regenerating data it is not measuring.
    """
    key = {
        "rows": rows,
        "days": args.days,
        "start": args.start.isoformat(),
        "seed": args.seed,
        # The generator and the CUR 2.0 layout it writes (demo_aws's columns): either changed, the files differ.
        "generator_sha256": hashlib.sha256(
            b"".join(Path(module.__file__).read_bytes() for module in (scale, demo_aws))
        ).hexdigest(),
    }
    marker = data / "generated.json"
    if marker.exists():
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        if recorded["key"] == key:
            print(f"[{rows:,} rows] reusing the CUR 2.0 data generated in {data}", flush=True)
            history = [_written(entry) for entry in recorded["history"]]
            return history, _written(recorded["nextday"])
    if data.exists():
        shutil.rmtree(data)
    last_day = args.start + timedelta(days=args.days - 1)
    print(f"[{rows:,} rows] generating CUR 2.0 over {args.days} days ({args.start} to {last_day}) …", flush=True)
    history = scale.write_cur2(data / "history", rows=rows, seed=args.seed, start=args.start, days=args.days)
    # The next day's export re-delivers its month to date, at the same rows per day.
    per_day = rows // args.days
    nextday = scale.write_cur2(
        data / "nextday",
        rows=per_day * (args.days + 1),
        seed=args.seed,
        start=args.start,
        days=args.days + 1,
        last_month_only=True,
    )[0]
    recorded = {"key": key, "history": [_entry(w) for w in history], "nextday": _entry(nextday)}
    marker.write_text(json.dumps(recorded, indent=2) + "\n", encoding="utf-8")
    return history, nextday


def _entry(written: Written) -> dict[str, object]:
    return asdict(written) | {"path": str(written.path)}


def _written(entry: dict[str, object]) -> Written:
    return Written(**(entry | {"path": Path(entry["path"])}))


def run_one(args: argparse.Namespace, rows: int, work: Path) -> Run:
    data, home = args.work / f"data-{rows}", FinopsHome(work / "home")
    if work.exists():
        shutil.rmtree(work)
    home.root.mkdir(parents=True)
    history, nextday = generated_data(args, rows, data)
    env = os.environ | {"FINOPS_HOME": str(home.root), "PYTHONPATH": str(PROJECT_ROOT), "FINOPS_ENGINE": args.engine}
    python = sys.executable
    limit = int(args.memory_guard_gb * 1e9) if args.memory_guard_gb else None
    run = Run(rows=sum(w.rows for w in history), days=args.days)

    files = sorted(str(path) for w in history for path in w.path.rglob("*.parquet"))
    run.phases["baseline"] = measure_phase(
        "baseline",
        [python, "-m", "bench.phases", "baseline", "--database", str(work / "baseline.duckdb"), *files],
        rows=run.rows,
        env=env | {"FINOPS_DUCKDB_MEMORY_LIMIT": BASELINE_MEMORY_LIMIT},
        cwd=PROJECT_ROOT,
        limit=limit,
    )
    (work / "baseline.duckdb").unlink()
    print(f"  (a) baseline  {run.phases['baseline'].seconds:8.1f} s", flush=True)
    for written in history:
        register(home, "aws_cur", written.path)
    ingest = [python, "-m", "bench.phases", "ingest", "--home", str(home.root)]
    run.phases["ingest"] = measure_phase("ingest", ingest, rows=run.rows, env=env, cwd=PROJECT_ROOT, limit=limit)
    print(f"  (b) ingest    {run.phases['ingest'].seconds:8.1f} s", flush=True)
    target = work / "dbt-target"
    _dbt_parse(target, env)
    build = [python, "-m", "bench.phases", "build", "--home", str(home.root), "--target", str(target)]
    build += args.dbt_select.split() if args.dbt_select else []
    run.phases["transform"] = measure_phase("transform", build, rows=run.rows, env=env, cwd=PROJECT_ROOT, limit=limit)
    run.phases["transform"].dbt = dbt_timings(target)
    print(f"  (c) dbt build {run.phases['transform'].seconds:8.1f} s", flush=True)

    register(home, "aws_cur", nextday.path)
    run.phases["daily_ingest"] = measure_phase(
        "daily_ingest", ingest, rows=nextday.rows, env=env, cwd=PROJECT_ROOT, limit=limit
    )
    run.phases["daily_transform"] = measure_phase(
        "daily_transform", build, rows=nextday.rows, env=env, cwd=PROJECT_ROOT, limit=limit
    )
    run.phases["daily_transform"].dbt = dbt_timings(target)
    print(
        f"  (d) daily     {run.phases['daily_ingest'].seconds + run.phases['daily_transform'].seconds:8.1f} s "
        f"(selection {run.phases['daily_transform'].plan['selection_seconds']:.2f} s: "
        f"{run.phases['daily_transform'].plan['reason']})",
        flush=True,
    )
    run.phases["no_change"] = measure_phase("no_change", build, rows=0, env=env, cwd=PROJECT_ROOT, limit=limit)
    print(f"  (e) nothing new {run.phases['no_change'].seconds:6.1f} s", flush=True)
    if not args.keep:
        shutil.rmtree(work)
        if args.smoke:
            shutil.rmtree(data)
    return run


def run_price_list(args: argparse.Namespace, work: Path) -> dict[str, object]:
    """One region's EC2 price list parsed as the price feed does: its wall time and the tree's peak memory."""
    path = work / "price-list" / "us-east-1.csv"
    filler = 20_000 if args.smoke else PRICE_LIST_FILLER_ROWS
    env = os.environ | {"PYTHONPATH": str(PROJECT_ROOT)}
    write = [sys.executable, "-m", "bench.price_list", "write", str(path), "--filler-rows", str(filler)]
    written = subprocess.run(write, cwd=PROJECT_ROOT, env=env, check=True, capture_output=True, text=True)
    rows = json.loads(written.stdout)["rows"]
    print(f"[price list] one region, {rows:,} rows, {path.stat().st_size / 1e6:,.0f} MB …", flush=True)
    limit = int(args.memory_guard_gb * 1e9) if args.memory_guard_gb else None
    parse = [sys.executable, "-m", "bench.price_list", "parse", str(path)]
    phase = measure_phase("price_list", parse, rows=rows, env=env, cwd=PROJECT_ROOT, limit=limit)
    result = asdict(phase) | {"file_bytes": path.stat().st_size, "rows_per_second": round(phase.rows_per_second)}
    shutil.rmtree(path.parent)
    return result


def dbt_timings(target: Path) -> dict[str, object]:
    """Where a dbt build spent its time, from its run_results.json: per resource type, and the slowest nodes."""
    results = json.loads((target / "run_results.json").read_text(encoding="utf-8"))
    by_type: dict[str, float] = {}
    counts: dict[str, int] = {}
    for node in results["results"]:
        kind = node["unique_id"].split(".")[0]
        by_type[kind] = by_type.get(kind, 0.0) + node["execution_time"]
        counts[kind] = counts.get(kind, 0) + 1
    slowest = sorted(results["results"], key=lambda node: node["execution_time"], reverse=True)[:8]
    return {
        "elapsed_seconds": round(results["elapsed_time"], 1),
        "node_seconds_by_type": {kind: round(seconds, 1) for kind, seconds in sorted(by_type.items())},
        "nodes_by_type": dict(sorted(counts.items())),
        "slowest": [[node["unique_id"], round(node["execution_time"], 2)] for node in slowest],
    }


def machine(engine: str) -> dict[str, object]:
    packages = ("duckdb", "polars", "pyarrow", "dbt-core", "dbt-duckdb")
    if engine == "spark":
        packages += ("dbt-spark", "pyspark")
    return {
        "engine": engine,
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
        # the harness is not in any phase's peak: its own memory is given beside them
        "harness_rss_gb": round(psutil.Process().memory_info().rss / 1e9, 2),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {name: version(name) for name in packages},
    }


def markdown(report: dict[str, object]) -> str:
    """The results table (one row per N and phase) and the targets, as markdown."""
    lines = [
        "| rows | phase | wall s | CPU s | rows/s (wall) | peak RSS (phase tree) GB |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    titles = {
        "baseline": "(a) DuckDB CTAS baseline",
        "ingest": "(b) ingest",
        "transform": "(c) dbt build",
        "daily_ingest": "(d) daily: ingest",
        "daily_transform": "(d) daily: selection + dbt build",
        "no_change": "(e) nothing new: selection only",
    }
    for run in report["runs"]:
        for name, phase in run["phases"].items():
            lines.append(
                f"| {phase['rows']:,} | {titles[name]} | {phase['seconds']:.1f} | {phase['cpu_seconds']:.1f} "
                f"| {phase['rows_per_second']:,} "
                f"| {phase['peak_rss_bytes'] / 1e9:.2f} |"
            )
    lines += [
        "",
        "| rows | (b)/(a) | (b+c)/(a) | daily (d) / full (b+c) | daily dbt / full dbt | daily selection s "
        "| nothing new (e) s | peak GB (b–e) |",
    ]
    lines += ["|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in report["runs"]:
        targets = TARGETS | {"daily_vs_full": daily_vs_full_target(run["rows"])}
        cells = []
        for key in ("ingest_vs_baseline", "ingest_transform_vs_baseline", "daily_vs_full"):
            cells.append(f"{run[key]} {'✅' if run[key] <= targets[key] else '❌'} (≤ {targets[key]})")
        cells.append(str(run["daily_transform_vs_transform"]))
        cells.append(f"{run['daily_selection_seconds']:.2f}")
        quiet = run["no_change_seconds"]
        cells.append(
            f"{quiet:.1f} {'✅' if quiet <= TARGETS['no_change_seconds'] else '❌'} (≤ {TARGETS['no_change_seconds']})"
        )
        peak = run["peak_rss_gb"]
        cells.append(f"{peak} {'✅' if peak <= TARGETS['peak_rss_gb'] else '❌'} (≤ {TARGETS['peak_rss_gb']})")
        lines.append(f"| {run['rows']:,} | " + " | ".join(cells) + " |")
    scaling = scaling_ratios(report["runs"])
    if len(scaling) > 1:
        smallest = f"{scaling[0]['rows']:,}"
        lines += ["", f"Against the smallest N of the run ({smallest} line items): does the cost follow N?", ""]
        lines += ["| rows | daily run / the smallest N's | peak / the smallest N's |", "|---:|---:|---:|"]
        for row in scaling[1:]:
            cells = [
                f"{row[key]} {'✅' if row[key] <= TARGETS[key] else '❌'} (≤ {TARGETS[key]})"
                for key in ("daily_vs_smallest", "peak_vs_smallest")
            ]
            lines.append(f"| {row['rows']:,} | " + " | ".join(cells) + " |")
    lines += ["", "The same ratios in CPU seconds (user + system of the phase's processes, robust to other load):", ""]
    lines += ["| rows | (b)/(a) CPU | (b+c)/(a) CPU | daily / full CPU |", "|---:|---:|---:|---:|"]
    for run in report["runs"]:
        cpu = run["cpu"]
        lines.append(
            f"| {run['rows']:,} | {cpu['ingest_vs_baseline']} | {cpu['ingest_transform_vs_baseline']} "
            f"| {cpu['daily_vs_full']} |"
        )
    price_list = report.get("price_list")
    if price_list:
        peak = round(price_list["peak_rss_bytes"] / 1e9, 2)
        target = TARGETS["price_list_peak_rss_gb"]
        lines += ["", "AWS EC2 price list, one region's CSV parsed as the price feed does (`bench/price_list.py`):", ""]
        lines += ["| rows | file MB | wall s | CPU s | peak RSS (phase tree) GB |", "|---:|---:|---:|---:|---:|"]
        lines.append(
            f"| {price_list['rows']:,} | {price_list['file_bytes'] / 1e6:,.0f} | {price_list['seconds']:.1f} "
            f"| {price_list['cpu_seconds']:.1f} | {peak} {'✅' if peak < target else '❌'} (< {target}) |"
        )
    info = report["machine"]
    versions = ", ".join(f"{name} {value}" for name, value in info["versions"].items())
    lines += [
        "",
        f"Machine: {info['cores']} cores, {info['memory_gb']} GB, {info['platform']}, Python {info['python']}; "
        f"{versions}. Load average at start: {info['load_average_at_start']}; finished {report['finished']}. "
        f"The harness itself, not counted in any phase: {info['harness_rss_gb']} GB.",
    ]
    return "\n".join(lines)


def scaling_ratios(runs: list[dict[str, object]]) -> list[dict[str, object]]:
    """Each N's daily run (ingest + dbt, wall) and peak memory over the smallest N's of the same run."""
    ordered = sorted(runs, key=lambda run: run["rows"])
    if not ordered:
        return []

    def daily(run: dict[str, object]) -> float:
        return sum(run["phases"][name]["seconds"] for name in ("daily_ingest", "daily_transform"))

    first = ordered[0]
    return [
        {
            "rows": run["rows"],
            "daily_vs_smallest": round(daily(run) / daily(first), 2),
            "peak_vs_smallest": round(run["peak_rss_gb"] / first["peak_rss_gb"], 2),
        }
        for run in ordered
    ]


def results_markers(engine: str) -> tuple[str, str]:
    """The comments around an engine's results block in docs/benchmarks.md (DuckDB's keeps its old name)."""
    name = "bench:results" if engine == "duckdb" else f"bench:results:{engine}"
    return f"<!-- {name} -->", f"<!-- /{name} -->"


def write_doc(doc: Path, table: str, engine: str) -> None:
    """Replace the engine's results block of docs/benchmarks.md (the text around it is written by hand)."""
    begin, end = results_markers(engine)
    block = f"{begin}\n{table}\n{end}"
    text = doc.read_text(encoding="utf-8") if doc.exists() else f"# Benchmarks\n\n{begin}\n{end}\n"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(head + block + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000,30000000", help="comma-separated line item counts")
    parser.add_argument("--smoke", action="store_true", help="CI: 20,000 rows over 20 days, report to --json only")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS)
    parser.add_argument("--start", type=date.fromisoformat, default=DEFAULT_START)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--engine", choices=ENGINES, default="duckdb", help="the engine dbt builds on (FINOPS_ENGINE); ingest is DuckDB"
    )
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "gpu-finops-bench")
    parser.add_argument(
        "--json", type=Path, default=None, help="default docs/benchmarks.json (a smoke run: smoke.json in --work)"
    )
    parser.add_argument("--doc", type=Path, default=PROJECT_ROOT / "docs" / "benchmarks.md")
    parser.add_argument(
        "--curve", type=Path, default=DEFAULT_PNG, help="the scaling curve drawn from the results (DuckDB runs)"
    )
    parser.add_argument("--dbt-select", default=None, help="limit the dbt builds (smoke runs), e.g. '+fct_cost_daily'")
    parser.add_argument("--memory-guard-gb", type=float, default=16.0, help="stop a phase whose tree passes this")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the warehouses (generated data is always kept in --work/data-N and reused, except after --smoke)",
    )
    args = parser.parse_args(argv)
    sizes = [int(value) for value in args.rows.split(",")]
    if args.smoke:
        sizes, args.days = [20_000], 20
    if args.json is None:
        results = "benchmarks.json" if args.engine == "duckdb" else f"benchmarks-{args.engine}.json"
        args.json = args.work / "smoke.json" if args.smoke else PROJECT_ROOT / "docs" / results
    report: dict[str, object] = {"machine": machine(args.engine), "runs": []}
    if args.engine == "duckdb":
        # The price feed's parse does not depend on the model engine.
        report["price_list"] = run_price_list(args, args.work)
    for rows in sizes:
        run = run_one(args, rows, args.work / f"rows-{rows}")
        report["runs"].append(run.summary())
        # Written after every N, so a long run that is stopped still leaves the sizes it finished.
        report["finished"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        table = markdown(report)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        if not args.smoke:
            write_doc(args.doc, table, args.engine)
            if args.engine == "duckdb":
                write_curve(report, args.curve, memory_target_gb=TARGETS["peak_rss_gb"])
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
