"""ISO 4217 codes of the currencies in use, for checking billing currency columns.

The list is the connectors' (`sources.common.currencies`, from Babel's CLDR data), so readers and
the quality suites check against one list.
"""

from __future__ import annotations

from sources.common.currencies import ISO_4217_CURRENCIES, minor_units

__all__ = ["ISO_4217_CURRENCIES", "minor_units"]
