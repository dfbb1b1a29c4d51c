"""CoreWeave on-demand GPU instance prices, scraped from its public pricing page (no API exists).

The page has a table of GPU instances — GPU model, GPU count, per-GPU VRAM, vCPUs, RAM, storage and
the instance price per hour ("$49.24"); the price covers the whole node (host vCPU, RAM and local
storage included). We read it with the standard library's `html.parser`, find the table by its
column headers (not by CSS classes, which the site builder renames), and take GPU model, GPU count,
VRAM and instance price by header name; other tables (CPU-only instances, storage) are ignored.

A scrape is only as good as the page's layout, so anything unexpected refuses the capture with
LayoutChanged: no table with those headers, a price or count that is not a number, or fewer than
MIN_ROWS rows. When a VRAM column is present its size is added to the GPU name ("NVIDIA A100" →
"NVIDIA A100 80GB") because CoreWeave's bare "A100" is the 80GB part.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal, InvalidOperation
from html.parser import HTMLParser

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed, naming_provider, offers_frame

PROVIDER = "CoreWeave"
BASE_URL_ENV = "FINOPS_COREWEAVE_BASE_URL"
DEFAULT_BASE_URL = "https://www.coreweave.com"
PATH = "/pricing"
MIN_ROWS = 4
"""CoreWeave lists about ten GPU instance types; fewer than this means the page is not what we know."""
MODEL_HEADER = "gpu model"
COUNT_HEADER = "gpu count"
PRICE_HEADER = "instance price"
VRAM_HEADER = "vram"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    store.save("pricing.html", url, client.get(url).content)


class _Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts (header cells included), whitespace collapsed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._depth = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self.tables.append([])
        elif self._depth == 1 and tag == "tr":
            self._row = []
        elif self._depth == 1 and tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth = max(0, self._depth - 1)
        elif self._depth == 1 and tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif self._depth == 1 and tag == "tr" and self._row is not None:
            if self._row:
                self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _header_index(header: list[str], wanted: str) -> int | None:
    matches = [i for i, name in enumerate(header) if name.lower().startswith(wanted)]
    return matches[0] if matches else None


_MONEY = re.compile(r"^\$\s?([0-9][0-9,]*(?:\.[0-9]+)?)(?:\s*(?:/\s*(?:hr|hour)|per hour))?$", re.IGNORECASE)


def _price(text: str, where: str) -> Decimal:
    match = _MONEY.match(text.strip())
    if not match:
        raise LayoutChanged(f"{where}: instance price {text!r} is not a dollar amount")
    return Decimal(match.group(1).replace(",", ""))


def _number(text: str, where: str) -> Decimal:
    try:
        value = Decimal(text.replace(",", "").strip())
    except InvalidOperation as error:
        raise LayoutChanged(f"{where}: {text!r} is not a number") from error
    if not value.is_finite() or value <= 0:
        raise LayoutChanged(f"{where}: {text!r} is not a positive number")
    return value


def _parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in ("gpu_name", "gpu_count", "price", "sku", "source_url")}
    for payload in payloads:
        try:
            html = payload.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: not UTF-8 HTML ({error})") from error
        tables = _Tables()
        tables.feed(html)
        tables.close()
        found = False
        for table in tables.tables:
            header = table[0] if table else []
            model_at, count_at, price_at = (
                _header_index(header, wanted) for wanted in (MODEL_HEADER, COUNT_HEADER, PRICE_HEADER)
            )
            if model_at is None or count_at is None or price_at is None:
                continue
            found = True
            vram_at = _header_index(header, VRAM_HEADER)
            for number, row in enumerate(table[1:], start=1):
                where = f"{PROVIDER}: {payload.source_url}: GPU table row {number}"
                if len(row) != len(header):
                    raise LayoutChanged(f"{where}: {len(row)} cells under {len(header)} headers")
                model = row[model_at]
                if not model:
                    raise LayoutChanged(f"{where}: no GPU model")
                vram = _number(row[vram_at], where) if vram_at is not None else None
                columns["gpu_name"].append(f"{model} {vram.normalize():f}GB" if vram is not None else model)
                columns["gpu_count"].append(_number(row[count_at], where))
                columns["price"].append(_price(row[price_at], where))
                columns["sku"].append(model)
                columns["source_url"].append(payload.source_url)
        if not found:
            raise LayoutChanged(
                f"{PROVIDER}: {payload.source_url}: no table with the columns GPU Model, GPU Count and Instance Price; "
                "the pricing page's layout changed"
            )
    count = len(columns["price"])
    if count < MIN_ROWS:
        raise LayoutChanged(
            f"{PROVIDER}: only {count} GPU instance row(s) on the pricing page (expected at least {MIN_ROWS}); "
            "refusing a partial scrape"
        )
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
        source=f"{PROVIDER} pricing page",
    )


parse = naming_provider(PROVIDER, _parse)
"""The offers of one capture; every LayoutChanged names the provider (and the URL where it has one)."""

FEED = PriceFeed(
    name="coreweave",
    provider=PROVIDER,
    title="CoreWeave GPU cloud pricing page (HTML)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
