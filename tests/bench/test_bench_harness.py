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

import pytest

from bench.price_list import SNAPSHOT
from bench.run import ProcessMemory, TreeMemory, results_markers, summed_rss, write_doc
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
    }
    for phase in run["phases"].values():
        assert phase["seconds"] > 0 and phase["cpu_seconds"] > 0 and phase["peak_rss_bytes"] > 10_000_000
    phases = run["phases"]
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
