"""Tests only: hold a run at a named phase so a test can kill it there (a hook, never a sleep in the test).

A test sets FINOPS_TEST_PAUSE_AT to a phase and FINOPS_TEST_PAUSE_MARKER to a file path; the run touches
the file when it reaches that phase and then sleeps, so the test knows the moment and kills it. Unset (as
always outside tests), `pause_if_requested` returns at once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_AT_ENV = "FINOPS_TEST_PAUSE_AT"
PAUSE_MARKER_ENV = "FINOPS_TEST_PAUSE_MARKER"

PHASES = ("reading", "validating", "committing", "swapping", "building", "exporting")
"""reading: a delivery is being parsed; validating: the quality suite runs over a load; committing: a load's
files are staged in the lake and its transaction is open, just before COMMIT; swapping: the load's lake journal
is written (committed) and its first partition folder swapped in, the others not yet; building: dbt has built
its first node; exporting: an export, report or docs file is written under its temporary name, not yet renamed."""


def pause_env(phase: str, marker: Path) -> dict[str, str]:
    """The environment that makes a child process pause at `phase` and touch `marker` there."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}: one of {', '.join(PHASES)}")
    return {PAUSE_AT_ENV: phase, PAUSE_MARKER_ENV: str(marker)}


def pause_if_requested(phase: str) -> None:
    if os.environ.get(PAUSE_AT_ENV) != phase:
        return
    Path(os.environ[PAUSE_MARKER_ENV]).touch()
    time.sleep(600)
