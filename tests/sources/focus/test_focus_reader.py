"""The FOCUS reader on the spec's worked examples, real-file quirks and bad input."""

from __future__ import annotations

import csv
import gzip
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sources.common.errors import RejectedInput
from sources.focus import read_focus_file
from tests.support import FIXTURES_ROOT
from tests.support.focus_fixtures import BASE_ROW, focus_rows, write_csv, write_csv_gz

SPEC_EXAMPLES = FIXTURES_ROOT / "focus-spec-examples"
VALID_EXAMPLES = sorted(
    path
    for path in SPEC_EXAMPLES.glob("*.csv")
    if "purchase_scenario_2" not in path.name and "purchase_scenario_3" not in path.name
)


def _csv_sum(path: Path, column: str) -> Decimal:
    with path.open(newline="", encoding="utf-8") as handle:
        return sum(
            (Decimal(row[column]) for row in csv.DictReader(handle) if row[column] not in ("", "null")), Decimal(0)
        )


@pytest.mark.skipif(not SPEC_EXAMPLES.exists(), reason="shared FOCUS examples not present")
@pytest.mark.parametrize("example", VALID_EXAMPLES, ids=lambda p: p.stem)
def test_spec_worked_examples_keep_billed_and_effective_cost_exact(example: Path):
    parsed = read_focus_file(example, require_mandatory=False)
    assert parsed.frame["BilledCost"].sum() == _csv_sum(example, "BilledCost")
    assert parsed.frame["EffectiveCost"].sum() == _csv_sum(example, "EffectiveCost")
    assert parsed.focus_version == "1.1"  # CommitmentDiscountQuantity arrived in 1.1


@pytest.mark.skipif(not SPEC_EXAMPLES.exists(), reason="shared FOCUS examples not present")
def test_spec_examples_amortize_a_purchase_into_effective_cost():
    # A one-year commitment bought up front: billed 8760 once, amortized to 0 on the purchase row,
    # and 1.00 per covered hour on usage rows that are billed 0.
    purchase = read_focus_file(SPEC_EXAMPLES / "commitment_discount_purchase_scenario_1.csv", require_mandatory=False)
    usage = read_focus_file(SPEC_EXAMPLES / "commitment_discount_usage_scenario_1.csv", require_mandatory=False)
    assert purchase.frame.row(0, named=True)["BilledCost"] == Decimal("8760")
    assert purchase.frame.row(0, named=True)["EffectiveCost"] == Decimal("0")
    row = usage.frame.row(0, named=True)
    assert (row["BilledCost"], row["EffectiveCost"], row["CommitmentDiscountStatus"]) == (
        Decimal(0),
        Decimal(1),
        "Used",
    )


@pytest.mark.skipif(not SPEC_EXAMPLES.exists(), reason="shared FOCUS examples not present")
def test_spec_example_with_hour_30_is_rejected_at_its_row_and_column():
    # The published example writes 2023-02-01T30:00:00Z: there is no hour 30.
    with pytest.raises(RejectedInput) as error:
        read_focus_file(SPEC_EXAMPLES / "commitment_discount_purchase_scenario_2.csv", require_mandatory=False)
    assert (error.value.row, error.value.column) == (3, "ChargePeriodEnd")
    assert "2023-02-01T30:00:00Z" in str(error.value)


@pytest.mark.skipif(not SPEC_EXAMPLES.exists(), reason="shared FOCUS examples not present")
def test_partial_files_are_rejected_when_mandatory_columns_are_required():
    with pytest.raises(RejectedInput, match="missing mandatory FOCUS column") as error:
        read_focus_file(SPEC_EXAMPLES / "commitment_discount_usage_scenario_1.csv")
    assert error.value.column == "BillingAccountId"


def test_focus_1_0_csv_with_null_literals_bom_and_unprefixed_extra_column(tmp_path: Path):
    rows = focus_rows({"Id": "line-1", "x_Project": "llm", "RegionId": "NULL"}, {"Id": "line-2", "BilledCost": "0.1"})
    for row in rows:
        del row["SkuPriceDetails"]  # arrived in FOCUS 1.1
    path = write_csv(tmp_path / "google.csv", rows, bom=True)
    parsed = read_focus_file(path)
    frame = parsed.frame
    assert parsed.focus_version == "1.0"
    assert frame["RegionId"].to_list() == [None, None]
    assert frame["ChargeClass"].to_list() == [None, None]
    assert json.loads(frame["x_extensions"][0]) == {"Id": "line-1", "x_Project": "llm"}
    assert frame["BilledCost"].sum() == Decimal("98.42")
    assert frame["_source_row"].to_list() == [1, 2]
    assert frame["ChargePeriodStart"][0] == datetime(2026, 9, 1)


def test_gzip_csv_and_timestamp_spellings(tmp_path: Path):
    path = write_csv_gz(
        tmp_path / "export.csv.gz",
        focus_rows(
            {"ChargePeriodStart": "2026-09-01 00:00:00", "ChargePeriodEnd": "2026-09-01T01:00:00.000Z"},
            {"ChargePeriodStart": "2026-09-01T03:00:00+02:00", "ChargePeriodEnd": "2026-09-01T02:00:00+00:00"},
        ),
    )
    frame = read_focus_file(path).frame
    assert frame["ChargePeriodStart"].to_list() == [datetime(2026, 9, 1, 0), datetime(2026, 9, 1, 1)]
    assert frame["ChargePeriodEnd"].to_list() == [datetime(2026, 9, 1, 1), datetime(2026, 9, 1, 2)]


def test_focus_1_3_service_provider_name_satisfies_provider_name(tmp_path: Path):
    row = {k: v for k, v in BASE_ROW.items() if k not in ("ProviderName", "PublisherName")}
    row |= {"ServiceProviderName": "Lambda", "HostProviderName": "Lambda"}
    parsed = read_focus_file(write_csv(tmp_path / "lambda.csv", [row]))
    assert parsed.focus_version == "1.3"
    assert parsed.frame["ServiceProviderName"][0] == "Lambda"
    assert parsed.frame["ProviderName"][0] is None


def test_parquet_doubles_become_the_decimal_they_print_as(tmp_path: Path):
    table = pa.table(
        {
            **{
                name: pa.array([value] * 3)
                for name, value in BASE_ROW.items()
                if "Cost" not in name and "Period" not in name
            },
            "BilledCost": pa.array([0.1, 0.2, 1e-7], pa.float64()),
            "EffectiveCost": pa.array([0.1, 0.2, 1e-7], pa.float64()),
            "ListCost": pa.array(["1.1", "1.2", "1.3"]).cast(pa.decimal128(20, 10)),
            "ContractedCost": pa.array([1, 2, 3], pa.int64()),
            "BillingPeriodStart": pa.array([datetime(2026, 9, 1, tzinfo=UTC)] * 3, pa.timestamp("ms", tz="UTC")),
            "BillingPeriodEnd": pa.array([datetime(2026, 10, 1, tzinfo=UTC)] * 3, pa.timestamp("ms", tz="UTC")),
            "ChargePeriodStart": pa.array([datetime(2026, 9, 1, tzinfo=UTC)] * 3, pa.timestamp("us", tz="UTC")),
            "ChargePeriodEnd": pa.array([datetime(2026, 9, 2, tzinfo=UTC)] * 3, pa.timestamp("us", tz="UTC")),
            "x_UsageType": pa.array(["USE1-SpotUsage:p5.48xlarge"] * 3),
        }
    )
    path = tmp_path / "aws.parquet"
    pq.write_table(table, path)
    frame = read_focus_file(path).frame
    assert frame["BilledCost"].sum() == Decimal("0.3000001")  # 0.1 + 0.2 + 1e-7, exactly
    assert frame["ListCost"].sum() == Decimal("3.6")
    assert frame["ContractedCost"].sum() == Decimal("6")
    assert frame["BillingPeriodStart"][0] == datetime(2026, 9, 1)
    assert json.loads(frame["x_extensions"][0]) == {"x_UsageType": "USE1-SpotUsage:p5.48xlarge"}


@pytest.mark.parametrize(
    ("override", "row", "column", "message"),
    [
        ({"BilledCost": "12,50"}, 2, "BilledCost", "not a decimal"),
        ({"ChargePeriodStart": "31/09/2026"}, 2, "ChargePeriodStart", "ISO 8601"),
        ({"ChargeCategory": "Usagee"}, 2, "ChargeCategory", "must be one of"),
        ({"BillingCurrency": ""}, 2, "BillingCurrency", "must not be empty"),
        ({"Tags": "team=research"}, 2, "Tags", "JSON object"),
        ({"BillingPeriodEnd": "2026-09-01T00:00:00Z"}, 2, "BillingPeriodEnd", "after BillingPeriodStart"),
    ],
)
def test_bad_values_are_rejected_naming_file_row_and_column(tmp_path: Path, override, row, column, message):
    path = write_csv(tmp_path / "bad.csv", focus_rows({}, override, {}))
    with pytest.raises(RejectedInput, match=message) as error:
        read_focus_file(path, source_file="focus/bad.csv")
    assert (error.value.file, error.value.row, error.value.column) == ("focus/bad.csv", row, column)


def test_a_rejection_shows_the_value_as_written_not_as_a_python_repr(tmp_path: Path):
    """A date-time as the spec spells it, a number as written: never `datetime.datetime(…)` or `Decimal('…')`."""
    path = write_csv(
        tmp_path / "bad.csv",
        focus_rows({}, {}, {"ChargePeriodStart": "2024-09-02 00:00:00", "ChargePeriodEnd": "2024-09-01 00:00:00"}),
    )
    with pytest.raises(RejectedInput) as error:
        read_focus_file(path, source_file="focus/bad.csv")
    assert error.value.describe() == (
        "focus/bad.csv, row 3, column ChargePeriodEnd: ChargePeriodEnd must not be before ChargePeriodStart"
        " (found 2024-09-01T00:00:00Z)"
    )


def test_missing_mandatory_column_is_named(tmp_path: Path):
    rows = [{k: v for k, v in row.items() if k != "EffectiveCost"} for row in focus_rows({})]
    with pytest.raises(RejectedInput, match="EffectiveCost") as error:
        read_focus_file(write_csv(tmp_path / "no-effective.csv", rows))
    assert error.value.column == "EffectiveCost"


def test_semicolon_delimited_file_gets_a_hint(tmp_path: Path):
    with pytest.raises(RejectedInput, match="delimited by something other than commas"):
        read_focus_file(write_csv(tmp_path / "semicolons.csv", focus_rows({}), delimiter=";"))


def test_truncated_gzip_is_rejected_not_partially_read(tmp_path: Path):
    whole = gzip.compress(
        b"".join(write_csv(tmp_path / "x.csv", focus_rows(*[{}] * 2000)).read_bytes() for _ in range(1))
    )
    path = tmp_path / "truncated.csv.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(RejectedInput, match="truncated or corrupt gzip"):
        read_focus_file(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (",".join(BASE_ROW).encode() + b"\n", "no data rows"),
        ("\ufeffBilledCost,BillingAccountId\n1,2\n".encode("utf-16"), "not UTF-8"),
        (bytes(range(256)) * 20, "not UTF-8"),
    ],
    ids=["empty", "header-only", "utf-16", "binary"],
)
def test_unreadable_files_are_rejected(tmp_path: Path, content: bytes, message: str):
    path = tmp_path / "input.csv"
    path.write_bytes(content)
    with pytest.raises(RejectedInput, match=message):
        read_focus_file(path)


def test_row_with_an_extra_field_is_named(tmp_path: Path):
    path = write_csv(tmp_path / "ragged.csv", focus_rows({}, {}))
    lines = path.read_text().splitlines()
    lines[2] += ",surplus"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RejectedInput, match="fields where the header has") as error:
        read_focus_file(path)
    assert error.value.row == 2
