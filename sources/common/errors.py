"""The error every connector raises for input it will not load."""

from __future__ import annotations


class RejectedInput(Exception):
    """A delivery that cannot be loaded as it is.

    Carries where the problem is (file, row, column) so the message a user reads, and the reason
    file written beside the quarantined delivery, point at the exact spot to fix.
    """

    def __init__(self, file: str, reason: str, *, row: int | None = None, column: str | None = None):
        self.file = file
        self.reason = reason
        self.row = row
        self.column = column
        super().__init__(self.describe())

    def describe(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.reason}"
