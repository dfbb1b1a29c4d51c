"""The synthetic FOCUS files, checked by reading them back with plain csv, gzip and pyarrow.

Nothing here reuses the generator's internals: the files must stand on their own, as the parsers
will see them, and agree with the totals the generator declared.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthetic_data.cli.focus_samples import main
from synthetic_data.focus_samples import write_focus_samples

MONTHS = ("2026-09", "2026-10")
FILES = tuple(
    f"{provider}/{provider}-focus-{month}.{extension}"
    for provider, extension in (("aws", "parquet"), ("microsoft", "csv"), ("google", "csv.gz"), ("lambda", "csv"))
    for month in MONTHS
)
MONEY_COLUMNS = (
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "ListUnitPrice",
    "ContractedUnitPrice",
    "PricingQuantity",
    "ConsumedQuantity",
)
TEN_DECIMALS = Decimal("1E-10")
PLAIN_DECIMAL = re.compile(r"-?\d+(\.\d+)?")

Row = dict[str, str | None]


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("focus-samples")
    write_focus_samples(out_dir)
    return out_dir


def read_rows(path: Path) -> tuple[list[str], list[Row]]:
    """Header and rows with every value as text or None, whatever the file format."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        return table.column_names, [
            {name: _parquet_text(value) for name, value in row.items()} for row in table.to_pylist()
        ]
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    null_text = "NULL" if path.name.startswith("google") else ""
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
    rows = [{name: None if value == null_text else value for name, value in row.items()} for row in reader]
    return list(reader.fieldnames or []), rows


def _parquet_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def decimal(row: Row, column: str) -> Decimal | None:
    value = row.get(column)
    return None if value is None else Decimal(value)


def timestamp(row: Row, column: str) -> datetime:
    return datetime.strptime(row[column], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def all_rows(samples: Path) -> Iterator[tuple[str, Row]]:
    for name in FILES:
        for row in read_rows(samples / name)[1]:
            yield name, row


def test_every_provider_and_month_has_a_file(tmp_path: Path) -> None:
    written = write_focus_samples(tmp_path)
    assert [path.relative_to(tmp_path).as_posix() for path in written] == list(FILES)
    assert (tmp_path / "expected_totals.json").is_file()
    assert sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file()) < 5_000_000


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    write_focus_samples(first, seed=7)
    write_focus_samples(second, seed=7)
    write_focus_samples(other, seed=8)
    for name in [*FILES, "expected_totals.json"]:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    for name in FILES:
        assert (first / name).read_bytes() != (other / name).read_bytes(), name


def test_files_add_up_to_the_expected_totals(samples: Path) -> None:
    expected = json.loads((samples / "expected_totals.json").read_text())["files"]
    assert sorted(entry["file"] for entry in expected) == sorted(FILES)
    for entry in expected:
        _, rows = read_rows(samples / entry["file"])
        assert {row["BillingPeriodStart"] for row in rows} == {entry["billing_period_start"]}
        assert {row["BillingCurrency"] for row in rows} == {entry["billing_currency"]}
        assert len(rows) == entry["rows"]
        assert 150 <= len(rows) <= 2_000
        assert sum(decimal(row, "BilledCost") for row in rows) == Decimal(entry["billed_cost"])
        assert sum(decimal(row, "EffectiveCost") for row in rows) == Decimal(entry["effective_cost"])
        gpu_hours = sum(
            decimal(row, "PricingQuantity") * json.loads(row["SkuPriceDetails"])["GpuCount"]
            for row in rows
            if row["ChargeCategory"] == "Usage"
            and row.get("CommitmentDiscountStatus") != "Unused"
            and row["SkuPriceDetails"]
            and "GpuCount" in json.loads(row["SkuPriceDetails"])
        )
        assert gpu_hours == Decimal(entry["gpu_hours"]) > 0


def test_uncommitted_usage_costs_are_quantity_times_unit_price(samples: Path) -> None:
    checked = 0
    for name, row in all_rows(samples):
        if row["ChargeCategory"] != "Usage" or row.get("CommitmentDiscountId"):
            continue
        quantity = decimal(row, "PricingQuantity")
        billed = (quantity * decimal(row, "ContractedUnitPrice")).quantize(TEN_DECIMALS, ROUND_HALF_UP)
        listed = (quantity * decimal(row, "ListUnitPrice")).quantize(TEN_DECIMALS, ROUND_HALF_UP)
        assert decimal(row, "BilledCost") == billed == decimal(row, "EffectiveCost"), name
        assert decimal(row, "ListCost") == listed, name
        checked += 1
    assert checked > 1_000


def test_commitment_covered_usage_is_prepaid(samples: Path) -> None:
    statuses: dict[str, set[str]] = {}
    for name, row in all_rows(samples):
        if row["ChargeCategory"] == "Usage" and row.get("CommitmentDiscountId"):
            assert row["PricingCategory"] == "Committed", name
            assert decimal(row, "BilledCost") == 0 < decimal(row, "EffectiveCost"), name
            statuses.setdefault(name.split("/")[0], set()).add(row["CommitmentDiscountStatus"])
    assert statuses == {"aws": {"Used"}, "microsoft": {"Used", "Unused"}}


def test_charge_periods_lie_inside_the_calendar_billing_month(samples: Path) -> None:
    for name, row in all_rows(samples):
        month = name.rsplit("-focus-", 1)[1][:7]
        period_start, period_end = timestamp(row, "BillingPeriodStart"), timestamp(row, "BillingPeriodEnd")
        assert period_start.strftime("%Y-%m") == month and period_start.day == 1, name
        assert period_end.day == 1 and period_end.hour == 0 and period_end > period_start, name
        start, end = timestamp(row, "ChargePeriodStart"), timestamp(row, "ChargePeriodEnd")
        assert period_start <= start < end <= period_end, name


def test_every_provider_bills_spot_or_commitments_and_gpu_rows(samples: Path) -> None:
    categories: dict[str, set[str]] = {}
    for name, row in all_rows(samples):
        categories.setdefault(name.split("/")[0], set()).add(row["PricingCategory"] or row["ChargeCategory"])
    assert categories["aws"] == {"Standard", "Dynamic", "Committed", "Tax"}
    assert categories["microsoft"] == {"Standard", "Dynamic", "Committed"}
    assert categories["google"] == {"Standard", "Dynamic", "Credit"}
    assert categories["lambda"] == {"Standard"}


def test_csv_money_is_written_as_plain_decimals(samples: Path) -> None:
    for name, row in all_rows(samples):
        for column in MONEY_COLUMNS:
            value = row.get(column)
            assert value is None or PLAIN_DECIMAL.fullmatch(value), (name, column, value)


def test_aws_file_is_focus_1_2_parquet_with_exact_money(samples: Path) -> None:
    path = samples / "aws/aws-focus-2026-09.parquet"
    schema = pq.read_schema(path)
    for column in ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "PricingQuantity"):
        assert schema.field(column).type == pa.decimal128(38, 10)
    assert {"InvoiceId", "PricingCurrency", "x_UsageType", "x_ServiceCode", "x_Operation"} <= set(schema.names)
    _, rows = read_rows(path)
    usage_types = {row["x_UsageType"] for row in rows}
    assert {"BoxUsage:g5.xlarge", "USE2-BoxUsage:p5.48xlarge", "USW2-SpotUsage:p4d.24xlarge"} <= usage_types
    (tax,) = [row for row in rows if row["ChargeCategory"] == "Tax"]
    assert tax["PricingQuantity"] is tax["PricingUnit"] is tax["PricingCategory"] is None
    (fee,) = [row for row in rows if row["ChargeCategory"] == "Purchase"]
    assert fee["ChargeFrequency"] == "Recurring" and fee["CommitmentDiscountId"]


def test_microsoft_file_has_a_bom_and_bills_in_euro(samples: Path) -> None:
    path = samples / "microsoft/microsoft-focus-2026-09.csv"
    assert path.read_bytes().startswith(b"\xef\xbb\xbfAvailabilityZone,")
    header, rows = read_rows(path)
    assert {"BillingAccountType", "SubAccountType", "x_SkuMeterName", "x_ResourceGroupName"} <= set(header)
    assert {row["BillingCurrency"] for row in rows} == {"EUR"}
    assert rows[0]["ChargePeriodStart"] == "2026-09-01T00:00:00Z"


def test_google_file_spells_null_as_NULL_and_has_an_id_column(samples: Path) -> None:
    text = gzip.decompress((samples / "google/google-focus-2026-09.csv.gz").read_bytes()).decode("utf-8")
    header, *lines = list(csv.reader(io.StringIO(text, newline="")))
    assert "Id" in header and "NULL" in {cell for line in lines for cell in line}
    assert "" not in {cell for line in lines for cell in line}
    _, rows = read_rows(samples / "google/google-focus-2026-09.csv.gz")
    assert len({row["Id"] for row in rows}) == len(rows)
    (credit,) = [row for row in rows if row["ChargeCategory"] == "Credit"]
    assert decimal(credit, "BilledCost") < 0
    gpu_skus = {row["ChargeDescription"] for row in rows if row["SkuPriceDetails"] == '{"GpuCount":1}'}
    assert "Nvidia H100 80GB GPU running in Americas" in gpu_skus
    assert "Spot Preemptible Nvidia H100 80GB GPU running in Americas" in gpu_skus


def test_lambda_file_is_focus_1_3_without_provider_name(samples: Path) -> None:
    header, rows = read_rows(samples / "lambda/lambda-focus-2026-09.csv")
    assert "ProviderName" not in header and "PublisherName" not in header
    assert {row["ServiceProviderName"] for row in rows} == {"Lambda"}
    assert {row["HostProviderName"] for row in rows} == {"Lambda"}
    instance_types = {json.loads(row["SkuPriceDetails"])["InstanceType"] for row in rows if row["SkuPriceDetails"]}
    assert instance_types == {"gpu_8x_h100_sxm5", "gpu_1x_a100_sxm4"}


def test_command_line_writes_the_requested_months(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--seed", "3", "--months", "1", "--start-month", "2026-12"]) == 0
    assert sorted(path.name for path in tmp_path.rglob("*-focus-*")) == [
        "aws-focus-2026-12.parquet",
        "google-focus-2026-12.csv.gz",
        "lambda-focus-2026-12.csv",
        "microsoft-focus-2026-12.csv",
    ]
    assert "expected_totals.json" in capsys.readouterr().out


def test_a_malformed_start_month_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2026-09"):
        write_focus_samples(tmp_path, start_month="2026-9")
