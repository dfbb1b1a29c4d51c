"""AWS market prices: the EC2 Price List bulk files, the public spot price feed and the Spot Advisor.

Three feeds, because AWS publishes the three figures in three places with three refresh rhythms:
list prices (on-demand, reserved, capacity blocks) a few times a year in per-region bulk CSVs of
hundreds of MB, cheapest-AZ spot prices every few minutes in one JSON file, and savings/interruption
bands monthly in another. None needs credentials. AWS names no GPU model anywhere in these files:
the instance type is resolved to a GPU through the `gpu_instance_types` seed in dbt.
"""

from __future__ import annotations

import re
from typing import Any

from sources.prices.offers import LayoutChanged, Payload

PROVIDER = "AWS"

ACCELERATOR_FAMILY = r"^(p[0-9]|g[0-9]|gr[0-9]|trn[0-9]|inf[0-9]|dl[0-9])"
"""Instance families that carry GPUs or ML accelerators (P, G, GR; Trainium, Inferentia, DL1).

Used where a payload has no GPU count (spot feed, Spot Advisor; Trainium/Inferentia rows of the
price list, whose GPU column is empty). A regex both Python `re` and DuckDB `regexp_matches` read.
"""

_ACCELERATOR = re.compile(ACCELERATOR_FAMILY)


def is_accelerator_type(instance_type: str) -> bool:
    return bool(_ACCELERATOR.match(instance_type))


def json_document(payload: Payload) -> dict[str, Any]:
    """The payload's JSON object; anything else is a LayoutChanged naming AWS and the URL."""
    try:
        document = payload.json()
    except LayoutChanged as error:
        raise LayoutChanged(f"{PROVIDER}: {error}") from error
    if not isinstance(document, dict):
        raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: not a JSON object")
    return document
