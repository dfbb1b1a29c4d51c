"""What a source knows about its rows beyond its table's columns and types, declared beside it in the catalogue.

The quality suite (`pipelines.lib.quality`) turns these facts into rules; freshness reads `LastObserved`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sources.common.row_checks import ERROR, Condition, NonNegative

MAX_ABS_COST = 10**15
"""A cost beyond ±10^15 is no bill: it is a parse slip (an id or timestamp read as money)."""


@dataclass(frozen=True)
class AllowedValues:
    column: str
    values: tuple[str, ...]
    ignore_case: bool = False
    """Compare trimmed and case-insensitively: for exports whose casing varies (Azure's `ChargeType`)."""
    severity: str = ERROR
    """`warning` for a provider's own vocabulary, which grows without notice (an unknown value loads)."""


@dataclass(frozen=True)
class NotBefore:
    """`column` >= `bound` on every row (where `when` holds): e.g. a charge starts inside its billing period."""

    column: str
    bound: str
    when: Condition | None = None
    severity: str = ERROR


@dataclass(frozen=True)
class InRange:
    """`min_value` <= `column` <= `max_value` on every non-empty value (where `when` holds)."""

    column: str
    min_value: Any = None
    max_value: Any = None
    when: Condition | None = None
    strict_min: bool = False
    unit: str = ""
    """How the range reads in the description, e.g. `%` or `a ratio`."""
    severity: str = ERROR


@dataclass(frozen=True)
class Derived:
    """A column computed in SQL beside the load's rows, for rules that compare a column with an offset of another.

    `sql` is code (a constant of the source's facts), never data.
    """

    name: str
    sql: str


@dataclass(frozen=True)
class QualityFacts:
    """What a source knows about its rows beyond the registry's columns and types."""

    keys: tuple[str, ...] = ()
    """Columns that must never be empty, besides the restatement / replace key."""
    allowed_values: tuple[AllowedValues, ...] = ()
    cost_columns: tuple[str, ...] = ()
    """Money columns to check for finite amounts, besides the billed and effective cost."""
    currency_columns: tuple[str, ...] = ()
    """ISO 4217 columns besides the billing currency (they may be empty)."""
    not_negative: tuple[NonNegative, ...] = ()
    """The reader's own rules (its `ROW_RULES.non_negative`) where it has them."""
    ordered: tuple[NotBefore, ...] = ()
    in_range: tuple[InRange, ...] = ()
    derived: tuple[Derived, ...] = ()


@dataclass(frozen=True)
class LastObserved:
    """A source's last delivery read from its rows: the newest `column`, per source named by `source_sql`.

    `source_sql` is a SQL expression over the raw table giving each row's `audit.loads` source name
    (e.g. `'prices/' || feed`); it is code from the registry, never data.
    """

    column: str
    source_sql: str
