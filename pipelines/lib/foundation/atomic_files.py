"""Files people open (the FOCUS export, the report, the docs site) are replaced whole or not at all.

Each is written under a temporary name in its own folder, then renamed over the old one: a rename within a
folder is atomic, so a reader sees the old file or the new one, never half of one. A process killed while
writing leaves only its temporary file, `.<name>.<pid>.tmp`; the next write of the same file removes the
leftovers of dead processes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.foundation.processes import process_alive


@contextmanager
def replaced_atomically(*targets: Path) -> Iterator[list[Path]]:
    """Temporary paths beside `targets`, renamed over them once the block succeeds (all written, then renamed)."""
    temporaries = []
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target.parent, target.name)
        temporaries.append(temporary_name(target))
    try:
        yield temporaries
        pause_if_requested("exporting")
        for temporary, target in zip(temporaries, targets, strict=True):
            os.replace(temporary, target)
    finally:
        for temporary in temporaries:
            discard(temporary)


def temporary_name(target: Path) -> Path:
    """`.<name>.<pid>.tmp` beside `target`: hidden, so the landing sensor and readers skip it."""
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def remove_leftovers(folder: Path, name: str = "*") -> None:
    """Temporary files or folders (of `name`, or any) left in `folder` by processes that no longer run."""
    for leftover in folder.glob(f".{name}.*.tmp"):
        pid = leftover.name.removesuffix(".tmp").rsplit(".", 1)[-1]
        if pid.isdigit() and not process_alive(int(pid)):
            discard(leftover)


def discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
