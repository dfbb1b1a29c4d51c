"""A child process held at a named phase by the test hook (pipelines/lib/foundation/failpoints.py), for tests
that kill it there or run something beside it. Every child started here is killed at the end of its test
(`kill_paused_children`, called by an autouse fixture in tests/conftest.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from pipelines.lib.foundation.failpoints import pause_env
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome
from tests.support.focus_ingest import INGEST_FOCUS_SCRIPT

_started: list[subprocess.Popen] = []


def start_paused(
    command: list[str], phase: str, marker: Path, env: Mapping[str, str], *, within: float = 180
) -> subprocess.Popen:
    """Start `command` held at `phase`; returns once it is there. `within` seconds bound the wait: a run wedged by
    an earlier crash (a slot never freed) fails here, with the child's output."""
    marker.unlink(missing_ok=True)
    # Output goes to files: a pipe nobody reads fills up and would block the child before its phase.
    with marker.with_suffix(".out").open("w") as out, marker.with_suffix(".err").open("w") as err:
        child = subprocess.Popen(
            command, cwd=PROJECT_ROOT, env=dict(env) | pause_env(phase, marker), stdout=out, stderr=err, text=True
        )
    _started.append(child)
    deadline = time.monotonic() + within
    while not marker.exists():
        if child.poll() is not None:
            output = marker.with_suffix(".out").read_text()[-3000:] + marker.with_suffix(".err").read_text()[-3000:]
            pytest.fail(f"{command} exited ({child.returncode}) before reaching {phase}:\n{output}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"{command} did not reach {phase} within {within} s")
        time.sleep(0.05)
    return child


def start_paused_focus_ingest(home: FinopsHome, phase: str, marker: Path) -> subprocess.Popen:
    """A child process loading the FOCUS landing zone of `home`, held at `phase` (e.g. `committing`: inside its
    transaction, the lake files staged)."""
    return start_paused([sys.executable, "-c", INGEST_FOCUS_SCRIPT, str(home.root)], phase, marker, os.environ)


def kill_now(child: subprocess.Popen) -> None:
    """SIGKILL a paused child, the crash the tests stage, and check it died of it."""
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL


def kill_paused_children() -> None:
    """Kill what a test started here and left running: a failing test must not leave a paused child holding a
    warehouse (or a CPU) behind."""
    while _started:
        child = _started.pop()
        if child.poll() is None:
            child.kill()
            child.wait()
