"""RunPod GPU prices from its GraphQL API (`POST /graphql`, query `gpuTypes`; no key needed for prices).

RunPod quotes **per GPU**: `securePrice` (Secure Cloud, on-demand), `communityPrice` (Community
Cloud), `secureSpotPrice` / `communitySpotPrice` (interruptible pods), and under `lowestPrice` the
lowest current offer for the cloud asked for (`uninterruptablePrice`, `minimumBidPrice`). The same
per-GPU price holds for any GPU count and data centre, so rows are GPU-hour prices with gpu_count 1
and no region.

One query is sent per cloud (Secure, then Community): `lowestPrice` answers for the cloud named in
its input, and the stored payload's name (`gpu-types-secure.json`, `gpu-types-community.json`) tells
the parser which cloud a `lowestPrice` belongs to. A type's spot price falls back to that cloud's
`minimumBidPrice`, its on-demand/community price to `uninterruptablePrice`. GraphQL reports failures
inside a 200 response (`errors`), which fail the fetch and the parse loudly.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import polars as pl

from sources.common.http import FetchError, HttpClient, base_url
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed, naming_provider, offers_frame

PROVIDER = "RunPod"
BASE_URL_ENV = "FINOPS_RUNPOD_BASE_URL"
DEFAULT_BASE_URL = "https://api.runpod.io"
PATH = "/graphql"

QUERY = """
query GpuTypes($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes {
    id
    displayName
    memoryInGb
    secureCloud
    communityCloud
    securePrice
    communityPrice
    secureSpotPrice
    communitySpotPrice
    lowestPrice(input: $lowestPriceInput) {
      minimumBidPrice
      uninterruptablePrice
      stockStatus
    }
  }
}
""".strip()

CLOUDS: dict[str, dict[str, Any]] = {
    "secure": {
        "secure_cloud": True,
        "list_field": "securePrice",
        "list_model": "on_demand",
        "spot_field": "secureSpotPrice",
    },
    "community": {
        "secure_cloud": False,
        "list_field": "communityPrice",
        "list_model": "community",
        "spot_field": "communitySpotPrice",
    },
}
"""Per cloud: the lowestPrice input flag, and which per-GPU fields hold its list and spot prices."""


def _payload_name(cloud: str) -> str:
    return f"gpu-types-{cloud}.json"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    for cloud, spec in CLOUDS.items():
        body = {"query": QUERY, "variables": {"lowestPriceInput": {"gpuCount": 1, "secureCloud": spec["secure_cloud"]}}}
        response = client.post(url, json=body)
        errors = _graphql_errors(response.content)
        if errors:
            raise FetchError(PROVIDER, url, f"GraphQL errors: {errors}")
        store.save(_payload_name(cloud), url, response.content)


def _graphql_errors(content: bytes) -> str | None:
    """The `errors` messages of a GraphQL response, if it has any (unreadable bodies are left to the parser)."""
    try:
        document = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    errors = document.get("errors") if isinstance(document, dict) else None
    if not errors:
        return None
    return "; ".join(str(error.get("message", error)) if isinstance(error, dict) else str(error) for error in errors)


def _money(value: Any, where: str) -> Decimal | None:
    """A per-GPU price, or None when RunPod does not offer it (null or 0 means "not offered")."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LayoutChanged(f"{where}: price {value!r} is not a number")
    try:
        price = Decimal(str(value))
    except InvalidOperation as error:
        raise LayoutChanged(f"{where}: price {value!r} is not a number") from error
    return price if price > 0 else None


def _cloud_of(payload: Payload) -> str:
    for cloud in CLOUDS:
        if payload.name == _payload_name(cloud):
            return cloud
    raise LayoutChanged(f"{payload.source_url}: payload {payload.name!r} is not one of RunPod's per-cloud queries")


def _parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in ("gpu_name", "pricing_model", "price", "sku", "source_url")}
    for payload in payloads:
        cloud = _cloud_of(payload)
        spec = CLOUDS[cloud]
        document = payload.json()
        if not isinstance(document, dict):
            raise LayoutChanged(f"{payload.source_url}: not a GraphQL response object")
        if document.get("errors"):
            raise LayoutChanged(f"{payload.source_url}: GraphQL errors: {_graphql_errors(payload.read_bytes())}")
        data = document.get("data")
        gpu_types = data.get("gpuTypes") if isinstance(data, dict) else None
        if not isinstance(gpu_types, list):
            raise LayoutChanged(f"{payload.source_url}: no `data.gpuTypes` list")
        for gpu in gpu_types:
            if not isinstance(gpu, dict) or "id" not in gpu or spec["list_field"] not in gpu:
                raise LayoutChanged(f"{payload.source_url}: a gpuType without id or {spec['list_field']}")
            gpu_id = gpu["id"]
            where = f"{payload.source_url}: {gpu_id}"
            lowest = gpu.get("lowestPrice") or {}
            list_price = _money(gpu.get(spec["list_field"]), where) or _money(lowest.get("uninterruptablePrice"), where)
            spot_price = _money(gpu.get(spec["spot_field"]), where) or _money(lowest.get("minimumBidPrice"), where)
            for model, price in ((spec["list_model"], list_price), ("interruptible", spot_price)):
                if price is None:
                    continue
                columns["gpu_name"].append(gpu_id)
                columns["pricing_model"].append(model)
                columns["price"].append(price)
                columns["sku"].append(f"{gpu_id} ({cloud} cloud)")
                columns["source_url"].append(payload.source_url)
    return offers_frame(
        {
            **columns,
            "observed_at": observed_at,
            "provider": PROVIDER,
            "gpu_count": Decimal(1),
            "price_unit": "gpu-hour",
            "currency": "USD",
            "offer_statistic": "list",
        },
        source=f"{PROVIDER} gpuTypes",
    )


parse = naming_provider(PROVIDER, _parse)
"""The offers of one capture; every LayoutChanged names the provider (and the URL where it has one)."""

FEED = PriceFeed(
    name="runpod",
    provider=PROVIDER,
    title="RunPod GraphQL gpuTypes",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
