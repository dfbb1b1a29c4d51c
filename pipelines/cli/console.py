"""What a command shows: one line per phase, a live status line on a terminal, the detail in a log file.

Dagster's console log and dbt's output (hundreds of lines per run) go to one log file per command run,
`FINOPS_HOME/logs/<UTC time>-<command>.log`, and also to the screen with `--verbose`. Warnings and errors
logged during a run reach the screen once each, after the run, with how often they were logged. On a
terminal a single status line (rewritten in place with `\\r`) shows what the running step has done and the
elapsed time; when stdout is not a terminal (CI, cron) there is no status line, only the phase lines.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pipelines.lib.operations.outages import log_file

CONSOLE_LOG_LEVEL = "INFO"
"""Dagster's console logger level for CLI runs: its DEBUG events (one per materialized partition) only bury the rest."""


class _Tee(io.TextIOBase):
    """A text stream writing to several (the log file, and the screen with --verbose)."""

    def __init__(self, *streams: IO[str]) -> None:
        self._streams = streams

    def write(self, text: str) -> int:
        for stream in self._streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self._streams:
            stream.flush()


@dataclass
class Console:
    """The running command's screen and log file (one command per process, see `start`)."""

    log: Path | None = None
    verbose: bool = False
    _named: bool = False
    _screen: IO[str] | None = None
    _status_width: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def screen(self) -> IO[str]:
        """The terminal's stdout, also while `detail` sends Python's stdout to the log file."""
        return self._screen or sys.stdout

    @property
    def live(self) -> bool:
        """A status line is drawn only on a terminal, and not under --verbose (the log lines would tear it)."""
        return not self.verbose and self.screen.isatty()

    def status(self, text: str) -> None:
        """Rewrite the status line (terminal only)."""
        if not self.live:
            return
        with self._lock, contextlib.suppress(ValueError, OSError):  # the screen stream closed as a run ended
            width = max(self._status_width, len(text))
            self.screen.write("\r" + text.ljust(width))
            self.screen.flush()
            self._status_width = len(text)

    def clear_status(self) -> None:
        if not self.live or not self._status_width:
            return
        with self._lock, contextlib.suppress(ValueError, OSError):
            self.screen.write("\r" + " " * self._status_width + "\r")
            self.screen.flush()
            self._status_width = 0

    @contextlib.contextmanager
    def detail(self) -> Iterator[None]:
        """Inside, everything written to stdout and stderr goes to the log file (and with --verbose to the screen
        too): Dagster's console log, dbt's output that dagster-dbt echoes, stack traces, and, at the level of the
        file descriptors, what native code prints itself (DuckDB's progress bar on a query of over 2 s)."""
        if self.log is None:
            yield
            return
        with self.log.open("a", encoding="utf-8") as log, contextlib.ExitStack() as stack:
            if self.verbose:
                self._screen = sys.stdout
                out: IO[str] = _Tee(log, sys.stdout)
                err: IO[str] = _Tee(log, sys.stderr)
            else:
                self._screen = stack.enter_context(_descriptors_to(log))
                out = err = log
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    yield
            finally:
                with self._lock:
                    self._screen = None

    def name_log(self, label: str = "Details (Dagster's and dbt's logs)", file: IO[str] | None = None) -> None:
        """Where the detail is, once per command, when anything was logged (the last line, unless said before)."""
        if self._named or self.log is None or not self.log.exists() or not self.log.stat().st_size:
            return
        self._named = True
        print(f"{label}: {self.log}", file=file or sys.stdout)


@contextlib.contextmanager
def _descriptors_to(log: IO[str]) -> Iterator[IO[str]]:
    """File descriptors 1 and 2 point at `log` inside, restored after; yields a stream to the screen's stdout."""
    try:
        targets = [sys.__stdout__.fileno(), sys.__stderr__.fileno()]
    except (AttributeError, OSError, ValueError):  # no real descriptors (embedded, or replaced streams)
        yield sys.stdout
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(target) for target in targets]
    screen = os.fdopen(os.dup(saved[0]), "w", encoding="utf-8")
    try:
        for target in targets:
            os.dup2(log.fileno(), target)
        yield screen
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__, log):
            with contextlib.suppress(ValueError, AttributeError):
                stream.flush()
        for target, copy in zip(targets, saved, strict=True):
            os.dup2(copy, target)
            os.close(copy)
        screen.close()


console = Console()
"""The running command's console; `start` points it at the command's log file."""


def start(logs: Path, command: str, *, verbose: bool) -> Console:
    """A log file for this run of `command` (spaces become dashes), and the --verbose setting."""
    console.log = log_file(logs, command.replace(" ", "-"))
    console.verbose = verbose
    return console


def elapsed(since: float) -> str:
    seconds = int(time.monotonic() - since)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


@dataclass
class RunProgress:
    """Progress of one in-process Dagster run, fed with its events (`on_event`), drawn on the status line.

    `dbt_nodes` is how many dbt models, seeds and tests the run's dbt step builds; `partitions` how many
    (asset, partition) materializations the run should make, when it is partitioned.
    """

    label: str
    dbt_step: str | None = None
    dbt_nodes: int = 0
    partitions: int = 0
    steps: int = 0
    started: float = field(default_factory=time.monotonic)
    steps_done: int = 0
    step: str = ""
    materialized: int = 0
    dbt_done: int = 0
    warnings: Counter[str] = field(default_factory=Counter)
    examples: dict[str, set[str]] = field(default_factory=dict)
    _ticker: threading.Event = field(default_factory=threading.Event)

    def on_event(self, entry: Any) -> None:
        """One Dagster event-log entry of the run (every log line and structured event passes here)."""
        import logging

        event = entry.dagster_event
        if event is None:
            if entry.level >= logging.WARNING:
                message = _first_line(entry.user_message)
                self.warnings[_shape(message)] += 1
                self.examples.setdefault(_shape(message), set()).add(message)
            return
        kind = event.event_type_value
        step = event.step_key or ""
        if kind == "STEP_START":
            self.step = step.replace("__", "/")
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
            self.steps_done += 1
        elif kind in ("ASSET_MATERIALIZATION", "ASSET_CHECK_EVALUATION") and step == self.dbt_step:
            self.dbt_done += 1
        elif kind == "ASSET_MATERIALIZATION":
            self.materialized += 1
        self.draw()

    def draw(self) -> None:
        of_steps = f" of {self.steps}" if self.steps else ""
        parts = [f"{self.label}: {self.steps_done}{of_steps} steps done"]
        if self.partitions:
            parts.append(f"{self.materialized} of {self.partitions} partitions loaded")
        if self.dbt_nodes and (self.dbt_done or self.step == (self.dbt_step or "").replace("__", "/")):
            parts.append(f"dbt {self.dbt_done} of {self.dbt_nodes} nodes built")
        elif self.step:
            parts.append(f"now {self.step}")
        parts.append(elapsed(self.started))
        console.status(", ".join(parts))

    @contextlib.contextmanager
    def ticking(self) -> Iterator[None]:
        """Redraw every second on a terminal, so the elapsed time moves during a long step."""
        if not console.live:
            yield
            return
        thread = threading.Thread(target=self._tick, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._ticker.set()
            thread.join()
            console.clear_status()

    def _tick(self) -> None:
        while not self._ticker.wait(1.0):
            self.draw()

    def report_warnings(self) -> None:
        """Each kind of warning logged during the run once, with how often it was logged (to stderr).

        Warnings that differ only in a quoted name or a date (one per partition, per dbt test) are one kind.
        """
        for shape, times in self.warnings.items():
            examples = sorted(self.examples[shape])
            line = f"warning: {examples[0]}"
            if times > 1:
                line += f" (and {times - 1} more like it" if len(examples) > 1 else f" ({times} times"
                line += "; details in the log file)"
            print(line, file=sys.stderr)


_VARYING = re.compile(r"`[^`]*`|'[^']*'|\d{4}-\d{2}-\d{2}|\b\w+__\w+\b")
"""What differs between warnings of one kind: quoted names (a dbt test, an asset), dates (a partition) and
Dagster step keys (`prices__aws_spot_delivery_is_fresh`: a check skipped because its asset failed)."""


def _shape(message: str) -> str:
    return _VARYING.sub("…", message)


def _first_line(message: str) -> str:
    """A warning's first line (the rest, such as a stack trace, is in the log file)."""
    lines = [line for line in (message or "").strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else "(empty message)"
