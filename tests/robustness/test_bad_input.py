"""Every billing parser in the registry against broken and hostile files.

Each case starts from a small valid delivery of the source (a seed, loaded first so the warehouse
has content to protect), breaks it one way, and runs it through the same ingest path a real run
takes. Every case must be rejected with a message naming the file (and the row and column where
the problem has one), moved to quarantine with a reason file, and leave every warehouse table
exactly as it was.

A source added to `BILLING_SOURCES` without a seed here fails `test_every_source_has_a_seed`, so
no parser escapes the suite.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import logging
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.catalog.billing import BILLING_SOURCES, SOURCES_BY_NAME
from pipelines.lib.catalog.prices import PRICE_FEEDS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.prices.market_prices import bundled_snapshot
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.prices.offers import LayoutChanged, PayloadStore, PriceFeed
from tests.support import FIXTURES_ROOT
from tests.support.focus_fixtures import csv_bytes, focus_rows
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT
TEN_MB = 10 * 1024 * 1024
log = logging.getLogger("test_bad_input")


@dataclass(frozen=True)
class Seed:
    """A small valid delivery of one source and where its facts live (columns as spelled in the file)."""

    file_name: str
    content: Callable[[], bytes]
    usage_column: str
    """A quantity that must not be negative on the row `is_usage_row` picks."""
    date_column: str
    text_column: str
    cost_column: str
    line_item_id: str | None
    """The column that identifies a line within a delivery; None where the format has none."""
    is_usage_row: Callable[[dict], bool] = lambda row: True
    json_lines: bool = False
    """Newline-delimited JSON (Google) instead of CSV; nested fields as `a.b` paths."""


def _fixture(relative: str) -> Callable[[], bytes]:
    return lambda: (FIXTURES / relative).read_bytes()


def _focus_seed() -> bytes:
    usage = {"ConsumedQuantity": "24", "ConsumedUnit": "Hours"}
    return csv_bytes(focus_rows(usage, usage | {"BilledCost": "1.5", "ChargeDescription": "storage"}))


SEEDS: dict[str, Seed] = {
    "focus": Seed(
        "focus-2026-09.csv",
        _focus_seed,
        usage_column="ConsumedQuantity",
        date_column="ChargePeriodStart",
        text_column="ChargeDescription",
        cost_column="BilledCost",
        line_item_id=None,
        is_usage_row=lambda row: row["ChargeCategory"] == "Usage",
    ),
    "aws_cur": Seed(
        "cur-legacy.csv",
        _fixture("aws/focus-converters/aws_legacy_cur_sample.csv"),
        usage_column="lineItem/UsageAmount",
        date_column="lineItem/UsageStartDate",
        text_column="lineItem/LineItemDescription",
        cost_column="lineItem/UnblendedCost",
        line_item_id="identity/LineItemId",
        is_usage_row=lambda row: row["lineItem/LineItemType"] == "Usage",
    ),
    "azure_actual": Seed(
        "mca-actual.csv",
        _fixture("azure/mca_actualcost_2026-10.csv"),
        usage_column="quantity",
        date_column="date",
        text_column="meterName",
        cost_column="costInBillingCurrency",
        line_item_id=None,
        is_usage_row=lambda row: row["chargeType"] == "Usage",
    ),
    "azure_amortized": Seed(
        "ea-amortized.csv",
        _fixture("azure/ea_amortizedcost_2026-09.csv"),
        usage_column="Quantity",
        date_column="Date",
        text_column="MeterName",
        cost_column="Cost",
        line_item_id=None,
        is_usage_row=lambda row: row["ChargeType"] == "Usage",
    ),
    "gcp_billing": Seed(
        "gcp-export.jsonl",
        _fixture("gcp/gcp_billing_export_resource_v1.jsonl"),
        usage_column="usage.amount",
        date_column="usage_start_time",
        text_column="sku.description",
        cost_column="cost",
        line_item_id=None,
        is_usage_row=lambda row: row["cost_type"] == "regular",
        json_lines=True,
    ),
    "oci_cost": Seed(
        "oci-cost.csv",
        _fixture("focus-converters/oci_cost_report_sample.csv"),
        usage_column="usage/billedQuantity",
        date_column="lineItem/intervalUsageStart",
        text_column="product/Description",
        cost_column="cost/myCost",
        line_item_id="lineItem/referenceNo",
        is_usage_row=lambda row: row["lineItem/isCorrection"] == "false",
    ),
    "gpu_cloud_usage": Seed(
        "lambda-2026-09.csv",
        _fixture("gpu_clouds/usage-2026-09/lambda.csv"),
        usage_column="usage_hours",
        date_column="usage_start",
        text_column="description",
        cost_column="cost",
        line_item_id="resource_id",
    ),
    "onprem_gpu_assets": Seed(
        "inventory.csv",
        _fixture("onprem/inventory.csv"),
        usage_column="gpu_count",
        date_column="purchase_date",
        text_column="hostname",
        cost_column="purchase_price",
        line_item_id="asset_id",
    ),
}


# --- reading and writing a seed's rows -------------------------------------------------------------


def _rows(seed: Seed) -> tuple[list[str], list[dict]]:
    content = seed.content()
    if seed.json_lines:
        rows = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        return list(rows[0]), rows
    reader = csv.DictReader(io.StringIO(content.decode("utf-8-sig")))
    return list(reader.fieldnames or []), list(reader)


def _serialise(seed: Seed, header: list[str], rows: list[dict]) -> bytes:
    if seed.json_lines:
        return "".join(json.dumps(row) + "\n" for row in rows).encode()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _set(seed: Seed, row: dict, column: str, value: object) -> None:
    if seed.json_lines:
        *parents, leaf = column.split(".")
        for parent in parents:
            row = row[parent]
        row[leaf] = value
    else:
        row[column] = str(value)


def _edit_first(seed: Seed, column: str, value: object, pick: Callable[[dict], bool] = lambda row: True) -> bytes:
    header, rows = _rows(seed)
    index = next(i for i, row in enumerate(rows) if pick(row))
    _set(seed, rows[index], column, value)
    return _serialise(seed, header, rows)


def _first_row_number(seed: Seed, pick: Callable[[dict], bool]) -> int:
    return next(i for i, row in enumerate(_rows(seed)[1], start=1) if pick(row))


# --- the bad inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    suffix: str
    build: Callable[[Seed], bytes]
    row: Callable[[Seed], int | None] = lambda seed: None
    """The row the rejection must name, with a column (None: the problem is the whole file)."""
    applies: Callable[[Seed], bool] = lambda seed: True
    says: str = ""
    """Text the reason must contain (besides the file name), where every source words it the same."""


def _truncated_gzip(seed: Seed) -> bytes:
    compressed = gzip.compress(seed.content(), mtime=0)
    return compressed[: len(compressed) // 2]


def _header_only(seed: Seed) -> bytes:
    if seed.json_lines:
        return b""
    return seed.content().decode("utf-8-sig").splitlines()[0].encode() + b"\n"


def _wrong_delimiter(seed: Seed) -> bytes:
    header, rows = _rows(seed)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter=";", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _utf16_spreadsheet(seed: Seed) -> bytes:
    """What "Save as Unicode text" in a spreadsheet writes: UTF-16 LE with a BOM, tab-delimited."""
    if seed.json_lines:
        return seed.content().decode().encode("utf-16")
    header, rows = _rows(seed)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter="\t", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-16")


def _binary_garbage(seed: Seed) -> bytes:
    return random.Random(7).randbytes(64 * 1024)


def _huge_field(seed: Seed) -> bytes:
    return _edit_first(seed, seed.text_column, "x" * TEN_MB)


_DATE = re.compile(r"^(\d{4})-\d{2}-\d{2}|^\d{2}/\d{2}/(\d{4})")


def _date_out_of_range(seed: Seed) -> bytes:
    """Every date of the first row moved to the year 2999 (spelled as the file spells dates), so the
    row stays consistent (start before end) and only the range is wrong."""
    header, rows = _rows(seed)
    first = rows[0]
    assert _DATE.match(str(first[seed.date_column])), first[seed.date_column]
    for column, value in first.items():
        match = _DATE.match(value) if isinstance(value, str) else None
        if match:
            group = 1 if match.group(1) else 2
            first[column] = value[: match.start(group)] + "2999" + value[match.end(group) :]
    return _serialise(seed, header, rows)


def _negative_usage(seed: Seed) -> bytes:
    value: object = -5 if seed.json_lines else "-5"
    return _edit_first(seed, seed.usage_column, value, seed.is_usage_row)


def _duplicated_line_item_id(seed: Seed) -> bytes:
    """The first line delivered twice: its id (and every other value) on a second line."""
    header, rows = _rows(seed)
    return _serialise(seed, header, [rows[0], dict(rows[0]), *rows[1:]])


def _parquet_changed_schema(seed: Seed) -> bytes:
    """The seed as Parquet with the cost column renamed and the usage column turned into a list."""
    header, rows = _rows(seed)
    if seed.json_lines:
        frame = pl.read_ndjson(io.BytesIO(seed.content()))
    else:
        frame = pl.DataFrame(
            {column: [row[column] for row in rows] for column in header}, schema=dict.fromkeys(header, pl.String)
        )
    top_level_cost = seed.cost_column.split(".")[0]
    frame = frame.rename({top_level_cost: f"{top_level_cost}_v2"})
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


CASES = (
    Case("truncated_gzip", ".gz", _truncated_gzip),
    Case("header_only", "", _header_only),
    Case("wrong_delimiter", "", _wrong_delimiter, applies=lambda seed: not seed.json_lines),
    Case("utf16_spreadsheet_export", "", _utf16_spreadsheet),
    Case("binary_garbage", "", _binary_garbage),
    Case("ten_mb_field", "", _huge_field, row=lambda seed: 1, says="bytes; the limit is"),
    Case("date_out_of_range", "", _date_out_of_range, row=lambda seed: 1, says="plausible range"),
    Case(
        "negative_usage",
        "",
        _negative_usage,
        row=lambda seed: _first_row_number(seed, seed.is_usage_row),
    ),
    Case(
        "duplicated_line_item_id",
        "",
        _duplicated_line_item_id,
        row=lambda seed: 2,
        applies=lambda seed: seed.line_item_id is not None,
        says="earlier",
    ),
    Case("parquet_changed_schema", ".parquet", _parquet_changed_schema),
)


NEGATIVE_USAGE_WARNS = {
    "focus": "ConsumedQuantity",
    "aws_cur": "line_item_usage_amount",
    "azure_actual": "Quantity",
    "azure_amortized": "Quantity",
    "gcp_billing": "usage_amount",
    "oci_cost": "usage_billed_quantity",
}
"""Providers' exports, where a negative quantity on a usage line loads with a warning (FOCUS allows any
decimal; docs/data-quality.md), and the raw column warned about. The project's own contracts (GPU cloud
usage, on-prem inventory) reject it."""


def _params():
    for source in BILLING_SOURCES:
        seed = SEEDS.get(source.name)
        if seed is None:
            continue
        for case in CASES:
            if case.name == "negative_usage" and source.name in NEGATIVE_USAGE_WARNS:
                continue
            if case.applies(seed):
                yield pytest.param(source.name, case, id=f"{source.name}-{case.name}")


# --- the tests ------------------------------------------------------------------------------------


def _ingest(home: FinopsHome, source_name: str):
    source = SOURCES_BY_NAME[source_name]
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, source, log=log)


def test_every_source_has_a_seed():
    assert {source.name for source in BILLING_SOURCES} == set(SEEDS)


@pytest.fixture(scope="module")
def seeded_homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per source, a FINOPS_HOME whose warehouse holds the seed, loaded once and copied per test."""
    homes: dict[str, Path] = {}
    for name, seed in SEEDS.items():
        folder = tmp_path_factory.mktemp(f"seeded-{name}")
        home = FinopsHome(folder / "home").create_folders()
        good = folder / seed.file_name
        good.write_bytes(seed.content())
        register(home, name, good)
        results = _ingest(home, name)
        assert [result.status for result in results] == ["loaded"], results
        homes[name] = home.root
    return homes


def _copy_of(seeded: Path, tmp_path: Path) -> FinopsHome:
    target = tmp_path / "home"
    shutil.copytree(seeded, target)
    return FinopsHome(target)


@pytest.mark.parametrize(("source_name", "case"), list(_params()))
def test_bad_input_is_rejected_quarantined_and_changes_nothing(
    tmp_path: Path, seeded_homes: dict[str, Path], source_name: str, case: Case
):
    home = _copy_of(seeded_homes[source_name], tmp_path)
    seed = SEEDS[source_name]
    table = SOURCES_BY_NAME[source_name].raw_table.name
    assert query(home.warehouse, f"select count(*) from {table}")[0][0] > 0  # content to protect
    before = table_fingerprint(home.warehouse)

    stem, _, extension = seed.file_name.rpartition(".")
    bad_name = f"{stem}-{case.name}.{extension}{case.suffix}".replace(f".{extension}.parquet", ".parquet")
    bad = tmp_path / bad_name
    bad.write_bytes(case.build(seed))
    delivery = register(home, source_name, bad)

    results = [result for result in _ingest(home, source_name) if result.delivery == delivery.name]
    assert [result.status for result in results] == ["rejected"], results
    reason = results[0].reason
    assert delivery.name in reason, reason
    assert case.says in reason, reason
    row = case.row(seed)
    if row is not None:
        assert f"row {row}" in reason, reason
        assert ", column " in reason, reason

    assert table_fingerprint(home.warehouse) == before
    assert not delivery.path.exists()
    quarantined = home.quarantine / source_name / delivery.path.name
    assert quarantined.exists()
    reason_file = (home.quarantine / source_name / f"{delivery.path.name}.reason.txt").read_text()
    assert f"file: {delivery.name}" in reason_file
    if row is not None:
        assert f"row: {row}" in reason_file and "column: -" not in reason_file


@pytest.mark.parametrize("source_name", sorted(NEGATIVE_USAGE_WARNS))
def test_negative_usage_in_a_provider_export_loads_with_one_warning_naming_file_row_and_column(
    tmp_path: Path, seeded_homes: dict[str, Path], source_name: str
):
    home = _copy_of(seeded_homes[source_name], tmp_path)
    seed = SEEDS[source_name]
    stem, _, extension = seed.file_name.rpartition(".")
    odd = tmp_path / f"{stem}-negative_usage.{extension}"
    odd.write_bytes(_negative_usage(seed))
    delivery = register(home, source_name, odd)

    (result,) = [result for result in _ingest(home, source_name) if result.delivery == delivery.name]
    assert result.status == "loaded", result
    (warning,) = result.warnings
    assert warning["column"] == NEGATIVE_USAGE_WARNS[source_name]
    assert warning["rule"].startswith(f"{NEGATIVE_USAGE_WARNS[source_name]} is not negative")
    assert warning["rows"] == 1
    assert warning["example"] == f"{delivery.name} row {_first_row_number(seed, seed.is_usage_row)}"
    recorded = query(
        home.warehouse,
        "select q.severity, q.passed, q.unexpected_count, q.example_row from audit.quality_results q "
        f"join audit.loads l using (load_id) where l.delivery = '{delivery.name}' and not q.passed",
    )
    assert recorded == [("warning", False, 1, _first_row_number(seed, seed.is_usage_row))]


# --- market-price feeds -----------------------------------------------------------------------------
# Price feeds parse stored API payloads, not deliveries; the same breaks apply to every feed in the
# registry (a feed added to PRICE_FEEDS is covered without a change here). Each must end in
# LayoutChanged naming the payload's URL or provider: never a KeyError, a TypeError or an empty frame. (A UTF-16
# JSON payload is not among them: Python's JSON reader decodes it correctly, so it is not bad input.)

PAYLOAD_BREAKS: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda good: b"",
    "binary_garbage": lambda good: random.Random(11).randbytes(4096),
    "truncated": lambda good: good[: len(good) // 2],
    "json_array": lambda good: b"[]",
    "json_without_the_expected_keys": lambda good: b'{"unexpected": {"shape": true}}',
}


def _feed_params():
    for feed in PRICE_FEEDS:
        for name in PAYLOAD_BREAKS:
            yield pytest.param(feed, name, id=f"{feed.name}-{name}")


@pytest.mark.parametrize(("feed", "break_name"), list(_feed_params()))
def test_price_feed_parsers_refuse_broken_payloads(tmp_path: Path, feed: PriceFeed, break_name: str):
    capture = bundled_snapshot(feed, date(2100, 1, 1))
    copy = tmp_path / "capture"
    shutil.copytree(capture, copy)
    store, observed_at = PayloadStore.read(copy)
    assert feed.parse(store.payloads, observed_at).height > 0  # the unbroken capture parses
    broken = store.payloads[0]
    good = broken.read_bytes()
    content = PAYLOAD_BREAKS[break_name](good)
    broken.path.write_bytes(gzip.compress(content) if broken.path.suffix == ".gz" else content)
    with pytest.raises(LayoutChanged) as refused:
        feed.parse(store.payloads, observed_at)
    # Named by the payload's URL, or (a one-page scrape) by its provider.
    assert broken.source_url in str(refused.value) or str(refused.value).startswith(feed.provider)
