"""The two shapes of raw table: billing data restated by account and period, and reference data replaced by key.

A table's declaration is all the loader, the lake and the quality suite need to know about it.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass(frozen=True)
class RawTable:
    """A raw table and the columns the loader needs to restate and audit it."""

    name: str
    columns: dict[str, pl.DataType]
    restatement_key: tuple[str, str]
    """(account column, billing period start column): a new delivery replaces these keys whole."""
    currency_column: str
    billed_cost_column: str
    effective_cost_column: str
    snapshot: bool = False
    """True for inventories: every delivery is the whole table and replaces all of it."""

    @property
    def account_column(self) -> str:
        return self.restatement_key[0]

    @property
    def period_column(self) -> str:
        return self.restatement_key[1]


@dataclass(frozen=True)
class ReferenceTable:
    """A raw table of reference data (exchange rates, market prices) replaced by key, not by billing period."""

    name: str
    columns: dict[str, pl.DataType]
    replace_key: tuple[str, ...]
    """A load replaces every row whose key values it carries (e.g. rate_date: a day's rates are restated whole)."""
    partition_by: tuple[str, ...] | None = None
    """The lake's folders (`replace_key` when not given). Coarser for small daily data (a price feed, the
    ECB's rates): a load rewrites its folders, keeping the rows of keys it does not carry, and readers open
    a few files instead of one per day."""

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return self.partition_by or self.replace_key
