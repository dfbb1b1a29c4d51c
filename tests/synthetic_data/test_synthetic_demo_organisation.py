"""The demo organisation's billing exports, read back with plain csv, gzip, json and pyarrow.

Nothing here reuses the generator's internals: every layout is checked as a provider's file, and
the generator's `expected_totals.json` (built from its own ledger) is recomputed here from the files
with each format's published rules (the CID amortization for CUR, amortized vs actual datasets for
Azure, `cost + credits` for GCP, FOCUS columns for FOCUS).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from synthetic_data.cli.demo_organisation import main
from synthetic_data.demo_organisation import write_demo_organisation

SOURCES = {
    "aws_cur",
    "focus",
    "azure_actual",
    "azure_amortized",
    "gcp_billing",
    "gpu_cloud_usage",
    "onprem_gpu_assets",
}
# GPU model and count per instance type, as the dbt seed gpu_instance_types states them.
GPUS = {
    "p5.48xlarge": ("H100", 8),
    "p4d.24xlarge": ("A100 40GB", 8),
    "g5.xlarge": ("A10G", 1),
    "g5.2xlarge": ("A10G", 1),
    "g6e.xlarge": ("L40S", 1),
    "g6e.2xlarge": ("L40S", 1),
    "Standard_ND96isr_H100_v5": ("H100", 8),
    "Standard_NC24ads_A100_v4": ("A100 80GB", 1),
}
ONPREM_NUMBERS = (
    "purchase_price",
    "residual_value",
    "power_draw_kw",
    "pue",
    "electricity_price_per_kwh",
    "colocation_price_per_kw_month",
    "maintenance_per_year",
)
USAGE_TYPE = re.compile(r"^(?:[A-Z0-9]+-)?(BoxUsage|SpotUsage):(.+)$")
ZERO = Decimal(0)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("demo")
    write_demo_organisation(out_dir)
    return out_dir


@pytest.fixture(scope="module")
def expected(demo: Path) -> dict:
    return json.loads((demo / "expected_totals.json").read_text())


def deliveries(expected: dict, source: str) -> list[str]:
    return [item["path"] for item in expected["deliveries"] if item["source"] == source]


def dec(value: object) -> Decimal:
    """A file's number as the exact decimal it spells (doubles through their shortest text)."""
    if value is None or value == "":
        return ZERO
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))


def read_csv(data: bytes) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def parquet_rows(folder: Path) -> list[dict]:
    return [row for file in sorted(folder.rglob("*.parquet")) for row in pq.read_table(file).to_pylist()]


def azure_rows(folder: Path) -> tuple[dict, list[dict[str, str]]]:
    (manifest_path,) = folder.rglob("manifest.json")
    manifest = json.loads(manifest_path.read_text())
    rows = []
    for blob in manifest["blobs"]:
        rows += read_csv((manifest_path.parent / blob["blobName"].rsplit("/", 1)[1]).read_bytes())[1]
    return manifest, rows


def add(totals: dict, key: tuple, billed: Decimal, effective: Decimal) -> None:
    entry = totals.setdefault(key, [ZERO, ZERO])
    entry[0] += billed
    entry[1] += effective


# --- Deliveries and layouts -------------------------------------------------------------------


def test_every_source_delivers_and_detection_agrees_with_the_label(demo: Path, expected: dict) -> None:
    assert {item["source"] for item in expected["deliveries"]} == SOURCES
    for item in expected["deliveries"]:
        path = demo / item["path"]
        assert path.exists(), item
        assert detect_source(path) == item["source"], item
    assert sum(file.stat().st_size for file in demo.rglob("*") if file.is_file()) < 8_000_000


def test_the_api_returns_the_deliveries_it_lists(tmp_path: Path) -> None:
    returned = write_demo_organisation(tmp_path, seed=3, months=1)
    listed = json.loads((tmp_path / "expected_totals.json").read_text())["deliveries"]
    assert [(d.source, d.path.relative_to(tmp_path).as_posix()) for d in returned] == [
        (item["source"], item["path"]) for item in listed
    ]


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    for folder, seed in ((first, 7), (second, 7), (other, 8)):
        write_demo_organisation(folder, seed=seed, start_month="2026-10", months=1)
    files = sorted(path.relative_to(first) for path in first.rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(second) for path in second.rglob("*") if path.is_file())
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    changed = {
        item["source"]
        for item in json.loads((first / "expected_totals.json").read_text())["deliveries"]
        if _tree_bytes(first / item["path"]) != _tree_bytes(other / item["path"])
    }
    # The server inventory is a fixed asset register; every usage-driven source changes with the seed.
    assert changed == SOURCES - {"onprem_gpu_assets"}


def _tree_bytes(path: Path) -> list[bytes]:
    if not path.exists():
        return []
    files = sorted(path.rglob("*")) if path.is_dir() else [path]
    return [file.read_bytes() for file in files if file.is_file()]


def test_every_source_covers_at_least_sixty_days(demo: Path, expected: dict) -> None:
    days: dict[str, set[date]] = defaultdict(set)
    for path in deliveries(expected, "aws_cur"):
        folder = demo / path
        for row in parquet_rows(folder):
            days["cur2"].add(row["line_item_usage_start_date"].date())
        for file in folder.rglob("*.csv.gz"):
            for row in read_csv(gzip.decompress(file.read_bytes()))[1]:
                days["legacy"].add(date.fromisoformat(row["lineItem/UsageStartDate"][:10]))
    for path in deliveries(expected, "azure_amortized"):
        for row in azure_rows(demo / path)[1]:
            days["azure"].add(datetime.strptime(row["Date"], "%m/%d/%Y").date())
    for path in deliveries(expected, "gcp_billing"):
        for row in parquet_rows(demo / path):
            days["gcp"].add(row["usage_start_time"].date())
    for path in deliveries(expected, "gpu_cloud_usage"):
        for row in read_csv((demo / path).read_bytes())[1]:
            days[row["provider"]].add(date.fromisoformat(row["usage_start"][:10]))
    assert set(days) == {"cur2", "legacy", "azure", "gcp", "Lambda", "RunPod"}
    for name, covered in days.items():
        assert len(covered) >= 60, name


def test_every_manifest_resolves_to_exactly_its_delivery_data_files(demo: Path, expected: dict) -> None:
    """Through the connector contract: what a manifest lists is the delivery's data files, no more, no less."""
    with_manifest = 0
    for item in expected["deliveries"]:
        path = demo / item["path"]
        delivery = Delivery(source=item["source"], path=path, landing_root=path.parent)
        listed = set()
        for manifest in delivery.manifests():
            content = json.loads(manifest.read_text())
            names = content.get("dataFiles") or content.get("reportKeys") or [b["blobName"] for b in content["blobs"]]
            listed |= {delivery.resolve_listed(name, manifest=manifest) for name in names}
        if listed:
            with_manifest += 1
            assert listed == set(delivery.files()), item["path"]
    # CUR 2.0, legacy CUR, AWS FOCUS and Azure FocusCost for two months, plus four Azure EA runs.
    assert with_manifest == 12


def test_data_export_manifests_list_exactly_their_part_files(demo: Path, expected: dict) -> None:
    exports = deliveries(expected, "aws_cur")[:2] + [p for p in deliveries(expected, "focus") if "aws-focus" in p]
    assert len(exports) == 4
    for path in exports:
        folder = demo / path
        (export,) = [child.name for child in folder.iterdir()]
        (manifest_path,) = folder.rglob("*-Manifest.json")
        period = manifest_path.parent.name
        assert re.fullmatch(r"BILLING_PERIOD=2026-(09|10)", period)
        assert manifest_path == folder / export / "metadata" / period / f"{export}-Manifest.json"
        manifest = json.loads(manifest_path.read_text())
        assert manifest["executionId"] and manifest["exportArn"].startswith("arn:aws:bcm-data-exports:")
        data_dir = folder / export / "data" / period
        parts = sorted(data_dir.iterdir())
        assert parts and all(re.fullmatch(rf"{export}-\d{{5}}\.snappy\.parquet", part.name) for part in parts)
        listed = [uri.removeprefix("s3://").split("/", 1)[1] for uri in manifest["dataFiles"]]
        assert all(uri.startswith("s3://") for uri in manifest["dataFiles"])
        assert sorted(Path(key).relative_to(Path(key).parents[3]) for key in listed) == [
            part.relative_to(folder) for part in parts
        ]
        for part in parts:
            schema = pq.read_schema(part)
            assert [column["name"] for column in manifest["columns"]] == schema.names
    cur2 = pq.read_schema(next((demo / deliveries(expected, "aws_cur")[0]).rglob("*.parquet")))
    for column in ("product", "resource_tags", "cost_category"):
        assert pa.types.is_map(cur2.field(column).type), column
    assert cur2.field("line_item_unblended_cost").type == pa.float64()
    assert "bill_payer_account_name" in cur2.names


def test_cur2_bills_every_kind_of_gpu_purchase(demo: Path, expected: dict) -> None:
    rows = parquet_rows(demo / deliveries(expected, "aws_cur")[0])
    types = {(row["line_item_line_item_type"], (row["line_item_usage_type"] or "").split(":")[0]) for row in rows}
    assert {
        ("Usage", "USE2-BoxUsage"),
        ("Usage", "USW2-SpotUsage"),
        ("SavingsPlanCoveredUsage", "BoxUsage"),
        ("SavingsPlanNegation", "BoxUsage"),
        ("SavingsPlanRecurringFee", "ComputeSP"),
        ("DiscountedUsage", "BoxUsage"),
        ("RIFee", "HeavyUsage"),
        ("Usage", "TimedStorage-ByteHrs"),
        ("Tax", ""),
    } <= types
    spot = [row for row in rows if "SpotUsage" in (row["line_item_usage_type"] or "")]
    sparse = [row for row in spot if row["product_instance_type"] is None]
    assert 0 < len(sparse) < len(spot)
    assert all(row["line_item_line_item_description"].startswith("p4d.24xlarge ") for row in sparse)
    for row in spot:
        discount = 1 - dec(row["line_item_unblended_cost"]) / dec(row["pricing_public_on_demand_cost"])
        assert Decimal("0.6") <= discount <= Decimal("0.9")
    usage = [row for row in rows if row["line_item_line_item_type"] in ("Usage", "DiscountedUsage")]
    assert all(row["pricing_public_on_demand_cost"] is not None for row in usage)
    billed = [row for row in rows if row["split_line_item_parent_resource_id"] is None]
    tags = {tuple(sorted(dict(row["resource_tags"]))) for row in billed if row["resource_tags"]}
    assert tags == {("user_project", "user_team")}


def test_cur2_splits_its_eks_gpu_nodes_hour_by_hour_into_pods_and_unused(demo: Path, expected: dict) -> None:
    rows = parquet_rows(demo / deliveries(expected, "aws_cur")[0])
    amortized: dict[tuple[str, object], Decimal] = defaultdict(Decimal)
    for row in rows:
        if row["split_line_item_parent_resource_id"] is None and row["line_item_resource_id"]:
            amortized[(row["line_item_resource_id"], row["line_item_usage_start_date"])] += _cur2_effective(row)
    split: dict[tuple[str, object], Decimal] = defaultdict(Decimal)
    pods_by_node: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        parent = row["split_line_item_parent_resource_id"]
        if parent is None:
            continue
        assert dec(row["line_item_unblended_cost"]) == 0  # the instance's line holds the cost
        key = (parent, row["line_item_usage_start_date"])
        if ":pod/" in row["line_item_resource_id"]:
            split[key] += dec(row["split_line_item_split_cost"])
            pods_by_node[parent].add(row["line_item_resource_id"].split("/")[3])
        else:
            assert row["line_item_resource_id"] == parent and row["split_line_item_split_cost"] is None
            split[key] += dec(row["split_line_item_unused_cost"])
    # the capacity view (pods' split cost + the unused row) is each EKS node's amortized cost, hour by hour
    assert split and all(split[key] == amortized[key] for key in split)
    assert sorted(map(sorted, pods_by_node.values())) == [
        ["llm-eval-0", "nb-alice", "nb-bob", "vision-embed", "vision-eval-a", "vision-eval-b"],
        ["vllm-llama-3-1-8b-0", "vllm-qwen2-5-72b-0"],
    ]


def test_legacy_cur_manifest_names_its_assembly_and_the_header_varies_by_month(demo: Path, expected: dict) -> None:
    headers = {}
    for path in deliveries(expected, "aws_cur")[2:]:
        folder = demo / path
        span = folder.name
        (manifest_path,) = folder.glob("*-Manifest.json")
        manifest = json.loads(manifest_path.read_text())
        (key,) = manifest["reportKeys"]
        assert key.split("/")[-3:-1] == [span, manifest["assemblyId"]]
        (data,) = folder.rglob("*.csv.gz")
        assert data.relative_to(folder).as_posix() == "/".join(key.split("/")[-2:])
        header, rows = read_csv(gzip.decompress(data.read_bytes()))
        assert header == [f"{column['category']}/{column['name']}" for column in manifest["columns"]]
        assert manifest["billingPeriod"]["start"].startswith(span[:8])
        assert {row["bill/BillingPeriodStartDate"][:10] for row in rows} == {f"{span[:4]}-{span[4:6]}-01"}
        assert {row["lineItem/UsageType"].split(":")[-1] for row in rows if "Usage:" in row["lineItem/UsageType"]} == {
            "g5.2xlarge",
            "g6e.2xlarge",
            "g6e.xlarge",
        }
        headers[span] = set(header)
    september, october = (headers[span] for span in sorted(headers))
    assert "resourceTags/user:team" in september and "resourceTags/user:team" in october
    assert october - september == {"resourceTags/user:project"}


def test_azure_runs_list_their_blobs_with_bom_us_dates_and_braceless_tags(demo: Path, expected: dict) -> None:
    kinds = {"azure_actual": "ActualCost", "azure_amortized": "AmortizedCost"}
    charge_types = {}
    for source, dataset in [*kinds.items(), ("focus", "FocusCost")]:
        for path in deliveries(expected, source):
            if source == "focus" and "cost-exports" not in path:
                continue
            folder = demo / path
            (manifest_path,) = folder.rglob("manifest.json")
            manifest = json.loads(manifest_path.read_text())
            assert manifest["exportConfig"]["type"] == dataset
            files = sorted(file.name for file in manifest_path.parent.iterdir() if file.name != "manifest.json")
            assert sorted(blob["blobName"].rsplit("/", 1)[1] for blob in manifest["blobs"]) == files
            for blob in manifest["blobs"]:
                data = (manifest_path.parent / blob["blobName"].rsplit("/", 1)[1]).read_bytes()
                assert blob["byteCount"] == len(data)
                assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data
                local = manifest_path.parent / blob["blobName"].rsplit("/", 1)[1]
                assert blob["blobName"].endswith(local.relative_to(folder.parents[1]).as_posix())
            if source == "focus":
                continue
            _, rows = azure_rows(folder)
            assert all(re.fullmatch(r"\d{2}/\d{2}/\d{4}", row["Date"]) for row in rows)
            tagged = [row["Tags"] for row in rows if row["Tags"]]
            assert tagged and all(tag.startswith('"team": ') and not tag.startswith("{") for tag in tagged)
            assert all(json.loads("{" + tag + "}").keys() == {"team", "project"} for tag in tagged)
            charge_types.setdefault(source, set()).update((row["ChargeType"], row["PricingModel"]) for row in rows)
    assert charge_types["azure_actual"] == {
        ("Usage", "OnDemand"),
        ("Usage", "Spot"),
        ("Usage", "Reservation"),
        ("Purchase", "Reservation"),
    }
    assert charge_types["azure_amortized"] == {
        ("Usage", "OnDemand"),
        ("Usage", "Spot"),
        ("Usage", "Reservation"),
        ("UnusedReservation", "Reservation"),
    }


def test_gcp_export_keeps_the_nested_bigquery_schema(demo: Path, expected: dict) -> None:
    folders = deliveries(expected, "gcp_billing")
    assert [Path(path).name for path in folders] == ["billing-export-202609", "billing-export-202610"]
    schema = pq.read_schema(next((demo / folders[0]).glob("*.parquet")))
    assert pa.types.is_list(schema.field("credits").type)
    assert schema.field("credits").type.value_type.names == ["name", "amount", "full_name", "id", "type"]
    assert schema.field("labels").type.value_type.names == ["key", "value"]
    assert schema.field("invoice").type.names == ["month", "publisher_type"]
    assert schema.field("cost").type == pa.float64()
    for path in folders:
        shards = sorted(file.name for file in (demo / path).iterdir())
        assert shards[0] == "000000000000.parquet" and len(shards) >= 2
        rows = parquet_rows(demo / path)
        month = Path(path).name.rsplit("-", 1)[1]
        assert {row["invoice"]["month"] for row in rows} == {month}
        # Invoice months run on US Pacific time: local midnight is 07:00 UTC in September and October.
        start = datetime(int(month[:4]), int(month[4:]), 1, 7, tzinfo=UTC)
        assert min(row["usage_start_time"] for row in rows) == start
        assert all(row["usage_end_time"] - row["usage_start_time"] == timedelta(hours=1) for row in rows)
        skus = {row["sku"]["description"] for row in rows}
        assert {
            "Nvidia H100 80GB GPU running in Americas",
            "Spot Preemptible Nvidia H100 80GB GPU running in Americas",
            "Commitment v1: Nvidia H100 GPU in Americas for 1 Year",
            "A3 Instance Core running in Americas",
            "A3 Instance Ram running in Americas",
            "Analysis (US)",
        } <= skus
        credit_types = {credit["type"] for row in rows for credit in row["credits"]}
        assert credit_types == {"COMMITTED_USAGE_DISCOUNT"}


def test_gpu_cloud_usage_follows_the_csv_contract(demo: Path, expected: dict) -> None:
    providers = set()
    for path in deliveries(expected, "gpu_cloud_usage"):
        header, rows = read_csv((demo / path).read_bytes())
        assert header == [
            "provider",
            "account_id",
            "account_name",
            "resource_id",
            "resource_name",
            "region",
            "gpu_model",
            "gpu_count",
            "pricing_model",
            "usage_start",
            "usage_end",
            "usage_hours",
            "unit_price",
            "cost",
            "currency",
            "description",
            "tags",
            "list_unit_price",
        ]
        for row in rows:
            hours = Decimal(row["usage_hours"])
            assert Decimal(row["cost"]) == Decimal(row["unit_price"]) * hours
            assert re.fullmatch(r"\d+\.\d{2}", row["cost"])
            start, end = (
                datetime.fromisoformat(row[name].replace("Z", "+00:00")) for name in ("usage_start", "usage_end")
            )
            assert Decimal((end - start).total_seconds()) / 3600 == hours > 0
            assert start.date() == (end - timedelta(microseconds=1)).date()
            assert row["pricing_model"] in {"on_demand", "spot", "reserved"}
            assert isinstance(json.loads(row["tags"]), dict)
            # Specialized clouds: A100 at 1-2 USD and H100 at 2-4 USD per GPU-hour; spot at least 60% below.
            assert Decimal(1) <= Decimal(row["list_unit_price"]) / int(row["gpu_count"]) <= Decimal(4)
            if row["pricing_model"] == "spot":
                assert Decimal(row["unit_price"]) <= Decimal("0.4") * Decimal(row["list_unit_price"])
            providers.add((row["provider"], row["gpu_model"], row["pricing_model"]))
    assert providers == {
        ("Lambda", "H100", "on_demand"),
        ("Lambda", "H100", "reserved"),
        ("Lambda", "A100 40GB", "on_demand"),
        ("RunPod", "A100 80GB", "spot"),
        ("RunPod", "A100 80GB", "on_demand"),
    }


def test_the_last_month_carries_the_documented_spend_events(demo: Path, expected: dict) -> None:
    """The demo events (docs/spend-anomalies-and-forecast.md): each in the usage files on its days, nowhere else."""
    per_day: dict[tuple[str, str], dict[tuple[str, str], Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    hours: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for path in deliveries(expected, "gpu_cloud_usage"):
        for row in read_csv((demo / path).read_bytes())[1]:
            fleet = row["resource_name"].rsplit("-", 1)[0]
            key = (fleet, row["usage_start"][:10])
            per_day[key][(row["pricing_model"], row["unit_price"])] += Decimal(row["cost"])
            hours[key] += Decimal(row["usage_hours"])
    october = [f"2026-10-{day:02d}" for day in range(1, 32)]
    september = [f"2026-09-{day:02d}" for day in range(1, 31)]
    # Forgotten node: 24 h a day from 13 through 19 October at 23.92 an hour, never before or after.
    notebook_days = sorted(day for fleet, day in per_day if fleet == "h100x8-notebook")
    assert notebook_days == october[12:19]
    for day in notebook_days:
        assert per_day[("h100x8-notebook", day)] == {("on_demand", "23.92"): Decimal("574.08")}
    # Price change: eight always-on 1×A100 at 1.28 an hour until 14 October, 1.68 from the 15th.
    for day in september + october:
        price = "1.28" if day < "2026-10-15" else "1.68"
        assert per_day[("a100-serve", day)] == {("on_demand", price): Decimal(price) * 24 * 8}
    # Reservation expiring: reserved at 15.92 through 22 October, then on demand at 23.92.
    for day in september + october:
        model, price = ("reserved", "15.92") if day <= "2026-10-22" else ("on_demand", "23.92")
        assert per_day[("h100x8-serve", day)] == {(model, price): Decimal(price) * 24}
    # Spot fallback: the three recsys pods on demand around the clock on 20-22 October, spot on every other day.
    for day in september + october:
        billed = per_day.get(("recsys-train", day), {})
        if day in october[19:22]:
            assert billed == {("on_demand", "2.38"): Decimal("2.38") * 24 * 3}
            assert hours[("recsys-train", day)] == 72
        else:
            assert {model for model, _ in billed} <= {"spot"}


def test_onprem_inventory_follows_the_csv_contract(demo: Path, expected: dict) -> None:
    (path,) = deliveries(expected, "onprem_gpu_assets")
    header, rows = read_csv((demo / path).read_bytes())
    assert header == [
        "asset_id",
        "site",
        "hostname",
        "gpu_model",
        "gpu_count",
        "purchase_date",
        "purchase_price",
        "currency",
        "depreciation_years",
        "residual_value",
        "power_draw_kw",
        "pue",
        "electricity_price_per_kwh",
        "colocation_price_per_kw_month",
        "maintenance_per_year",
        "team",
        "project",
        "retired_date",
    ]
    for row in rows:
        assert (row["gpu_model"], row["gpu_count"], row["currency"], row["retired_date"]) == ("H100", "8", "EUR", "")
        assert Decimal(250_000) <= Decimal(row["purchase_price"]) <= Decimal(350_000)
        assert date.fromisoformat(row["purchase_date"]) < date(2026, 9, 1)


# --- One organisation -------------------------------------------------------------------------


def test_every_tag_names_a_team_and_project_of_the_organisation(demo: Path, expected: dict) -> None:
    teams = {team: set(projects) for team, projects in expected["teams"].items()}
    seen: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for path in deliveries(expected, "aws_cur"):
        for row in parquet_rows(demo / path):
            tags = dict(row["resource_tags"] or [])
            if tags and row["split_line_item_parent_resource_id"] is None:  # split rows carry the EKS tags
                seen["cur2"].add((tags["user_team"], tags["user_project"]))
        for file in (demo / path).rglob("*.csv.gz"):
            for row in read_csv(gzip.decompress(file.read_bytes()))[1]:
                if row["resourceTags/user:team"]:
                    seen["legacy"].add((row["resourceTags/user:team"], row.get("resourceTags/user:project") or None))
    for path in deliveries(expected, "focus"):
        folder = demo / path
        rows = parquet_rows(folder) if "aws-focus" in path else azure_rows(folder)[1]
        for row in rows:
            tags = row["Tags"]
            tags = dict(tags) if isinstance(tags, list) else json.loads(tags) if tags else {}
            if tags:
                seen["focus"].add((tags["team"], tags["project"]))
    for path in deliveries(expected, "azure_actual"):
        for row in azure_rows(demo / path)[1]:
            if row["Tags"]:
                tags = json.loads("{" + row["Tags"] + "}")
                seen["azure"].add((tags["team"], tags["project"]))
    for path in deliveries(expected, "gcp_billing"):
        for row in parquet_rows(demo / path):
            for labels in (row["labels"], row["project"]["labels"]):
                if labels:
                    tags = {label["key"]: label["value"] for label in labels}
                    seen["gcp"].add((tags["team"], tags["project"]))
    for path in deliveries(expected, "gpu_cloud_usage"):
        for row in read_csv((demo / path).read_bytes())[1]:
            tags = json.loads(row["tags"])
            seen[row["provider"]].add((tags["team"], tags["project"]))
    for row in read_csv((demo / deliveries(expected, "onprem_gpu_assets")[0]).read_bytes())[1]:
        seen["onprem"].add((row["team"], row["project"]))
    assert set(seen) == {"cur2", "legacy", "focus", "azure", "gcp", "Lambda", "RunPod", "onprem"}
    for where, pairs in seen.items():
        for team, project in pairs:
            assert team in teams and (project is None or project in teams[team]), (where, team, project)
    assert {team for pairs in seen.values() for team, _ in pairs} == set(teams)


# --- Expected totals --------------------------------------------------------------------------


def test_expected_totals_agree_with_the_files(demo: Path, expected: dict) -> None:
    """Billed, effective and GPU-hours recomputed from the files with each format's own rules."""
    money: dict[tuple, list[Decimal]] = {}
    hours: dict[tuple, Decimal] = defaultdict(lambda: ZERO)
    for path in deliveries(expected, "aws_cur"):
        folder = demo / path
        for row in parquet_rows(folder):
            key = (
                "aws_cur",
                row["bill_payer_account_id"],
                row["bill_billing_period_start_date"].date().isoformat(),
                "USD",
            )
            add(money, key, dec(row["line_item_unblended_cost"]), _cur2_effective(row))
            _cur_gpu_hours(
                hours,
                key[2],
                row["line_item_line_item_type"],
                row["line_item_usage_type"],
                row["line_item_usage_amount"],
            )
        for file in folder.rglob("*.csv.gz"):
            for row in read_csv(gzip.decompress(file.read_bytes()))[1]:
                period = row["bill/BillingPeriodStartDate"][:10]
                cost = dec(row["lineItem/UnblendedCost"])
                add(money, ("aws_cur", row["bill/PayerAccountId"], period, "USD"), cost, cost)
                _cur_gpu_hours(
                    hours, period, row["lineItem/LineItemType"], row["lineItem/UsageType"], row["lineItem/UsageAmount"]
                )
    for path in deliveries(expected, "focus"):
        folder = demo / path
        rows = parquet_rows(folder) if "aws-focus" in path else azure_rows(folder)[1]
        for row in rows:
            period = str(row["BillingPeriodStart"])[:10]
            key = ("focus", row["BillingAccountId"], period, row["BillingCurrency"])
            add(money, key, dec(row["BilledCost"]), dec(row["EffectiveCost"]))
            details = row["SkuPriceDetails"]
            details = dict(details) if isinstance(details, list) else json.loads(details) if details else {}
            if (
                row["ChargeCategory"] == "Usage"
                and row["CommitmentDiscountStatus"] != "Unused"
                and "GpuCount" in details
            ):
                model = GPUS[details["InstanceType"]][0]
                hours[(row["ProviderName"], period, model, row["PricingCategory"])] += dec(
                    row["PricingQuantity"]
                ) * int(details["GpuCount"])
    for source, cost_side in (("azure_actual", 0), ("azure_amortized", 1)):
        for path in deliveries(expected, source):
            for row in azure_rows(demo / path)[1]:
                period = datetime.strptime(row["BillingPeriodStartDate"], "%m/%d/%Y").date().isoformat()
                cost = dec(row["CostInBillingCurrency"])
                add(
                    money,
                    ("azure", row["BillingAccountId"], period, "USD"),
                    *((cost, ZERO) if cost_side == 0 else (ZERO, cost)),
                )
                if cost_side == 1 and row["ChargeType"] == "Usage" and row["MeterCategory"] == "Virtual Machines":
                    model, count = GPUS[json.loads(row["AdditionalInfo"])["ServiceType"]]
                    category = {"OnDemand": "Standard", "Spot": "Dynamic", "Reservation": "Committed"}[
                        row["PricingModel"]
                    ]
                    hours[("Microsoft", period, model, category)] += dec(row["Quantity"]) * count
    for path in deliveries(expected, "gcp_billing"):
        for row in parquet_rows(demo / path):
            month = row["invoice"]["month"]
            period = f"{month[:4]}-{month[4:]}-01"
            net = dec(row["cost"]) + sum((dec(credit["amount"]) for credit in row["credits"]), ZERO)
            add(money, ("gcp_billing", row["billing_account_id"], period, row["currency"]), net, net)
            sku = row["sku"]["description"]
            if "GPU" in sku and not sku.startswith("Commitment"):
                committed = any(credit["type"] == "COMMITTED_USAGE_DISCOUNT" for credit in row["credits"])
                category = "Dynamic" if sku.startswith("Spot") else "Committed" if committed else "Standard"
                hours[("Google Cloud", period, "H100", category)] += dec(row["usage"]["amount_in_pricing_units"])
    for path in deliveries(expected, "gpu_cloud_usage"):
        for row in read_csv((demo / path).read_bytes())[1]:
            period = row["usage_start"][:8] + "01"
            add(
                money,
                ("gpu_cloud_usage", row["account_id"], period, row["currency"]),
                dec(row["cost"]),
                dec(row["cost"]),
            )
            category = {"on_demand": "Standard", "spot": "Dynamic", "reserved": "Committed"}[row["pricing_model"]]
            hours[(row["provider"], period, row["gpu_model"], category)] += dec(row["usage_hours"]) * int(
                row["gpu_count"]
            )

    billing = {
        (
            "azure" if entry["sources"][0].startswith("azure") else entry["sources"][0],
            entry["billing_account_id"],
            entry["billing_period_start"],
            entry["billing_currency"],
        ): [Decimal(entry["billed_cost"]), Decimal(entry["effective_cost"])]
        for entry in expected["billing"]
        if entry["sources"] != ["onprem_gpu_assets"]
    }
    assert money == billing
    gpu_hours: dict[tuple, Decimal] = defaultdict(lambda: ZERO)
    for entry in expected["gpu_hours"]:
        gpu_hours[
            (entry["provider"], entry["billing_period_start"], entry["gpu_model"], entry["pricing_category"])
        ] += Decimal(entry["gpu_hours"])
    assert hours == gpu_hours


def _cur2_effective(row: dict) -> Decimal:
    """The CID amortization formula (billing-exports.md §2.7)."""
    kind = row["line_item_line_item_type"]
    if kind == "SavingsPlanCoveredUsage":
        return dec(row["savings_plan_savings_plan_effective_cost"])
    if kind == "SavingsPlanNegation":
        return ZERO
    if kind == "SavingsPlanRecurringFee":
        return dec(row["savings_plan_total_commitment_to_date"]) - dec(row["savings_plan_used_commitment"])
    if kind == "DiscountedUsage":
        return dec(row["reservation_effective_cost"])
    if kind == "RIFee":
        return dec(row["reservation_unused_amortized_upfront_fee_for_billing_period"]) + dec(
            row["reservation_unused_recurring_fee"]
        )
    return dec(row["line_item_unblended_cost"])


def _cur_gpu_hours(hours: dict, period: str, line_type: str, usage_type: str | None, amount: object) -> None:
    match = USAGE_TYPE.match(usage_type or "")
    if not match or line_type not in ("Usage", "SavingsPlanCoveredUsage", "DiscountedUsage") or match[2] not in GPUS:
        return
    model, count = GPUS[match[2]]
    category = "Dynamic" if match[1] == "SpotUsage" else "Standard" if line_type == "Usage" else "Committed"
    hours[("AWS", period, model, category)] += dec(amount) * count


def test_commitments_make_effective_cost_differ_from_billed_where_they_should(expected: dict) -> None:
    by_source = defaultdict(list)
    for entry in expected["billing"]:
        by_source[entry["sources"][0]].append(Decimal(entry["effective_cost"]) - Decimal(entry["billed_cost"]))
    # The RI's upfront fee was paid before the window: amortized, it adds 18.00 per reserved hour.
    cur2 = [entry for entry in expected["billing"] if entry["billing_account_id"] == "445566778899"]
    assert [Decimal(e["effective_cost"]) - Decimal(e["billed_cost"]) for e in cur2] == [18 * 720, 18 * 744]
    assert any(gap != 0 for gap in by_source["azure_actual"])
    for source in ("gcp_billing", "gpu_cloud_usage"):
        assert all(gap == 0 for gap in by_source[source]), source


def test_expected_totals_are_internally_consistent(expected: dict) -> None:
    teams = set(expected["teams"])
    effective = defaultdict(lambda: ZERO)
    for entry in expected["billing"]:
        effective[(tuple(entry["sources"]), entry["billing_period_start"], entry["billing_currency"])] += Decimal(
            entry["effective_cost"]
        )
    team_costs = defaultdict(lambda: ZERO)
    for entry in expected["team_gpu_effective_cost"]:
        assert entry["team"] is None or entry["team"] in teams
        team_costs[(tuple(entry["sources"]), entry["billing_period_start"], entry["billing_currency"])] += Decimal(
            entry["effective_cost"]
        )
    assert set(team_costs) <= set(effective)
    for key, cost in team_costs.items():
        assert 0 < cost <= effective[key], key
    assert {entry["pricing_category"] for entry in expected["gpu_hours"]} == {"Standard", "Dynamic", "Committed"}
    assert all(Decimal(entry["gpu_hours"]) > 0 for entry in expected["gpu_hours"])
    periods = {
        entry["billing_period_start"] for entry in expected["billing"] if entry["sources"] != ["onprem_gpu_assets"]
    }
    assert periods == {"2026-09-01", "2026-10-01"}


def test_onprem_totals_follow_the_depreciation_and_running_cost_formulas(demo: Path, expected: dict) -> None:
    assert expected["onprem_costs_through"] == "2026-10-31"
    through = date(2026, 10, 31)
    servers = {
        row["asset_id"]: row for row in read_csv((demo / deliveries(expected, "onprem_gpu_assets")[0]).read_bytes())[1]
    }
    days_by_month: dict[tuple[str, str], int] = defaultdict(int)
    for asset_id, server in servers.items():
        day = date.fromisoformat(server["purchase_date"])
        while day <= through:
            days_by_month[(asset_id, day.replace(day=1).isoformat())] += 1
            day += timedelta(days=1)
    assert {(entry["asset_id"], entry["billing_period_start"]) for entry in expected["onprem"]} == set(days_by_month)
    for entry in expected["onprem"]:
        server = servers[entry["asset_id"]]
        days = days_by_month[(entry["asset_id"], entry["billing_period_start"])]
        value = {name: Decimal(server[name]) for name in ONPREM_NUMBERS}
        daily = {
            "depreciation": (value["purchase_price"] - value["residual_value"])
            / (int(server["depreciation_years"]) * 365),
            "energy": value["power_draw_kw"] * value["pue"] * 24 * value["electricity_price_per_kwh"],
            "colocation": value["power_draw_kw"] * value["colocation_price_per_kw_month"] * 12 / 365,
            "maintenance": value["maintenance_per_year"] / 365,
        }
        assert entry["days"] == days
        for name, per_day in daily.items():
            assert Decimal(entry[name]) == per_day * days, (entry["asset_id"], name)
        assert Decimal(entry["total"]) == sum(Decimal(entry[name]) for name in daily)


def test_command_line_writes_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--seed", "3", "--months", "1", "--start-month", "2026-12"]) == 0
    out = capsys.readouterr().out
    assert "expected_totals.json" in out and "gcp_billing" in out
    assert (tmp_path / "gcp_billing" / "billing-export-202612").is_dir()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "bad"), "--start-month", "2026-9"])
