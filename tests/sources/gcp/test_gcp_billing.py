"""The Google Cloud billing export connector: nested Parquet and NDJSON in, exact typed rows out, GPU marts.

The fixture `fixtures/gcp/gcp_billing_export_resource_v1.jsonl` is written by hand in the shape of a
detailed (resource-level) export extracted from BigQuery as JSON: one 8×H100 A3 VM hour (host core,
host RAM and GPU SKUs), two hours of spot H100s, a one-year H100 commitment hour that covers 4 + 2 of
its 8 GPU-hours, a T4 with a sustained-use credit and a discount, storage, tax, and L4 hours on both sides of the
November/December invoice boundary plus a correction of November on the December invoice.

Hand-computed totals used below:
- 202405 (starts 2024-05-01 07:00 UTC, PDT): cost 7.28 + 5.616 + 88.48 + 36 + 61.36 + 44.24 + 22.12
  + 35 + 2.6 + 10 = 312.696; credits −44.24 − 22.12 − 5.25 − 1.75 = −73.36; net 239.336.
- 202411 (starts 2024-11-01 07:00 UTC, still PDT; ends 2024-12-01 08:00 UTC): 0.56.
- 202412 (starts 2024-12-01 08:00 UTC, PST): 0.56 − 0.56 = 0.
- The commitment hour: fee 61.36 for 8 GPU-hours (7.67 each); 4 GPU-hours used by research (30.68),
  2 by inference (15.34), 2 unused stay on the fee row (15.34).
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import subprocess
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.lib.catalog.billing import GCP_BILLING
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from sources.gcp import parse_billing_export_delivery, read_billing_export_file
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import passed_unit_tests, unit_tests_in_yaml
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURE = FIXTURES_ROOT / "gcp" / "gcp_billing_export_resource_v1.jsonl"
LINES = FIXTURE.read_text(encoding="utf-8").splitlines()
ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
log = logging.getLogger("test")

# The BigQuery export schema as `EXPORT DATA … format='PARQUET'` writes it: FLOAT64 money and
# quantities as doubles, NUMERIC prices as DECIMAL(38, 9), TIMESTAMP as UTC microseconds.
KEY_VALUES = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
TIMESTAMP = pa.timestamp("us", tz="UTC")
NUMERIC = pa.decimal128(38, 9)


def _struct(*names: str, **typed: pa.DataType) -> pa.StructType:
    return pa.struct([(name, pa.string()) for name in names] + list(typed.items()))


EXPORT_SCHEMA = pa.schema(
    [
        ("billing_account_id", pa.string()),
        ("service", _struct("id", "description")),
        ("sku", _struct("id", "description")),
        ("usage_start_time", TIMESTAMP),
        ("usage_end_time", TIMESTAMP),
        (
            "project",
            _struct(
                "id",
                "number",
                "name",
                labels=KEY_VALUES,
                ancestry_numbers=pa.string(),
                ancestors=pa.list_(_struct("resource_name", "display_name")),
            ),
        ),
        ("labels", KEY_VALUES),
        ("system_labels", KEY_VALUES),
        ("location", _struct("location", "country", "region", "zone")),
        ("tags", pa.list_(_struct("key", "value", "namespace", inherited=pa.bool_()))),
        (
            "price",
            _struct("unit", effective_price=NUMERIC, tier_start_amount=NUMERIC, pricing_unit_quantity=NUMERIC),
        ),
        ("transaction_type", pa.string()),
        ("seller_name", pa.string()),
        ("export_time", TIMESTAMP),
        ("cost", pa.float64()),
        ("currency", pa.string()),
        ("currency_conversion_rate", pa.float64()),
        ("usage", _struct("unit", "pricing_unit", amount=pa.float64(), amount_in_pricing_units=pa.float64())),
        ("credits", pa.list_(_struct("name", "full_name", "id", "type", amount=pa.float64()))),
        ("invoice", _struct("month", "publisher_type")),
        ("cost_type", pa.string()),
        ("adjustment_info", _struct("id", "description", "mode", "type")),
        ("cost_at_list", pa.float64()),
        ("resource", _struct("name", "global_name")),
        ("consumption_model", _struct("id", "description")),
    ]
)


def _arrow_value(value, dtype: pa.DataType):
    """A JSON export value as the Python value pyarrow stores for the BigQuery type."""
    if value is None:
        return None
    if pa.types.is_struct(dtype):
        return {field.name: _arrow_value(value.get(field.name), field.type) for field in dtype}
    if pa.types.is_list(dtype):
        return [_arrow_value(item, dtype.value_type) for item in value]
    if pa.types.is_timestamp(dtype):
        fmt = "%Y-%m-%d %H:%M:%S.%f UTC" if "." in value else "%Y-%m-%d %H:%M:%S UTC"
        return datetime.strptime(value, fmt).replace(tzinfo=UTC)
    if pa.types.is_decimal(dtype):
        return Decimal(value)
    if pa.types.is_floating(dtype):
        return float(value)
    return value


def write_parquet(path: Path, lines: list[str]) -> Path:
    records = [json.loads(line) for line in lines]
    rows = [
        {field.name: _arrow_value(record.get(field.name), field.type) for field in EXPORT_SCHEMA} for record in records
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=EXPORT_SCHEMA), path)
    return path


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def edited(line_number: int, edit) -> list[str]:
    """The fixture with one line's record changed by `edit(record)`."""
    lines = list(LINES)
    record = json.loads(lines[line_number - 1])
    edit(record)
    lines[line_number - 1] = json.dumps(record)
    return lines


def row(frame: pl.DataFrame, number: int) -> dict:
    return frame.filter(pl.col("_source_row") == number).row(0, named=True)


# --- Parsing -----------------------------------------------------------------------------------


def test_json_export_flattens_to_exact_typed_columns():
    frame = read_billing_export_file(FIXTURE, source_file="export.jsonl")
    assert frame.height == 13 and frame["_source_row"].to_list() == list(range(1, 14))
    assert set(frame["_source_file"]) == {"export.jsonl"}

    # Invoice months start at midnight Pacific time: PDT in May and on 1 November, PST in December.
    periods = {
        number: (row(frame, number)["billing_period_start"], row(frame, number)["billing_period_end"])
        for number in (1, 11, 12)
    }
    assert periods == {
        1: (datetime(2024, 5, 1, 7), datetime(2024, 6, 1, 7)),
        11: (datetime(2024, 11, 1, 7), datetime(2024, 12, 1, 8)),
        12: (datetime(2024, 12, 1, 8), datetime(2025, 1, 1, 8)),
    }
    net = dict(frame.group_by("invoice_month").agg(pl.col("net_cost").sum()).iter_rows())
    assert net == {"202405": Decimal("239.336"), "202411": Decimal("0.56"), "202412": Decimal("0")}
    assert frame.filter(pl.col("invoice_month") == "202405")["cost"].sum() == Decimal("312.696")

    ram = row(frame, 2)
    assert ram["cost"] == Decimal("5.616")
    assert ram["usage_amount"] == Decimal("7236160900300800")  # 1872 GiB × 3600 s × 2^30
    assert ram["usage_amount_in_pricing_units"] == Decimal("1872")
    assert row(frame, 9)["usage_amount"] == Decimal("386547056640000")  # written as 3.865470566400E14

    covered = row(frame, 6)
    assert (covered["credits_amount"], covered["credits_committed_usage_amount"], covered["net_cost"]) == (
        Decimal("-44.24"),
        Decimal("-44.24"),
        Decimal("0"),
    )
    assert covered["commitment_credit_id"] == "CommittedUsageDiscount-h100-commit-1y"
    assert covered["commitment_credit_name"] == "Committed use discount: Nvidia H100 GPU in us-central1"
    credits = json.loads(covered["credits"], parse_float=Decimal)
    assert credits == [
        {
            "name": "Committed use discount: Nvidia H100 GPU",
            "amount": Decimal("-44.24"),
            "full_name": "Committed use discount: Nvidia H100 GPU in us-central1",
            "id": "CommittedUsageDiscount-h100-commit-1y",
            "type": "COMMITTED_USAGE_DISCOUNT",
        }
    ]

    sustained = row(frame, 8)  # a sustained-use credit (−5.25) and a contract discount (−1.75)
    assert (sustained["credits_amount"], sustained["credits_committed_usage_amount"], sustained["net_cost"]) == (
        Decimal("-7"),
        Decimal("0"),
        Decimal("28"),
    )
    # Resource labels win over project labels of the same key.
    assert sustained["labels"] == '{"team":"research"}'
    assert sustained["project_labels"] == '{"cost-center":"cc-7","team":"platform"}'
    assert sustained["focus_tags"] == '{"cost-center":"cc-7","team":"research"}'

    tax = row(frame, 10)
    assert (tax["cost_type"], tax["project_id"], tax["usage_amount"], tax["usage_pricing_unit"]) == (
        "tax",
        None,
        None,
        None,
    )
    assert (tax["labels"], tax["focus_tags"], tax["credits"], tax["credits_amount"]) == (None, None, "[]", Decimal(0))

    first = row(frame, 1)
    assert first["usage_start_time"] == datetime(2024, 5, 10)
    assert first["export_time"] == datetime(2024, 5, 10, 4, 13, 22, 117000)
    assert first["price_effective_price"] == Decimal("0.035")
    assert first["system_labels"] == (
        '{"compute.googleapis.com/cores":"208","compute.googleapis.com/machine_spec":"a3-highgpu-8g",'
        '"compute.googleapis.com/memory":"1916928"}'
    )
    extensions = json.loads(first["x_extensions"])
    assert (extensions["x_MachineSpec"], extensions["x_SkuId"], extensions["x_Credits"]) == (
        "a3-highgpu-8g",
        "A3C1-0E2F-1D30",
        [],
    )
    assert first["_extra"] == '{"tags":[]}'  # a field this reader does not use is kept, not lost

    correction = row(frame, 13)
    assert (correction["cost_type"], correction["adjustment_info_type"], correction["cost"]) == (
        "adjustment",
        "USAGE_CORRECTION",
        Decimal("-0.56"),
    )


def test_parquet_export_with_nested_types_reads_like_the_json_export(tmp_path: Path):
    parquet = write_parquet(tmp_path / "000000000000.parquet", LINES)
    assert pq.read_schema(parquet).field("credits").type.value_type.field("amount").type == pa.float64()
    from_parquet = read_billing_export_file(parquet, source_file="p")
    from_json = read_billing_export_file(FIXTURE, source_file="j")
    # Doubles become the decimal they print as; NUMERIC and timestamps keep their value.
    assert row(from_parquet, 2)["cost"] == Decimal("5.616")
    assert row(from_parquet, 1)["export_time"] == datetime(2024, 5, 10, 4, 13, 22, 117000)
    ignored = ["_source_file", "_extra"]  # the Parquet `tags` struct has more (null) members
    assert from_parquet.drop(ignored).equals(from_json.drop(ignored))


def test_delivery_of_gzipped_json_parts_with_blank_lines_and_crlf(tmp_path: Path):
    landing = tmp_path / "landing"
    folder = landing / "export-2024-05"
    folder.mkdir(parents=True)
    (folder / "000000000000.json.gz").write_bytes(gzip.compress(("\r\n".join(LINES[:10]) + "\r\n").encode()))
    (folder / "000000000001.json.gz").write_bytes(gzip.compress(("\n\n".join(LINES[10:]) + "\n").encode()))
    parsed = parse_billing_export_delivery(Delivery(source="gcp_billing", path=folder, landing_root=landing))
    assert parsed.format_version == "BigQuery billing export, detailed (NDJSON gzip)"
    frame = parsed.frame
    assert frame.height == 13
    lineage = frame.select("_source_file", "_source_row").rows()
    first_part = "export-2024-05/000000000000.json.gz"
    second_part = "export-2024-05/000000000001.json.gz"
    # Rows are line numbers: the second part's blank lines count, so its rows are 1, 3, 5.
    assert lineage == [(first_part, n) for n in range(1, 11)] + [(second_part, n) for n in (1, 3, 5)]
    assert frame["net_cost"].sum() == Decimal("239.896")


def test_standard_export_with_numbers_as_text_other_timestamp_spellings_and_new_fields(tmp_path: Path):
    record = {
        "billing_account_id": ACCOUNT,
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "L4GP-5C0B-19E3", "description": "Nvidia L4 GPU running in Americas"},
        "usage_start_time": "2024-05-10T00:00:00Z",
        "usage_end_time": "2024-05-10T01:00:00.000+00:00",
        "export_time": "1.7153E9",
        "cost": "0.1",
        "currency": "EUR",
        "usage": {"amount": "3600", "unit": "seconds", "amount_in_pricing_units": "1", "pricing_unit": "hour"},
        "credits": [{"name": "Free trial", "amount": "-0.05", "type": "PROMOTION"}],
        "invoice": {"month": 202405},
        "cost_type": "regular",
        "a_field_google_added_later": {"x": 1},
    }
    path = write_lines(tmp_path / "standard.json", [json.dumps(record)])
    delivery = Delivery(source="gcp_billing", path=path, landing_root=tmp_path)
    parsed = parse_billing_export_delivery(delivery)
    assert parsed.format_version == "BigQuery billing export, standard (NDJSON)"
    line = parsed.frame.row(0, named=True)
    amounts = (line["cost"], line["credits_amount"], line["net_cost"])
    assert amounts == (Decimal("0.1"), Decimal("-0.05"), Decimal("0.05"))
    assert (line["usage_start_time"], line["usage_end_time"]) == (datetime(2024, 5, 10), datetime(2024, 5, 10, 1))
    assert line["export_time"] == datetime(2024, 5, 10, 0, 13, 20)  # epoch seconds 1715300000
    assert (line["invoice_month"], line["billing_period_start"]) == ("202405", datetime(2024, 5, 1, 7))
    # Fields this export does not have are null; the new one is kept in _extra.
    assert (line["project_id"], line["resource_name"], line["price_effective_price"], line["labels"]) == (
        None,
        None,
        None,
        None,
    )
    assert json.loads(line["_extra"]) == {"a_field_google_added_later": {"x": 1}}


# --- Rejections --------------------------------------------------------------------------------


def _malformed_line_4() -> list[str]:
    lines = list(LINES)
    lines[3] = lines[3].replace('"cost":36.0,', '"cost":36.0,,')
    return lines


BAD_FILES = {
    "missing invoice.month": (lambda: edited(2, lambda r: r.pop("invoice")), 2, "invoice.month", "is required"),
    "non-numeric cost": (lambda: edited(3, lambda r: r.update(cost="eighty")), 3, "cost", "'eighty' is not a number"),
    "malformed JSON line": (_malformed_line_4, 4, "cost", "is not a JSON object on this line"),
    "invoice month spelling": (
        lambda: edited(5, lambda r: r["invoice"].update(month="2024-05")),
        5,
        "invoice.month",
        "'2024-05' is not a month as YYYYMM",
    ),
    "non-numeric credit": (
        lambda: edited(6, lambda r: r["credits"][0].update(amount="n/a")),
        6,
        "credits.amount",
        "'n/a' is not a number",
    ),
    "unknown cost type": (lambda: edited(7, lambda r: r.update(cost_type="discount")), 7, "cost_type", "'discount'"),
    "unreadable timestamp": (
        lambda: edited(8, lambda r: r.update(usage_start_time="yesterday")),
        8,
        "usage_start_time",
        "'yesterday' is not a timestamp",
    ),
    "missing sku.description": (
        lambda: edited(1, lambda r: r["sku"].pop("description")),
        1,
        "sku.description",
        "is required",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_bad_values_are_rejected_naming_file_row_and_column(tmp_path: Path, case: str):
    lines, row_number, column, message = BAD_FILES[case]
    path = write_lines(tmp_path / "bad.jsonl", lines())
    with pytest.raises(RejectedInput) as error:
        read_billing_export_file(path, source_file="gcp/bad.jsonl")
    assert (error.value.file, error.value.row, error.value.column) == ("gcp/bad.jsonl", row_number, column)
    assert message in error.value.reason


def _truncated_after_line_5(path: Path) -> Path:
    """Two gzip members (lines 1–5, lines 6–13) with the second cut inside its header: lines 1–5 arrive whole."""
    first = gzip.compress(("\n".join(LINES[:5]) + "\n").encode())
    second = gzip.compress(("\n".join(LINES[5:]) + "\n").encode())
    path.write_bytes(first + second[:5])
    return path


def test_truncated_gzip_is_rejected_at_the_first_line_it_lost(tmp_path: Path):
    with pytest.raises(RejectedInput, match="truncated or corrupt gzip") as error:
        read_billing_export_file(_truncated_after_line_5(tmp_path / "cut.json.gz"), source_file="cut.json.gz")
    assert error.value.row == 6
    assert "5 complete line(s) precede the break" in error.value.reason


def test_required_field_missing_from_the_whole_file_is_named(tmp_path: Path):
    lines = [json.dumps({k: v for k, v in json.loads(line).items() if k != "invoice"}) for line in LINES]
    parquet = write_parquet(tmp_path / "no-invoice.parquet", lines)
    without_invoice = pq.read_table(parquet).drop_columns(["invoice"])
    pq.write_table(without_invoice, parquet)
    with pytest.raises(RejectedInput, match=r"has no invoice\.month field") as error:
        read_billing_export_file(parquet, source_file="no-invoice.parquet")
    assert (error.value.row, error.value.column) == (None, "invoice.month")


def test_csv_and_empty_deliveries_are_refused(tmp_path: Path):
    csv = tmp_path / "export.csv"
    csv.write_text("billing_account_id,cost\nx,1\n")
    with pytest.raises(RejectedInput, match="cannot hold the export's nested fields"):
        parse_billing_export_delivery(Delivery(source="gcp_billing", path=csv, landing_root=tmp_path))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(RejectedInput, match="holds no billing rows"):
        parse_billing_export_delivery(Delivery(source="gcp_billing", path=empty, landing_root=tmp_path))


def test_detection_recognises_parquet_and_json_exports(tmp_path: Path):
    gz = tmp_path / "000000000000.json.gz"
    gz.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    parquet = write_parquet(tmp_path / "000000000000.parquet", LINES)
    assert [detect_source(path) for path in (FIXTURE, gz, parquet)] == ["gcp_billing"] * 3


# --- Loading into the warehouse ------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def run_ingest(home: FinopsHome):
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, GCP_BILLING, log=log)


REJECTED_DELIVERIES = {
    "missing invoice.month": (lambda p: write_lines(p / "a.jsonl", BAD_FILES["missing invoice.month"][0]()), 2),
    "non-numeric cost": (lambda p: write_lines(p / "b.jsonl", BAD_FILES["non-numeric cost"][0]()), 3),
    "truncated gzip": (lambda p: _truncated_after_line_5(p / "c.json.gz"), 6),
    "malformed JSON line": (lambda p: write_lines(p / "d.jsonl", _malformed_line_4()), 4),
}


@pytest.mark.parametrize("case", REJECTED_DELIVERIES, ids=list(REJECTED_DELIVERIES))
def test_rejected_delivery_is_quarantined_and_the_warehouse_unchanged(home: FinopsHome, tmp_path: Path, case: str):
    register(home, "gcp_billing", FIXTURE)
    assert [r.status for r in run_ingest(home)] == ["loaded"]
    before = table_fingerprint(home.warehouse)

    make, row_number = REJECTED_DELIVERIES[case]
    bad = register(home, "gcp_billing", make(tmp_path))
    (result,) = [r for r in run_ingest(home) if r.status != "duplicate"]
    assert result.status == "rejected"
    assert f"{bad.path.name}, row {row_number}" in result.reason
    assert table_fingerprint(home.warehouse) == before
    reason = (home.quarantine / "gcp_billing" / f"{bad.path.name}.reason.txt").read_text()
    assert f"row: {row_number}" in reason


def test_a_new_delivery_restates_only_the_invoice_months_it_carries(home: FinopsHome, tmp_path: Path):
    register(home, "gcp_billing", FIXTURE)
    (first,) = run_ingest(home)
    assert first.billing_periods == ["2024-05-01", "2024-11-01", "2024-12-01"]
    assert first.totals == {"USD": {"billed": "239.896", "effective": "239.896"}}

    # May restated: one line only, now 100.00.
    restated = edited(3, lambda r: r.update(cost=100.0))[2:3]
    register(home, "gcp_billing", write_lines(tmp_path / "may-v2.jsonl", restated))
    (second,) = [r for r in run_ingest(home) if r.status == "loaded"]
    assert (second.rows, second.replaced_rows) == (1, 10)
    by_period = query(
        home.warehouse,
        "select invoice_month, sum(cost + credits_amount), count(*) from raw.gcp_billing_export group by 1 order by 1",
    )
    assert by_period == [("202405", Decimal(100), 1), ("202411", Decimal("0.56"), 1), ("202412", Decimal(0), 2)]


# --- dbt: the cost line model's golden cases -----------------------------------------------------


def test_cost_line_unit_tests_pass(dbt_unit_test_build: subprocess.CompletedProcess[str]):
    """The YAML unit tests of int_gcp__billing_cost_lines on a real DuckDB (the session's one dbt build): FOCUS
    rules, commitment amortization, and one CommitmentDiscountId for a commitment's fee and the usage it covered."""
    assert dbt_unit_test_build.returncode == 0, dbt_unit_test_build.stdout[-3000:]
    declared = unit_tests_in_yaml("int_gcp__billing_cost_lines")
    assert len(declared) == 3 and "int_gcp__billing_cost_lines_one_id_per_commitment" in declared
    assert declared <= passed_unit_tests(dbt_unit_test_build.stdout)
    assert re.search(r"OK created sql \w+ model intermediate\.int_gcp__billing_cost_lines ", dbt_unit_test_build.stdout)


# --- The whole pipeline ----------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_ingest_gcp_export_to_gpu_marts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    from pipelines.cli import main

    root = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(root))
    # A fresh warehouse: no other source has delivered, yet every staging model must build.
    export = tmp_path / "gcp-export-2024"
    export.mkdir()
    write_parquet(export / "000000000000.parquet", LINES[:7])
    write_parquet(export / "000000000001.parquet", LINES[7:])
    assert main(["ingest", str(export)]) == 0
    out = capsys.readouterr().out
    assert "Google Cloud billing export" in out
    assert "13 rows, billing periods 2024-05-01, 2024-11-01, 2024-12-01" in out

    warehouse = root / "warehouse.duckdb"
    gpu = query(
        warehouse,
        """
        select strftime(billing_period_start, '%Y-%m-%d %H:%M'), gpu_model, pricing_category, charge_category,
               sum(gpu_hours), sum(billed_cost), sum(effective_cost)
        from marts.fct_gpu_spend_daily group by all order by all
        """,
    )
    assert gpu == [
        # one committed hour: fee 61.36 for 8 GPU-hours; 6 used (46.02 at 7.67), 2 unused (15.34)
        ("2024-05-01 07:00", "H100", "Committed", "Usage", Decimal(6), Decimal(0), Decimal("46.02")),
        ("2024-05-01 07:00", "H100", "Dynamic", "Usage", Decimal(16), Decimal(36), Decimal(36)),
        ("2024-05-01 07:00", "H100", "Standard", "Purchase", Decimal(0), Decimal("61.36"), Decimal("15.34")),
        ("2024-05-01 07:00", "H100", "Standard", "Usage", Decimal(8), Decimal("88.48"), Decimal("88.48")),
        ("2024-05-01 07:00", "T4", "Standard", "Usage", Decimal(100), Decimal(28), Decimal(28)),
        ("2024-11-01 07:00", "L4", "Standard", "Usage", Decimal(1), Decimal("0.56"), Decimal("0.56")),
        ("2024-12-01 08:00", "L4", "Standard", "Adjustment", Decimal(0), Decimal("-0.56"), Decimal("-0.56")),
        ("2024-12-01 08:00", "L4", "Standard", "Usage", Decimal(1), Decimal("0.56"), Decimal("0.56")),
    ]
    committed_by_team = query(
        warehouse,
        """
        select team, project, sum(gpu_hours), sum(effective_cost), effective_cost_per_gpu_hour
        from marts.fct_gpu_spend_daily where pricing_category = 'Committed' group by all order by all
        """,
    )
    assert committed_by_team == [
        ("inference", "chat", Decimal(2), Decimal("15.34"), Decimal("7.67")),
        ("research", "llm", Decimal(4), Decimal("30.68"), Decimal("7.67")),
    ]
    # All spend per invoice month; the A3 host's core and RAM (7.28 + 5.616), storage and tax are not GPU.
    totals = query(
        warehouse,
        """
        select strftime(billing_period_start, '%Y-%m'), sum(billed_cost), sum(effective_cost),
               sum(gpu_effective_cost), sum(gpu_hours)
        from marts.fct_cost_daily group by 1 order by 1
        """,
    )
    assert totals == [
        ("2024-05", Decimal("239.336"), Decimal("239.336"), Decimal("213.84"), Decimal(130)),
        ("2024-11", Decimal("0.56"), Decimal("0.56"), Decimal("0.56"), Decimal(1)),
        ("2024-12", Decimal(0), Decimal(0), Decimal(0), Decimal(1)),
    ]
    # The commitment's fee and the usage its credits covered are one commitment, named by its resource.
    commitments = query(
        warehouse,
        """
        select commitment_discount_id, used_commitment_cost, unused_commitment_cost
        from marts.fct_commitment_coverage_monthly where commitment_discount_id is not null
        """,
    )
    assert commitments == [
        (
            "//compute.googleapis.com/projects/ml-training-prod/regions/us-central1/commitments/h100-commit-1y",
            Decimal("46.02"),
            Decimal("15.34"),
        )
    ]
