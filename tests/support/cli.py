"""The `gpu-finops` command as a real process, for tests that check what a user sees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipelines.lib.settings import PROJECT_ROOT


def run_cli(home: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
    """`gpu-finops ARGS` as a real process with FINOPS_HOME=home; stdout and stderr are pipes, not a terminal."""
    env = {key: value for key, value in os.environ.items() if key not in ("DAGSTER_HOME", "FINOPS_WAREHOUSE")}
    env["FINOPS_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
