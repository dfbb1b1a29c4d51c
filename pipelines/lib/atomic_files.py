"""Files people open (the FOCUS export, the report, the docs site) are replaced whole or not at all.

Each is written under a temporary name in its own folder, then renamed over the old one: a rename within a
folder is atomic, so a reader sees the old file or the new one, never half of one. A process killed while
writing leaves only its temporary file, `.<name>.<pid>.tmp`; the next write of the same file removes the
leftovers of dead processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.lib.operations.recovery import process_alive
from pipelines.lib.operations.test_hooks import pause_if_requested


@contextmanager
def replaced_atomically(*targets: Path) -> Iterator[list[Path]]:
    """Temporary paths beside `targets`, renamed over them once the block succeeds (all written, then renamed)."""
    temporaries = []
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(target)
        temporaries.append(target.with_name(f".{target.name}.{os.getpid()}.tmp"))
    try:
        yield temporaries
        pause_if_requested("exporting")
        for temporary, target in zip(temporaries, targets, strict=True):
            os.replace(temporary, target)
    finally:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)


def _remove_leftovers(target: Path) -> None:
    for leftover in target.parent.glob(f".{target.name}.*.tmp"):
        pid = leftover.name.removeprefix(f".{target.name}.").removesuffix(".tmp")
        if pid.isdigit() and not process_alive(int(pid)):
            leftover.unlink(missing_ok=True)
