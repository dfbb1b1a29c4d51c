"""Lambda Cloud instance types and their on-demand prices (`GET /api/v1/instance-types`, Bearer key).

Lambda quotes whole instances in US cents per hour and has no spot market. The GPU count is in
`specs.gpus`; the GPU's name in `gpu_description` (e.g. "H100 (80 GB SXM5)"). The price is the same
in every region, so there is one offer per instance type; `regions_with_capacity_available` only
says where it can be launched right now.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed, offers_frame

PROVIDER = "Lambda"
BASE_URL_ENV = "FINOPS_LAMBDA_BASE_URL"
DEFAULT_BASE_URL = "https://cloud.lambda.ai"
API_KEY_ENV = "LAMBDA_API_KEY"
PATH = "/api/v1/instance-types"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    response = client.get(url, headers={"Authorization": f"Bearer {api_key}"})
    store.save("instance-types.json", url, response.content)


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {
        name: [] for name in ("instance_type", "gpu_name", "gpu_count", "price", "sku", "source_url")
    }
    for payload in payloads:
        document = payload.json()
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, dict):
            raise LayoutChanged(f"{payload.source_url}: no `data` object of instance types")
        for key, entry in data.items():
            spec = (entry or {}).get("instance_type") or {}
            cents = spec.get("price_cents_per_hour")
            gpus = (spec.get("specs") or {}).get("gpus")
            if cents is None or gpus is None:
                raise LayoutChanged(f"{payload.source_url}: {key}: no price_cents_per_hour or specs.gpus")
            if not gpus:
                continue
            try:
                price = Decimal(str(cents)) / 100
            except InvalidOperation as error:
                raise LayoutChanged(f"{payload.source_url}: {key}: price {cents!r} is not a number") from error
            columns["instance_type"].append(spec.get("name") or key)
            columns["gpu_name"].append(spec.get("gpu_description") or spec.get("description"))
            columns["gpu_count"].append(Decimal(str(gpus)))
            columns["price"].append(price)
            columns["sku"].append(key)
            columns["source_url"].append(payload.source_url)
    return offers_frame(
        {
            **columns,
            "observed_at": observed_at,
            "provider": PROVIDER,
            "pricing_model": "on_demand",
            "price_unit": "instance-hour",
            "currency": "USD",
            "offer_statistic": "list",
        },
        source=f"{PROVIDER} instance types",
    )


FEED = PriceFeed(
    name="lambda",
    provider=PROVIDER,
    title="Lambda Cloud API instance-types",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
    credential_env=API_KEY_ENV,
)
