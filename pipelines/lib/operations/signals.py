"""SIGTERM and SIGINT stop a CLI run within seconds, cleanly, and say what was and was not done.

Both signals raise KeyboardInterrupt in the main thread, so an open DuckDB transaction rolls back (the
loader rolls back on any exception) and Python unwinds. While Dagster executes a run it installs its own
handler for both signals, which interrupts the step (dagster-dbt forwards it to dbt and waits for dbt to
stop) and ends the run as failed without raising: `raise_if_stopped` after each run turns that into the
same KeyboardInterrupt. Which signal arrived is read from a wakeup pipe: CPython writes to it the number
of every signal that has a Python handler, whoever installed it (Dagster's handler does not say which).

`Progress` collects what the command finished, for the one line printed on the way out.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""128 + the signal number, as a shell reports a process ended by it."""

_wakeup: dict[str, int] = {}
_seen: list[int] = []


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Inside: SIGTERM behaves like Ctrl-C (KeyboardInterrupt) and the signals that arrive are recorded.

    The previous handlers come back afterwards (the CLI also runs inside other programs, such as tests).
    Outside the main thread, where Python cannot set handlers, nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if "read" not in _wakeup:
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        _wakeup.update(read=read, write=write)
    received()
    _seen.clear()
    previous = {number: signal.getsignal(number) for number in EXIT_CODES}
    previous_fd = signal.set_wakeup_fd(_wakeup["write"], warn_on_full_buffer=False)
    for number in EXIT_CODES:
        signal.signal(number, signal.default_int_handler)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)


def received() -> int | None:
    """The stopping signal that arrived (SIGTERM wins over SIGINT), or None."""
    if "read" in _wakeup:
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(_wakeup["read"], 64):
                _seen.extend(chunk)
    stops = [number for number in _seen if number in EXIT_CODES]
    if not stops:
        return None
    return signal.SIGTERM if signal.SIGTERM in stops else signal.SIGINT


def raise_if_stopped() -> None:
    """After a Dagster run: a signal it absorbed stops the command here."""
    if received() is not None:
        raise KeyboardInterrupt


def exit_code() -> int:
    number = received() or signal.SIGINT
    return EXIT_CODES[signal.Signals(number)]


def signal_name() -> str:
    return signal.Signals(received() or signal.SIGINT).name


@dataclass
class Progress:
    """What a command has done so far and what it was doing, for the line printed when a signal stops it."""

    done: list[str] = field(default_factory=list)
    doing: str | None = None
    left: list[str] = field(default_factory=list)

    def start(self, step: str, *later: str) -> None:
        self.doing = step
        self.left = list(later)

    def finish(self, result: str) -> None:
        self.done.append(result)
        self.doing = None

    def summary(self) -> str:
        done = "; ".join(self.done) or "nothing"
        not_done = [self.doing] if self.doing else []
        return f"done: {done}. Not done: {'; '.join(not_done + self.left) or 'the rest of the command'}."


progress = Progress()
"""The running command's progress (one command per process)."""
