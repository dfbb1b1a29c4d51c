"""A Spark standalone cluster on loopback for the tests: one master and one worker, each its own JVM process.

pyspark ships the classes (not the sbin scripts) of a standalone cluster; `spark-class` starts them the way
`start-master.sh` and `start-worker.sh` do, but in the foreground, so the test owns and stops the processes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

STARTUP_SECONDS = 240


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def standalone_cluster(folder: Path, *, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """Start a master and a worker on 127.0.0.1 and yield the master URL (`spark://127.0.0.1:<port>`)."""
    folder.mkdir(parents=True, exist_ok=True)
    env = os.environ | {
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_WORKER_DIR": str(folder / "work"),
    }
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, ui_port, worker_ui_port = free_port(), free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    processes = []
    try:
        processes.append(
            _start(
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui_port),
                ],
                folder / "master.log",
                env,
            )
        )
        processes.append(
            _start(
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--webui-port",
                    str(worker_ui_port),
                    "--work-dir",
                    str(folder / "work"),
                ],
                folder / "worker.log",
                env,
            )
        )
        _wait_for_worker(ui_port, processes, folder)
        yield master_url
    finally:
        for process in reversed(processes):
            _stop(process)


def _start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait_for_worker(ui_port: int, processes: list[subprocess.Popen], folder: Path) -> None:
    """Until the master's status page lists one alive worker (the master's web UI serves it as JSON)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"a Spark process exited with {process.returncode}; see the logs in {folder}")
        with suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as answer:
                status = json.load(answer)
            if any(worker.get("state") == "ALIVE" for worker in status.get("workers", [])):
                return
        time.sleep(1)
    raise TimeoutError(f"no Spark worker registered with the master within {STARTUP_SECONDS} s; see {folder}")


def _stop(process: subprocess.Popen) -> None:
    """The process group, asked to stop, then killed: a worker leaves executor JVMs as its children."""
    if process.poll() is not None:
        return
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
