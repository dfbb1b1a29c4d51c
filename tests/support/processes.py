"""Long-running servers a test starts (Dagster's webserver and daemon) and talks to over loopback.

Each server starts in a process group of its own, so stopping it stops every process it started (code servers,
run workers, dbt) and none outlives the test. Output goes to a file: a pipe nobody reads would block the server.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from pipelines.lib.settings import PROJECT_ROOT

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_group(command: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen:
    """`command` in the project folder, in a new process group, its output in `log`."""
    with log.open("w") as out:
        return subprocess.Popen(
            command, cwd=PROJECT_ROOT, env=dict(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop_group(process: subprocess.Popen, *, grace: float = 20) -> None:
    """SIGTERM to the whole group, SIGKILL to whatever is left after `grace` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 30)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(process):
            time.sleep(0.2)
        if not _group_alive(process):
            break
    process.wait(timeout=30)


def _group_alive(process: subprocess.Popen) -> bool:
    process.poll()
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(what: str, probe: Callable[[], T | None], *, within: float, log: Path | None = None) -> T:
    """Poll `probe` every second until it returns something; fail naming `what` (and the server's log) otherwise."""
    deadline = time.monotonic() + within
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            tail = log.read_text()[-4000:] if log is not None and log.exists() else ""
            raise AssertionError(f"no {what} within {within:.0f} s\n{tail}")
        time.sleep(1)


def graphql(port: int, query: str, variables: Mapping[str, object] | None = None) -> dict:
    """One request to the Dagster webserver's GraphQL API; its `data`, or an error naming what it said."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": dict(variables or {})}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    assert not answer.get("errors"), answer["errors"]
    return answer["data"]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False
