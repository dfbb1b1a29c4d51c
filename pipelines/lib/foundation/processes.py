"""Is a process still alive: what crash recovery and the atomic-file sweeper ask before they touch another
process's leftovers."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_alive(pid: int, *, not_started_after: float | None = None) -> bool:
    """True if `pid` runs (not a zombie) and, when known, started no later than `not_started_after` (epoch s)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.parent.parent.joinpath("self").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state, start_ticks = fields[0], int(fields[19])
    if state in {"Z", "X"}:
        return False
    if not_started_after is None:
        return True
    started = _boot_time() + start_ticks / os.sysconf("SC_CLK_TCK")
    return started <= not_started_after + 1.0


def _boot_time() -> float:
    """When the machine booted, in epoch seconds, to the hundredth: now minus the uptime (`btime` in /proc/stat
    is whole seconds, which could make a process started just after a run look as old as the run)."""
    return time.time() - float(Path("/proc/uptime").read_text().split()[0])
