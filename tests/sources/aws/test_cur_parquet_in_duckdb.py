"""CUR Parquet is typed by DuckDB alone: streamed as one query or read file by file, the same raw table and
the same rejections, and the values a CSV file holds as text are typed as the CSV reader types them.

The part files are written with pyarrow in the CUR 2.0 Data Exports layout (snake_case columns, doubles for
costs, some rates as text, timestamps, MAP columns), then broken one way at a time; each case states the
values and messages it expects, worked out from the rows written.
"""

from __future__ import annotations

import csv
import math
import shutil
from datetime import date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.lib.catalog.billing import AWS_CUR
from sources.aws import cur_parquet
from sources.aws.deliveries import delivered_files, parse_cur_delivery, parse_file_by_file, read_cur_file
from sources.common.delivery import TypedQuery
from sources.common.errors import RejectedInput
from sources.common.typed_sql import typed_sql
from sources.common.types import Kind
from synthetic_data import scale
from tests.support import aws_fixtures
from tests.support.typed_parts_helpers import BothReaders, set_value

SCHEMA = pa.schema(
    [
        ("identity_line_item_id", pa.string()),
        ("identity_time_interval", pa.string()),
        ("bill_payer_account_id", pa.string()),
        ("bill_billing_period_start_date", pa.timestamp("ms", tz="UTC")),
        ("bill_billing_period_end_date", pa.timestamp("ms", tz="UTC")),
        ("line_item_usage_account_id", pa.string()),
        ("line_item_line_item_type", pa.string()),
        ("line_item_usage_start_date", pa.timestamp("ms", tz="UTC")),
        ("line_item_usage_end_date", pa.timestamp("ms", tz="UTC")),
        ("line_item_line_item_description", pa.string()),
        ("line_item_usage_amount", pa.float64()),
        ("line_item_unblended_rate", pa.string()),
        ("line_item_unblended_cost", pa.float64()),
        ("line_item_currency_code", pa.string()),
        ("line_item_tax_type", pa.null()),
        ("product", pa.map_(pa.string(), pa.string())),
        ("resource_tags", pa.map_(pa.string(), pa.string())),
        ("discount", pa.map_(pa.string(), pa.float64())),
        ("resource_tags_user_cost_center", pa.string()),
    ]
)
START = datetime(2026, 9, 1)
_NOT_IN_TEXT = ("resource_tags", "discount", "line_item_tax_type")
TEXT_SCHEMA = pa.schema([(field.name, pa.string()) for field in SCHEMA if field.name not in _NOT_IN_TEXT])
"""The layout with every column as text, as a CSV export holds it (the MAP column `product` as JSON text)."""


def _row(number: int) -> dict:
    hour = datetime(2026, 9, 1 + number // 24, number % 24)
    return {
        "identity_line_item_id": f"line-{number}",
        "identity_time_interval": "2026-09-01T00:00:00Z/2026-10-01T00:00:00Z",
        "bill_payer_account_id": "111122223333",
        "bill_billing_period_start_date": START,
        "bill_billing_period_end_date": datetime(2026, 10, 1),
        "line_item_usage_account_id": "444455556666",
        "line_item_line_item_type": "Usage",
        "line_item_usage_start_date": hour,
        "line_item_usage_end_date": hour.replace(minute=59, second=59),
        "line_item_line_item_description": f"$98.32 per On Demand Linux p5.48xlarge Instance {number}",
        "line_item_usage_amount": 1.0,
        "line_item_unblended_rate": "98.32",
        "line_item_unblended_cost": 98.32 + number / 1000,
        "line_item_currency_code": "USD",
        "line_item_tax_type": None,
        "product": [("region", "us-east-1"), ("instance_type", "p5.48xlarge")],
        "resource_tags": [("user_team", "research")] if number % 2 else [],
        "discount": [("bundled_discount", -0.25)] if number % 3 == 0 else None,
        "resource_tags_user_cost_center": "cc-1" if number % 4 == 0 else None,
    }


def write_part(path: Path, rows: list[dict], schema: pa.Schema = SCHEMA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


CUR = BothReaders(
    AWS_CUR, delivered_files, cur_parquet.parquet_parts, cur_parquet.parse_cur_parquet, parse_file_by_file
)


def both_ways(folder: Path) -> tuple[object, object]:
    return CUR.outcomes(folder)


def test_a_clean_delivery_reads_the_same_both_ways_including_blanks_nulls_and_zones(tmp_path: Path):
    rows = [_row(number) for number in range(60)]
    rows[5]["line_item_line_item_description"] = "   "  # blank: null
    rows[6]["line_item_line_item_description"] = "NULL"  # a null literal: null
    rows[7]["line_item_line_item_description"] = "\u00a0\u2003"  # Unicode blank: null
    rows[8]["line_item_line_item_description"] = "  kept with its spaces  "
    rows[9]["line_item_unblended_rate"] = " 1e-5 "
    rows[10]["line_item_unblended_cost"] = 1.5e-7  # prints as 1.5e-07 in DuckDB: the decimal 1.5E-7
    rows[11]["resource_tags"] = [("user_team", 'quote " and \\ and \n')]
    write_part(tmp_path / "export" / "part-00001.parquet", rows[:30])
    write_part(tmp_path / "export" / "part-00002.parquet", rows[30:])
    in_duckdb, in_polars = both_ways(tmp_path / "export")
    assert in_duckdb.equals(in_polars)
    by_id = {row["identity_line_item_id"]: row for row in in_duckdb.iter_rows(named=True)}
    assert [by_id[f"line-{n}"]["line_item_line_item_description"] for n in (5, 6, 7)] == [None, None, None]
    assert by_id["line-8"]["line_item_line_item_description"] == "  kept with its spaces  "
    assert str(by_id["line-9"]["line_item_unblended_rate"]) == "0.000010000000"
    assert str(by_id["line-10"]["line_item_unblended_cost"]) == "1.50000E-7"
    assert by_id["line-0"]["discount"] == '{"bundled_discount":-0.25}'
    assert by_id["line-0"]["resource_tags"] == '{"user_cost_center":"cc-1"}'
    assert by_id["line-1"]["resource_tags"] == '{"user_team":"research"}'
    assert by_id["line-2"]["resource_tags"] is None  # an empty map and no per-key value
    assert by_id["line-11"]["resource_tags"] == '{"user_team":"quote \\" and \\\\ and \\n"}'
    assert by_id["line-31"]["_source_file"] == "export/part-00002.parquet"
    assert by_id["line-31"]["_source_row"] == 2


def _broken(tmp_path: Path, change) -> Path:
    rows = [_row(number) for number in range(10)]
    second = [_row(number) for number in range(10, 20)]
    schema = change(rows, second) or SCHEMA
    write_part(tmp_path / "export" / "part-00001.parquet", rows, schema)
    write_part(tmp_path / "export" / "part-00002.parquet", second, schema)
    return tmp_path / "export"


def _as_text_map(first, second):
    for row in first + second:
        row["product"] = '{"region": "us-east-1"}'
    first[3]["product"] = "[1, 2]"
    return SCHEMA.set(SCHEMA.get_field_index("product"), pa.field("product", pa.string()))


def _repeat_line(first, second):
    second[6]["identity_line_item_id"] = "line-2"
    second[8]["identity_line_item_id"] = "line-4"


def _bad_rate_in_two_places(first, second):
    first[4]["line_item_unblended_rate"] = "n/a"
    first[7]["line_item_unblended_rate"] = "1_000"


BROKEN = {
    # what breaks: (how, the message's file, row and column as worked out from the rows written above)
    "a cost that is not a number": (
        set_value(2, 3, "line_item_unblended_cost", math.nan),
        "export/part-00002.parquet, row 3, column line_item_unblended_cost: 'nan' is not a decimal number",
    ),
    "a rate that is not a number, twice": (
        _bad_rate_in_two_places,
        "export/part-00001.parquet, row 5, column line_item_unblended_rate: 'n/a' is not a decimal number",
    ),
    "a required value missing": (
        set_value(1, 7, "line_item_currency_code", None),
        "export/part-00001.parquet, row 7, column line_item_currency_code: must not be empty",
    ),
    "a usage end before its start": (
        set_value(2, 1, "line_item_usage_end_date", datetime(2026, 8, 31)),
        "export/part-00002.parquet, row 1, column line_item_usage_end_date: must not be before the usage start date",
    ),
    "a billing period that ends where it starts": (
        set_value(1, 2, "bill_billing_period_end_date", START),
        "export/part-00001.parquet, row 2, column bill_billing_period_end_date: must be after the billing period",
    ),
    "a line item delivered twice": (
        _repeat_line,
        "export/part-00002.parquet, row 7, column identity_time_interval: the line with identity_line_item_id 'line-2'",
    ),
    "a 2 MB value": (
        set_value(2, 9, "line_item_line_item_description", "x" * 2_000_000),
        "export/part-00002.parquet, row 9, column line_item_line_item_description: line_item_line_item_description "
        "holds a value of 2,000,000 bytes",
    ),
    "a date in the year 2999": (
        set_value(1, 10, "line_item_usage_end_date", datetime(2999, 1, 1)),
        "export/part-00001.parquet, row 10, column line_item_usage_end_date: line_item_usage_end_date "
        "2999-01-01T00:00:00Z is outside the plausible range",
    ),
    "a map column that holds JSON text that is not an object": (
        _as_text_map,
        "export/part-00001.parquet, row 4, column product: '[1, 2]' is not a JSON object",
    ),
}


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_a_broken_file_is_refused_in_the_same_words_both_ways(tmp_path: Path, case: str):
    change, expected = BROKEN[case]
    in_duckdb, in_polars = both_ways(_broken(tmp_path, change))
    assert isinstance(in_duckdb, str), f"DuckDB loaded what it should refuse: {case}"
    assert in_duckdb == in_polars
    assert in_duckdb.startswith(expected)


def test_the_repeated_line_and_the_bad_rate_count_every_row_like_them(tmp_path: Path):
    in_duckdb, _ = both_ways(_broken(tmp_path / "a", _repeat_line))
    assert in_duckdb.endswith("(1 more row(s) like it)")
    in_duckdb, _ = both_ways(_broken(tmp_path / "b", _bad_rate_in_two_places))
    assert in_duckdb.endswith("(1 more row(s) like it)")


def test_timestamps_held_as_text_are_parsed_in_duckdb_and_an_impossible_date_is_refused(tmp_path: Path):
    """Timestamps held as text (Athena exports of some tools) are read in the spellings of DATETIME_FORMATS."""
    as_text = SCHEMA.set(
        SCHEMA.get_field_index("line_item_usage_start_date"), pa.field("line_item_usage_start_date", pa.string())
    )
    spellings = ["2026-09-01T00:00:00Z", "2026-09-01 01:00:00", "2026-09-01T04:00:00+02:00", " 2026-09-01T03:00Z "]
    rows = [_row(number) | {"line_item_usage_start_date": text} for number, text in enumerate(spellings)]
    write_part(tmp_path / "export" / "part-00001.parquet", rows, as_text)
    target = CUR.delivery(tmp_path / "export")
    parsed = parse_cur_delivery(target)
    assert isinstance(parsed.frame, TypedQuery)
    assert parsed.to_polars().sort("_source_row")["line_item_usage_start_date"].to_list() == [
        datetime(2026, 9, 1, 0),
        datetime(2026, 9, 1, 1),
        datetime(2026, 9, 1, 2),
        datetime(2026, 9, 1, 3),
    ]
    rows[2]["line_item_usage_start_date"] = "2026-09-31T00:00:00Z"  # no such day
    write_part(tmp_path / "export" / "part-00001.parquet", rows, as_text)
    with pytest.raises(RejectedInput) as refused:
        parse_cur_delivery(target)
    assert refused.value.describe().startswith(
        "export/part-00001.parquet, row 3, column line_item_usage_start_date: '2026-09-31T00:00:00Z' is not an ISO"
    )


def test_text_in_parquet_is_typed_as_the_same_text_in_csv(tmp_path: Path):
    """One contract, two formats: the same text values, in a Parquet file and in a CSV file, type the same."""
    texts = {
        "line_item_line_item_description": ["   ", "NULL", "\u00a0\u2003", "  kept with its spaces  ", "x"],
        "line_item_unblended_rate": [" 1e-5 ", "98.32", "0.1", "-3", "12345678901234.123456789012"],
        "line_item_usage_start_date": [
            "2026-09-01T00:00:00Z",
            "2026-09-01 01:00:00",
            "2026-09-01T04:00:00+02:00",
            " 2026-09-01T03:00Z ",
            "2026-09-01T04:00:00.123456789Z",
        ],
        "product": ['{"region": "us-east-1"}', " {} ", "NULL", '{"a":"b","c":"d"}', '{"x": "1"}'],
    }
    rows = [
        {column: str(_row(number)[column]) for column in TEXT_SCHEMA.names if _row(number)[column] is not None}
        | {column: values[number] for column, values in texts.items()}
        for number in range(5)
    ]
    parquet = write_part(tmp_path / "part-00001.parquet", rows, TEXT_SCHEMA)
    csv_file = tmp_path / "part-00001.csv"
    with csv_file.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=TEXT_SCHEMA.names)
        writer.writeheader()
        writer.writerows(rows)
    from_parquet = read_cur_file(parquet, source_file="part").drop("_cur_format")
    from_csv = read_cur_file(csv_file, source_file="part").drop("_cur_format")
    assert from_parquet.equals(from_csv)
    assert from_csv["line_item_line_item_description"].to_list() == [None, None, None, "  kept with its spaces  ", "x"]
    assert [str(value) for value in from_csv["line_item_unblended_rate"]] == [
        "0.000010000000",
        "98.320000000000",
        "0.100000000000",
        "-3.000000000000",
        "12345678901234.123456789012",
    ]
    assert from_csv["line_item_usage_start_date"].to_list() == [
        datetime(2026, 9, 1, 0),
        datetime(2026, 9, 1, 1),
        datetime(2026, 9, 1, 2),
        datetime(2026, 9, 1, 3),
        datetime(2026, 9, 1, 4, 0, 0, 123456),
    ]
    assert from_csv["product"].to_list() == ['{"region": "us-east-1"}', None, None, '{"a":"b","c":"d"}', '{"x": "1"}']


@pytest.mark.parametrize("fixture", ["cur2-parquet", "legacy-athena"])
def test_the_aws_fixtures_load_the_same_raw_table_both_ways(tmp_path: Path, fixture: str):
    source = aws_fixtures.FIXTURES / fixture
    landing = tmp_path / "landing"
    shutil.copytree(source, landing / fixture)
    rows = CUR.assert_same_raw_table(tmp_path, landing / fixture)
    assert rows > 0


@pytest.mark.slow
def test_a_generated_million_line_month_loads_the_same_raw_table_both_ways(tmp_path: Path):
    """One month of a million CUR 2.0 line items (two part files), as the benchmark generates them."""
    written = scale.write_cur2(tmp_path / "data", rows=1_000_000, start=date(2025, 1, 1), days=31)
    assert len(written) == 1 and written[0].rows > 999_000  # rows per day are whole: 32,258 × 31
    assert CUR.assert_same_raw_table(tmp_path, written[0].path) == written[0].rows


def test_a_zoned_timestamp_becomes_its_utc_wall_time_whatever_the_session_time_zone():
    """Parquet stores zoned timestamps as UTC instants; DuckDB's CAST would show them in the session's zone."""
    expression = typed_sql("usage_start", "TIMESTAMP WITH TIME ZONE", Kind.DATETIME)
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'America/New_York'")
        stored = "SELECT TIMESTAMPTZ '2026-09-01 00:30:00.25+00' AS usage_start"
        assert con.execute(f"SELECT {expression} FROM ({stored})").fetchall() == [
            (datetime(2026, 9, 1, 0, 30, 0, 250000),)
        ]
