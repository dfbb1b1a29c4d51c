"""FOCUS Parquet is typed by DuckDB alone: streamed as one query or read file by file (as in a delivery that
mixes formats), the same raw table and the same rejections. The part files follow AWS's
FOCUS_1_2_AWS Data Export (tests/sources/aws/test_focus_aws_export.py): doubles for money, zoned
timestamps, `Tags` and `SkuPriceDetails` as MAP columns and AWS's `x_` columns, one of them a map of doubles.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.lib.catalog.billing import FOCUS
from sources.common.delivery import TypedQuery
from sources.focus import parquet
from sources.focus.deliveries import delivered_files, derived_value_warnings, parse_file_by_file, parse_focus_delivery
from synthetic_data import scale
from tests.sources.aws.test_focus_aws_export import CURRENT_ROWS, SCHEMA, p5_spot, write_export
from tests.support.typed_parts_helpers import BothReaders, set_value

READERS = BothReaders(FOCUS, delivered_files, parquet.parquet_parts, parquet.parse_focus_parquet, parse_file_by_file)


def write_part(path: Path, rows: list[dict], schema: pa.Schema = SCHEMA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([{c: row.get(c) for c in schema.names} for row in rows], schema), path)
    return path


def test_the_aws_focus_export_loads_the_same_raw_table_both_ways(tmp_path: Path):
    export = write_export(tmp_path / "landing")
    assert READERS.assert_same_raw_table(tmp_path, export) == len(CURRENT_ROWS)  # the stale refresh is not read


def test_extensions_keep_blank_text_and_focus_columns_do_not(tmp_path: Path):
    rows = [p5_spot(254.0 + n) for n in range(6)]
    rows[1]["x_Operation"] = "   "  # kept as written in x_extensions: FOCUS says nothing of provider columns
    rows[2]["SubAccountName"] = "  "  # a FOCUS text column: blank is null
    rows[3]["x_Operation"] = "NULL"  # the literal NULL is null everywhere
    rows[4]["Tags"] = []  # an empty map is an empty object
    rows[5]["RegionName"] = "\u00a0"  # a Unicode blank
    write_part(tmp_path / "export" / "part-00001.parquet", rows)
    in_duckdb, in_polars = READERS.outcomes(tmp_path / "export")
    assert in_duckdb.equals(in_polars)
    extensions = in_duckdb["x_extensions"].to_list()
    assert extensions[0] == '{"x_Discounts":null,"x_Operation":"RunInstances:SV002","x_ServiceCode":"AmazonEC2"}'
    assert '"x_Operation":"   "' in extensions[1]
    assert '"x_Operation":null' in extensions[3]
    assert in_duckdb["SubAccountName"][2] is None
    assert in_duckdb["RegionName"][5] is None
    assert in_duckdb["Tags"][4] == "{}"
    assert in_duckdb["Tags"][0] == '{"user:team":"research","aws:createdBy":"AssumedRole:trainer"}'


def _broken(tmp_path: Path, change, schema: pa.Schema = SCHEMA) -> Path:
    first = [p5_spot(float(n)) for n in range(1, 6)]
    second = [p5_spot(float(n)) for n in range(6, 11)]
    change(first, second)
    write_part(tmp_path / "export" / "part-00001.parquet", first, schema)
    write_part(tmp_path / "export" / "part-00002.parquet", second, schema)
    return tmp_path / "export"


def _as_text(column: str) -> pa.Schema:
    return SCHEMA.set(SCHEMA.get_field_index(column), pa.field(column, pa.string()))


def _text_costs(first, second):
    for row in first + second:
        row["ListUnitPrice"] = str(row["ListUnitPrice"])
    second[1]["ListUnitPrice"] = "  "


def _text_tags(first, second):
    for row in first + second:
        row["Tags"] = '{"user:team": "research"}'
    first[2]["Tags"] = "team=research"


BROKEN = {
    "a cost that is not a number": (
        set_value(2, 4, "BilledCost", math.inf),
        SCHEMA,
        "export/part-00002.parquet, row 4, column BilledCost: 'inf' is not a decimal number",
    ),
    # FOCUS files are typed as written: a blank where a number belongs is not a null
    "a blank unit price in a text column": (
        _text_costs,
        _as_text("ListUnitPrice"),
        "export/part-00002.parquet, row 2, column ListUnitPrice: '  ' is not a decimal number",
    ),
    "a ChargeCategory the spec does not know": (
        set_value(1, 3, "ChargeCategory", "Refund"),
        SCHEMA,
        "export/part-00001.parquet, row 3, column ChargeCategory: ChargeCategory must be one of Adjustment, Credit, "
        "Purchase, Tax, Usage (found 'Refund')",
    ),
    "no provider at all": (
        set_value(2, 5, "ProviderName", None),
        SCHEMA,
        "export/part-00002.parquet, row 5, column ProviderName: ProviderName must not be empty (nor "
        "ServiceProviderName",
    ),
    "a mandatory value missing": (
        set_value(1, 1, "BillingCurrency", None),
        SCHEMA,
        "export/part-00001.parquet, row 1, column BillingCurrency: BillingCurrency must not be empty",
    ),
    "a charge that ends before it starts": (
        set_value(1, 5, "ChargePeriodEnd", datetime(2026, 5, 1)),
        SCHEMA,
        # the value as the spec writes a date-time, not a Python repr (`datetime.datetime(2026, 5, 1, 0, 0)`)
        "export/part-00001.parquet, row 5, column ChargePeriodEnd: ChargePeriodEnd must not be before "
        "ChargePeriodStart (found 2026-05-01T00:00:00Z)",
    ),
    "Tags that are not a JSON object": (
        _text_tags,
        _as_text("Tags"),
        "export/part-00001.parquet, row 3, column Tags: 'team=research' is not a JSON object",
    ),
    "a 2 MB description": (
        set_value(2, 1, "ChargeDescription", "y" * 2_000_000),
        SCHEMA,
        "export/part-00002.parquet, row 1, column ChargeDescription: ChargeDescription holds a value of 2,000,000",
    ),
    "a charge in the year 2999": (
        set_value(2, 2, "ChargePeriodEnd", datetime(2999, 5, 3)),
        SCHEMA,
        "export/part-00002.parquet, row 2, column ChargePeriodEnd: ChargePeriodEnd 2999-05-03T00:00:00Z is outside",
    ),
}


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_a_broken_file_is_refused_in_the_same_words_both_ways(tmp_path: Path, case: str):
    change, schema, expected = BROKEN[case]
    in_duckdb, in_polars = READERS.outcomes(_broken(tmp_path, change, schema))
    assert isinstance(in_duckdb, str), f"DuckDB loaded what it should refuse: {case}"
    assert in_duckdb == in_polars
    assert in_duckdb.startswith(expected)


def test_values_the_models_derive_are_recorded_alike_both_ways(tmp_path: Path):
    """Usage a Savings Plan covered, written `Standard` and without a status: either reader warns of the same rows."""
    plan = "arn:aws:savingsplans::111122223333:savingsplan/4f1c7a2e-0d3b-4e5f-9a6b-7c8d9e0f1a2b"
    covered = p5_spot(0.0) | {
        "PricingCategory": "Standard",
        "CommitmentDiscountId": plan,
        "CommitmentDiscountType": "Savings Plan",
    }
    stated = covered | {"PricingCategory": "Committed", "CommitmentDiscountStatus": "Used"}
    write_part(tmp_path / "export" / "part-00001.parquet", [p5_spot(1.0), stated])
    write_part(tmp_path / "export" / "part-00002.parquet", [p5_spot(2.0), covered, covered | {"PricingCategory": None}])
    target = READERS.delivery(tmp_path / "export")
    files = delivered_files(target)
    names = [target.display_name(f) for f in files]
    parts = parquet.parquet_parts(files, names)
    assert parts is not None
    in_duckdb = derived_value_warnings(parquet.parse_focus_parquet(parts), names)
    assert in_duckdb == derived_value_warnings(parse_file_by_file(files, names), names)
    assert [(warning.rule, warning.rows, warning.file, warning.row) for warning in in_duckdb] == [
        ("PricingCategory derived as Committed", 2, "export/part-00002.parquet", 2),
        ("CommitmentDiscountStatus derived", 2, "export/part-00002.parquet", 2),
    ]
    assert parse_focus_delivery(target).warnings == in_duckdb


def test_a_text_timestamp_is_parsed_in_duckdb(tmp_path: Path):
    schema = SCHEMA.set(SCHEMA.get_field_index("ChargePeriodStart"), pa.field("ChargePeriodStart", pa.string()))
    rows = [p5_spot(1.0) | {"ChargePeriodStart": "2026-05-02T00:00:00Z"}]
    write_part(tmp_path / "export" / "part-00001.parquet", rows, schema)
    target = READERS.delivery(tmp_path / "export")
    parsed = parse_focus_delivery(target)
    assert isinstance(parsed.frame, TypedQuery)
    assert parsed.to_polars()["ChargePeriodStart"][0] == datetime(2026, 5, 2)


@pytest.mark.slow
def test_a_generated_million_line_month_loads_the_same_raw_table_both_ways(tmp_path: Path):
    """One month of a million FOCUS 1.2 line items, as the scale generator writes them."""
    written = scale.write_focus(tmp_path / "data", rows=1_000_000, start=date(2025, 1, 1), days=31)
    assert len(written) == 1 and written[0].rows > 999_000
    assert READERS.assert_same_raw_table(tmp_path, written[0].path) == written[0].rows
