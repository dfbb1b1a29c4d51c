"""The benchmark harness: a small-N smoke run finishes and reports; the memory sampler sees child processes.

Not a timed test: CI only proves the harness works (the figures are in docs/benchmarks.md). The smoke run
builds one dbt model, so it stays short; the incremental models have their own test.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench.curve import SERIES, curve_points, write_curve
from bench.price_list import SNAPSHOT
from bench.run import (
    ProcessMemory,
    TreeMemory,
    markdown,
    measure_phase,
    results_markers,
    scaling_ratios,
    summed_rss,
    write_doc,
)
from pipelines.lib.settings import PROJECT_ROOT


@pytest.mark.slow
def test_smoke_run_measures_every_phase_and_reports(tmp_path: Path):
    report_path = tmp_path / "bench.json"
    command = [sys.executable, "-m", "bench.run", "--smoke", "--work", str(tmp_path / "work")]
    command += ["--json", str(report_path), "--doc", str(tmp_path / "benchmarks.md")]
    command += ["--dbt-select", "stg_aws__cur_line_items"]
    completed = subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        env=os.environ | {"PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    report = json.loads(report_path.read_text())
    (run,) = report["runs"]
    # --smoke: 20,000 line items over 20 days, all in January; the next day re-delivers January with 21,000.
    assert run["rows"] == 20_000
    rows = {name: phase["rows"] for name, phase in run["phases"].items()}
    assert rows == {
        "baseline": 20_000,
        "ingest": 20_000,
        "transform": 20_000,
        "daily_ingest": 21_000,
        "daily_transform": 21_000,
        "no_change": 0,
    }
    for phase in run["phases"].values():
        assert phase["seconds"] > 0 and phase["cpu_seconds"] > 0 and phase["peak_rss_bytes"] > 10_000_000
    phases = run["phases"]
    # The first build is full, the daily one builds what the restated delivery changed, and then nothing is new.
    plans = {name: phases[name]["plan"]["scope"] for name in ("transform", "daily_transform", "no_change")}
    assert plans == {"transform": "full", "daily_transform": "changed", "no_change": "nothing"}
    assert phases["daily_transform"]["plan"]["reason"] == "new loads of raw.aws_cur_line_items"
    assert run["no_change_seconds"] == phases["no_change"]["seconds"]
    assert run["ingest_vs_baseline"] == round(phases["ingest"]["seconds"] / phases["baseline"]["seconds"], 2)
    assert report["machine"]["cores"] == os.cpu_count()
    # The price list: the bundled region snapshot's rows (after 5 metadata lines and the header) + 20,000 filler.
    snapshot_rows = len(SNAPSHOT.read_text(encoding="utf-8").splitlines()) - 6
    price_list = report["price_list"]
    assert price_list["rows"] == snapshot_rows + 20_000
    assert price_list["seconds"] > 0 and price_list["peak_rss_bytes"] > 10_000_000
    assert "AWS EC2 price list" in completed.stdout
    assert "| 20,000 | (b) ingest |" in completed.stdout
    assert not (tmp_path / "benchmarks.md").exists(), "a smoke run must not overwrite the published figures"
    assert not (tmp_path / "work").joinpath("rows-20000").exists(), "generated data is removed unless --keep"


def test_peak_memory_counts_child_processes():
    # A child holding 300 MB: the sampler of this process's tree must see it, as it must see dbt's.
    hold = "import time; block = bytearray(300 * 1024 * 1024); block[::4096] = b'x' * len(block[::4096]); time.sleep(3)"
    with TreeMemory(os.getpid(), interval=0.05) as memory:
        child = subprocess.Popen([sys.executable, "-c", hold])
        child.wait(timeout=60)
        time.sleep(0.1)
    assert memory.peak > 300 * 1024 * 1024


def test_a_phase_peak_is_its_own_tree_without_the_harness(tmp_path: Path):
    """The harness holds its imports (well over 100 MB) through every phase: a phase's peak must not include them."""
    hold = "import time; block = bytearray(300 * 1024 * 1024); block[::4096] = b'x' * len(block[::4096]); time.sleep(1)"
    harness = psutil.Process().memory_info().rss
    assert harness > 100 * 1024 * 1024, "the harness is too small for this test to tell the two apart"
    phase = measure_phase("hold", [sys.executable, "-c", hold], rows=1, env=dict(os.environ), cwd=tmp_path, limit=None)
    assert 300 * 1024 * 1024 < phase.peak_rss_bytes < 300 * 1024 * 1024 + harness


def test_cpu_of_a_descendant_that_is_never_reaped_is_counted(tmp_path: Path):
    """A grandchild its parent never waits for (as pyspark leaves its JVM) burns CPU that rusage never sees."""
    marker = tmp_path / "burnt"
    burn = (
        "import os, time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass\n"
        f"open({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)"
    )
    leaving = (
        f"import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {burn!r}])\n"
        f"while not os.path.exists({str(marker)!r}): time.sleep(0.02)\ntime.sleep(0.2)"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with TreeMemory(os.getpid(), interval=0.05) as memory:
        subprocess.run([sys.executable, "-c", leaving], timeout=120, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.kill(int(marker.read_text()), signal.SIGKILL)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert reaped < 0.9, "the grandchild's second of CPU must not be in rusage, or this test proves nothing"
    assert memory.sampled_cpu_seconds >= 0.95


def test_a_child_in_its_parents_address_space_is_counted_once():
    """A JVM's posix_spawn child reports the JVM's own RSS and VMS until it execs: counting it would double the JVM.
    A child with memory of its own (another RSS or VMS) counts, as do unrelated processes with equal figures."""
    gib = 1024**3
    jvm = ProcessMemory(pid=10, ppid=1, rss=4 * gib, vms=9 * gib)
    spawning = ProcessMemory(pid=11, ppid=10, rss=4 * gib, vms=9 * gib)
    chmod = ProcessMemory(pid=12, ppid=10, rss=2 * 1024**2, vms=9 * gib)
    dbt = ProcessMemory(pid=1, ppid=0, rss=300 * 1024**2, vms=2 * gib)
    twin = ProcessMemory(pid=13, ppid=1, rss=4 * gib, vms=9 * gib)
    assert summed_rss([dbt, jvm, spawning, chmod]) == dbt.rss + jvm.rss + chmod.rss
    assert summed_rss([dbt, jvm, twin]) == dbt.rss + jvm.rss + twin.rss


def test_the_results_block_is_replaced_and_the_prose_kept(tmp_path: Path):
    begin, end = "<!-- bench:results -->", "<!-- /bench:results -->"
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"# Benchmarks\n\nprose before\n\n{begin}\nold table\n{end}\n\nprose after\n")
    write_doc(doc, "new table", "duckdb")
    assert doc.read_text() == f"# Benchmarks\n\nprose before\n\n{begin}\nnew table\n{end}\n\nprose after\n"


def test_each_engine_has_its_own_results_block(tmp_path: Path):
    """A Spark run adds its block beside DuckDB's and leaves DuckDB's figures alone."""
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n<!-- bench:results -->\nduckdb table\n<!-- /bench:results -->\n")
    write_doc(doc, "spark table", "spark")
    write_doc(doc, "spark table, again", "spark")
    text = doc.read_text()
    assert "<!-- bench:results -->\nduckdb table\n<!-- /bench:results -->" in text
    assert text.count("spark table") == 1
    assert "<!-- bench:results:spark -->\nspark table, again\n<!-- /bench:results:spark -->" in text
    assert results_markers("spark") == ("<!-- bench:results:spark -->", "<!-- /bench:results:spark -->")


def _phase(rows: int, seconds: float, peak_gb: float) -> dict[str, float]:
    rate = round(rows / seconds)
    return {"rows": rows, "seconds": seconds, "peak_rss_bytes": int(peak_gb * 1e9), "cpu_seconds": seconds} | {
        "rows_per_second": rate
    }


def _run(rows: int, seconds: dict[str, float], peaks: dict[str, float]) -> dict[str, object]:
    phases = {name: _phase(rows, seconds[name], peaks[name]) for name in seconds}
    return {"rows": rows, "phases": phases, "peak_rss_gb": max(v for k, v in peaks.items() if k != "baseline")}


NAMES = ("baseline", "ingest", "transform", "daily_ingest", "daily_transform")
SMALL = _run(1_000_000, dict(zip(NAMES, (10, 15, 30, 2, 8), strict=True)), dict.fromkeys(NAMES, 1.5))
LARGE = _run(
    10_000_000,
    dict(zip(NAMES, (50, 75, 150, 3, 9), strict=True)),
    dict(zip(NAMES, (3.0, 1.6, 1.9, 1.5, 1.7), strict=True)),
)


def test_scaling_ratios_compare_each_size_with_the_smallest():
    # Daily run: (3 + 9) / (2 + 8) = 1.2; peak of the project's phases: 1.9 / 1.5 = 1.27 (the baseline's 3 GB not).
    assert scaling_ratios([LARGE, SMALL]) == [
        {"rows": 1_000_000, "daily_vs_smallest": 1.0, "peak_vs_smallest": 1.0},
        {"rows": 10_000_000, "daily_vs_smallest": 1.2, "peak_vs_smallest": 1.27},
    ]
    table = markdown({"machine": MACHINE, "runs": [SMALL | RATIOS, LARGE | RATIOS], "finished": "now"})
    assert "| 10,000,000 | 1.2 ✅ (≤ 1.2) | 1.27 ❌ (≤ 1.2) |" in table
    # The daily run's target is 25% of the full run up to 1M line items, 8% above; a run with nothing new 5 s.
    assert "| 1,000,000 | 1.0 ✅ (≤ 1.4) | 1.0 ✅ (≤ 2.8) | 0.01 ✅ (≤ 0.25) | 0.01 | 0.25 | 1.5 ✅ (≤ 5.0) |" in table
    assert "| 10,000,000 | 1.0 ✅ (≤ 1.4) | 1.0 ✅ (≤ 2.8) | 0.01 ✅ (≤ 0.08) |" in table


MACHINE = {
    "cores": 2,
    "memory_gb": 24.0,
    "platform": "test",
    "python": "3.11",
    "versions": {},
    "engine": "duckdb",
    "load_average_at_start": [0.0, 0.0, 0.0],
    "harness_rss_gb": 0.14,
}
RATIOS = {
    "ingest_vs_baseline": 1.0,
    "ingest_transform_vs_baseline": 1.0,
    "daily_vs_full": 0.01,
    "daily_transform_vs_transform": 0.01,
    "daily_selection_seconds": 0.25,
    "no_change_seconds": 1.5,
    "cpu": {"ingest_vs_baseline": 1.0, "ingest_transform_vs_baseline": 1.0, "daily_vs_full": 0.01},
}


def test_the_scaling_curve_is_drawn_from_the_results(tmp_path: Path):
    report = {"machine": MACHINE, "runs": [LARGE, SMALL], "finished": "2026-12-02 12:00 UTC"}
    points = {(point["rows"], point["series"]): point for point in curve_points(report)}
    assert len(points) == 2 * len(SERIES)
    # Sums and peaks worked out from the phases above.
    full = points[(10_000_000, "(b) + (c) ingest and full dbt build")]
    assert (full["seconds"], full["peak_gb"]) == (225.0, 1.9)
    daily = points[(1_000_000, "(d) daily run (ingest + dbt)")]
    assert (daily["seconds"], daily["peak_gb"]) == (10.0, 1.5)
    assert points[(10_000_000, "(a) DuckDB's own load (baseline)")]["peak_gb"] == 3.0
    png = write_curve(report, tmp_path / "curve.png", memory_target_gb=2.0)
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    assert width > 1000 and height > 400, "two panels side by side, drawn at twice the size"
