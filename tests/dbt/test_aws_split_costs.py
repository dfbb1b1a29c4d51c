"""AWS's own split of an EKS GPU node (CUR 2.0 split cost allocation data) on a real dbt build, reconciled with ours.

One CUR 2.0 Parquet delivery (with its manifest) for October 2026 bills the EKS node i-0eks0gpu0000001, a
p4de.24xlarge (8×A100 80GB), 24 hourly on-demand lines of 40.96 on 5 October: 983.04 for 192 GPU-hours, 5.12 a
GPU-hour. Beside them, AWS's split rows of that instance, each hour:

- one row per pod and resource (`…EKS-EC2-GPU-Hours`, `…EKS-EC2-vCPU-Hours`), the pod named by its ARN
  `arn:aws:eks:…:pod/<cluster>/<namespace>/<pod>/<uid>`: research/train-0 hours 0-11 and data/etl-3 hours 6-10 on a
  GPU, inference/serve-7 hours 12-23, and kube-system/coredns (CPU only) all day; sandbox/notebook-1, which our
  telemetry sees for half an hour, is not split by AWS;
- each pod row also carries its pod-view share of the hour's unused cost (split_line_item_unused_cost);
- the explicit unused row of the instance (its resource id the instance's), except in hours 6-9, where only the
  pods' shares say what was unused; in hours 20-23 AWS's unused row is 0.125 short, so AWS's split of the day falls
  0.50 short of the bill.

Every split row bills 0 (its cost is the instance line's). The telemetry is the recorded DCGM answer of
tests/dbt/test_gpu_cost_allocation.py with its `resource_id` label set to the instance id. Expected figures are
computed here from the rows as written (Decimal) and the recording's samples.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from pipelines.lib.catalog.billing import AWS_CUR
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import fetch_prometheus_days
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.dbt.test_gpu_cost_allocation import RECORDING, held_gpu_hours
from tests.support.aws_fixtures import CUR2_SCHEMA, cur2_manifest, write_json, write_parquet
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
INSTANCE = "i-0eks0gpu0000001"
CLUSTER = "gpu-cluster"
ACCOUNT = "444455556666"
HOURLY_COST = Decimal("40.96")
GPUS = 8
CENT = Decimal("0.01")
SEED = DBT_PROJECT_DIR / "seeds" / "kubernetes_namespace_teams.csv"
EXPORT = "eks-export"
EXECUTION = "3c1d7e52-9a4b-4f0e-8d21-6b7a5c4e3f10"

SPLIT_DOUBLES = [
    "split_line_item_reserved_usage",
    "split_line_item_actual_usage",
    "split_line_item_split_usage",
    "split_line_item_split_usage_ratio",
    "split_line_item_unused_cost",
    "split_line_item_public_on_demand_split_cost",
    "split_line_item_public_on_demand_unused_cost",
]
SCHEMA = pa.schema(
    [*CUR2_SCHEMA, pa.field("split_line_item_parent_resource_id", pa.string())]
    + [pa.field(name, pa.float64()) for name in SPLIT_DOUBLES]
)
# (namespace, pod) -> hours AWS split it in, its GPU and vCPU split cost per hour
AWS_PODS = {
    ("research", "train-0"): (range(0, 12), Decimal("5.12"), Decimal("0.40")),
    ("data", "etl-3"): (range(6, 11), Decimal("5.12"), Decimal("0.20")),
    ("inference", "serve-7"): (range(12, 24), Decimal("5.12"), Decimal("0.40")),
    ("kube-system", "coredns-5d78c9869d-x7kqp"): (range(24), None, Decimal("0.05")),
}
HOURS_WITHOUT_UNUSED_ROW = range(6, 10)
HOURS_SHORT = range(20, 24)
SHORTFALL = Decimal("0.125")


def _base(hour: int, **values) -> dict:
    start = datetime(2026, 10, 5, hour)
    return {
        "bill_invoicing_entity": "Amazon Web Services, Inc.",
        "bill_billing_entity": "AWS",
        "bill_bill_type": "Anniversary",
        "bill_payer_account_id": "111122223333",
        "bill_payer_account_name": "research-payer",
        "bill_billing_period_start_date": datetime(2026, 10, 1),
        "bill_billing_period_end_date": datetime(2026, 11, 1),
        "line_item_usage_account_id": ACCOUNT,
        "line_item_usage_account_name": "ml-platform",
        "line_item_currency_code": "USD",
        "line_item_legal_entity": "Amazon Web Services, Inc.",
        "line_item_usage_start_date": start,
        "line_item_usage_end_date": start + timedelta(hours=1),
        "identity_time_interval": f"{start:%Y-%m-%dT%H}:00:00Z/{start + timedelta(hours=1):%Y-%m-%dT%H}:00:00Z",
        "product_region_code": "us-east-1",
        "product_instance_type": "p4de.24xlarge",
        "product": [("product_name", "Amazon Elastic Compute Cloud"), ("region", "us-east-1")],
        "resource_tags": [("user_team", "platform")],
    } | values


def _split(hour: int, resource_id: str, usage_type: str, split: Decimal | None, unused: Decimal) -> dict:
    """A split row: no billed cost of its own, the parent instance named."""
    return _base(
        hour,
        identity_line_item_id=f"split-{hour:02d}-{resource_id}-{usage_type}",
        line_item_line_item_type="Usage",
        line_item_product_code="AmazonEKS",
        line_item_operation="EKSPod-EC2",
        line_item_usage_type=f"USE1-EKS-EC2-{usage_type}",
        line_item_resource_id=resource_id,
        line_item_usage_amount=1.0,
        line_item_unblended_cost=0.0,
        pricing_unit="Hrs",  # hourly like the instance's, so an instance type on it would count GPU-hours again
        split_line_item_parent_resource_id=INSTANCE,
        split_line_item_split_usage=1.0,
        split_line_item_split_cost=None if split is None else float(split),
        split_line_item_unused_cost=float(unused),
        split_line_item_public_on_demand_split_cost=None if split is None else float(split),
    )


def pod_arn(namespace: str, pod: str) -> str:
    return f"arn:aws:eks:us-east-1:{ACCOUNT}:pod/{CLUSTER}/{namespace}/{pod}/5f0c2a4e-{len(pod):04d}"


def cur_rows() -> list[dict]:
    rows = []
    for hour in range(24):
        rows.append(
            _base(
                hour,
                identity_line_item_id=f"ec2-{hour:02d}",
                line_item_line_item_type="Usage",
                line_item_product_code="AmazonEC2",
                line_item_operation="RunInstances",
                line_item_usage_type="BoxUsage:p4de.24xlarge",
                line_item_resource_id=INSTANCE,
                line_item_usage_amount=1.0,
                line_item_unblended_rate=float(HOURLY_COST),
                line_item_unblended_cost=float(HOURLY_COST),
                pricing_public_on_demand_cost=float(HOURLY_COST),
                pricing_unit="Hrs",
            )
        )
        pods = [(key, gpu, cpu) for key, (hours, gpu, cpu) in AWS_PODS.items() if hour in hours]
        split_total = sum((gpu or 0) + cpu for _, gpu, cpu in pods)
        unused = HOURLY_COST - split_total
        # the pods' pod-view shares of the unused cost, by their split cost, the last taking the remainder
        shares = [(unused * ((gpu or 0) + cpu) / split_total).quantize(Decimal("0.0001")) for _, gpu, cpu in pods]
        shares[-1] = unused - sum(shares[:-1])
        for ((namespace, pod), gpu, cpu), share in zip(pods, shares, strict=True):
            arn = pod_arn(namespace, pod)
            if gpu is not None:
                rows.append(_split(hour, arn, "GPU-Hours", gpu, share))
                rows.append(_split(hour, arn, "vCPU-Hours", cpu, Decimal(0)))
            else:
                rows.append(_split(hour, arn, "vCPU-Hours", cpu, share))
        if hour not in HOURS_WITHOUT_UNUSED_ROW:
            recorded = unused - (SHORTFALL if hour in HOURS_SHORT else 0)
            rows.append(_split(hour, INSTANCE, "GPU-Hours", None, recorded))
    return rows


def write_delivery(root: Path) -> Path:
    export = root / "exports" / EXPORT
    relative = f"data/BILLING_PERIOD=2026-10/{EXPORT}-00001.snappy.parquet"
    write_parquet(export / relative, cur_rows(), SCHEMA)
    manifest = cur2_manifest(EXPORT, "2026-10", EXECUTION, [f"s3://finops-exports/exports/{EXPORT}/{relative}"])
    write_json(export / "metadata" / "BILLING_PERIOD=2026-10" / f"{EXPORT}-Manifest.json", manifest)
    return export


def dbt_build(home: FinopsHome, work: Path, select: list[str], variables: dict | None = None) -> str:
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": DAY.isoformat()}
    command = ["build", "--select", *select, "--exclude", "test_type:unit", "--indirect-selection", "cautious"]
    if variables:
        command += ["--vars", json.dumps(variables)]
    command += ["--log-path", str(work / "logs")]
    build = run_dbt(home.root, work / "target", *command, environment=env)
    assert build.returncode == 0, build.stdout[-4000:]
    return build.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("aws_split")
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "aws_cur", write_delivery(tmp_path / "delivery"))
    recording = json.loads(RECORDING.read_text())
    for series in recording["data"]["result"]:
        series["metric"]["resource_id"] = INSTANCE
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        server.route("/api/v1/query_range", Reply(json.dumps(recording).encode()))
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, AWS_CUR, log=log)] == ["loaded"]
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE",),
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
    output = dbt_build(
        home, tmp_path,
        ["+fct_gpu_cost_allocation_provider_reconciliation", "+reconciliation", "+reconciliation_invoices"],
    )  # fmt: skip
    for test in ("assert_aws_split_rows_carry_no_cost", "assert_marts_reconcile_to_raw",
                 "assert_gpu_cost_allocation_reconciles_to_node_cost"):  # fmt: skip
        assert test in output
    return home


def expected_aws_split() -> dict[tuple[str, str | None], Decimal]:
    """(allocation type, pod) -> AWS's capacity-view amount, from the rows as written."""
    totals: dict[tuple[str, str | None], Decimal] = defaultdict(Decimal)
    for row in cur_rows():
        if row.get("split_line_item_parent_resource_id") is None:
            continue
        split = Decimal(str(row["split_line_item_split_cost"] or 0))
        unused = Decimal(str(row["split_line_item_unused_cost"]))
        hour = row["line_item_usage_start_date"].hour
        if ":pod/" in row["line_item_resource_id"]:
            totals[("pod", row["line_item_resource_id"].split("/")[3])] += split
            if hour in HOURS_WITHOUT_UNUSED_ROW:
                totals[("unused", None)] += unused
        else:
            totals[("unused", None)] += split + unused
    return dict(totals)


def test_awss_split_is_the_capacity_view_pods_plus_the_unused_row_never_both(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select allocation_type, namespace, pod, cluster_name, allocated_cost, pod_unused_cost, gpu_split_usage "
        "from intermediate.int_gpu_allocation__aws_split_daily where resource_id = 'i-0eks0gpu0000001' "
        "and usage_date = '2026-10-05'",
    )
    assert {(row[0], row[2]): row[4] for row in rows} == expected_aws_split()
    pods = {row[2]: row for row in rows if row[0] == "pod"}
    assert {(pod, row[1]) for pod, row in pods.items()} == {(key[1], key[0]) for key in AWS_PODS}
    assert {row[3] for row in rows} == {CLUSTER}
    # hand-computed: train-0 12 h × 5.52; the day's split + unused is the bill less the 4 × 0.125 AWS left out
    assert pods["train-0"][4] == Decimal("66.24")
    assert sum(row[4] for row in rows) == 24 * HOURLY_COST - 4 * SHORTFALL == Decimal("982.54")
    assert pods["etl-3"][6] == Decimal(5) and pods["coredns-5d78c9869d-x7kqp"][6] is None
    # the pod view's shares are kept beside, never added: with them the day would count the unused cost twice
    assert sum(row[5] for row in pods.values()) > 0


def test_split_rows_add_no_cost_and_no_gpu_hours_to_the_spend_marts(built: FinopsHome):
    rows = cur_rows()
    billed = sum(Decimal(str(row["line_item_unblended_cost"])) for row in rows)
    assert billed == 24 * HOURLY_COST
    ((cost, lines),) = query(
        built.warehouse,
        "select sum(BilledCost), count(*) from intermediate.int_billing__cost_lines where x_source = 'aws_cur'",
    )
    assert (cost, lines) == (billed, len(rows))
    ((daily,),) = query(built.warehouse, "select sum(billed_cost) from marts.fct_cost_daily")
    assert daily == billed
    ((gpu_hours, gpu_cost),) = query(
        built.warehouse,
        "select sum(x_gpu_hours), sum(EffectiveCost) from intermediate.int_billing__cost_lines "
        "where x_gpu_model is not null",
    )
    assert (gpu_hours, gpu_cost) == (Decimal(GPUS * 24), billed)
    # the split rows' public on-demand cost is the instance's, not more
    ((list_cost,),) = query(
        built.warehouse, "select sum(ListCost) from intermediate.int_billing__cost_lines where x_source = 'aws_cur'"
    )
    assert list_cost == billed
    assert query(built.warehouse, "select count(*) from audit.reconciliation where not reconciled") == [(0,)]


def test_the_reconciliation_shows_each_pods_and_the_nodes_difference(built: FinopsHome):
    held = held_gpu_hours(json.loads(RECORDING.read_text()))
    per_gpu_hour = 24 * HOURLY_COST / (GPUS * 24)
    ours = {pod: (per_gpu_hour * hours).quantize(CENT, ROUND_HALF_UP) for (_, pod), hours in held.items()}
    ours[None] = 24 * HOURLY_COST - sum(ours.values())
    aws = {pod: amount for (_, pod), amount in expected_aws_split().items()}
    rows = query(
        built.warehouse,
        "select allocation_type, namespace, pod, match_status, allocation_source, allocated_cost, aws_allocated_cost, "
        "cost_difference, gpu_hours, aws_gpu_split_usage, node_effective_cost, node_aws_split_cost, "
        "node_cost_difference, team from marts.fct_gpu_cost_allocation_provider_reconciliation "
        "where resource_id = 'i-0eks0gpu0000001' and usage_date = '2026-10-05'",
    )
    by_pod = {row[2]: row for row in rows}
    assert set(by_pod) == set(ours) | set(aws)
    for pod, row in by_pod.items():
        assert (row[5], row[6]) == (ours.get(pod), aws.get(pod)), pod
        assert row[7] == ours.get(pod, 0) - aws.get(pod, 0)
    status = {pod: row[3] for pod, row in by_pod.items()}
    assert status == {
        "train-0": "matched", "etl-3": "matched", "serve-7": "matched", None: "matched",
        "notebook-1": "chargeback_only", "coredns-5d78c9869d-x7kqp": "aws_only",
    }  # fmt: skip
    # hand-computed: train-0 ours 12 GPU-hours × 5.12 = 61.44, AWS's 66.24 (GPU and vCPU); the node 0.50 apart
    assert by_pod["train-0"][5:8] == (Decimal("61.44"), Decimal("66.24"), Decimal("-4.80"))
    assert by_pod["etl-3"][8:10] == (Decimal("4.5"), Decimal(5))
    assert {row[10:13] for row in rows} == {(Decimal("983.04"), Decimal("982.54"), Decimal("0.50"))}
    assert {row[4] for row in rows if row[3] != "aws_only"} == {"telemetry"}
    with SEED.open(encoding="utf-8") as handle:
        teams = {row["namespace"]: row["team"] for row in csv.DictReader(handle)}
    assert by_pod["train-0"][13] == teams["research"]


@pytest.fixture(scope="module")
def built_aws_split(built: FinopsHome, tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    """The same warehouse, copied, with the chargeback and the reconciliation rebuilt on AWS's split."""
    tmp_path = tmp_path_factory.mktemp("aws_split_source")
    home = FinopsHome(tmp_path / "home")
    shutil.copytree(built.root, home.root)
    output = dbt_build(
        home, tmp_path,
        ["fct_gpu_cost_allocation_daily", "fct_gpu_cost_allocation_provider_reconciliation",
         "assert_gpu_cost_allocation_reconciles_to_node_cost"],
        {"kubernetes_allocation_source": "aws_split"},
    )  # fmt: skip
    assert "assert_gpu_cost_allocation_reconciles_to_node_cost" in output
    return home


def test_aws_split_as_the_allocation_source_charges_awss_pods_and_keeps_the_node_whole(built_aws_split: FinopsHome):
    aws = {pod: amount for (kind, pod), amount in expected_aws_split().items() if kind == "pod"}
    held = {pod: hours for (_, pod), hours in held_gpu_hours(json.loads(RECORDING.read_text())).items()}
    rows = query(
        built_aws_split.warehouse,
        "select allocation_type, pod, allocation_source, allocated_cost, gpu_hours, node_effective_cost "
        "from marts.fct_gpu_cost_allocation_daily where resource_id = 'i-0eks0gpu0000001'",
    )
    pods = {row[1]: row for row in rows if row[0] == "pod"}
    assert {pod: row[3] for pod, row in pods.items()} == {
        pod: cost.quantize(CENT, ROUND_HALF_UP) for pod, cost in aws.items()
    }
    assert {pod: row[4] for pod, row in pods.items()} == {pod: held.get(pod, Decimal(0)) for pod in aws}
    (unallocated,) = [row for row in rows if row[0] == "unallocated"]
    bill = 24 * HOURLY_COST
    assert unallocated[3] == bill - sum(cost.quantize(CENT, ROUND_HALF_UP) for cost in aws.values())
    assert sum(row[3] for row in rows) == bill and {row[2] for row in rows} == {"aws_split"}
    differences = query(
        built_aws_split.warehouse,
        "select pod, cost_difference, node_cost_difference from marts.fct_gpu_cost_allocation_provider_reconciliation",
    )
    # only AWS's own gap to the bill is left, on the unallocated row, and on the node
    assert {pod: difference for pod, difference, _ in differences if difference != 0} == {None: Decimal("0.50")}
    assert {node for _, _, node in differences} == {Decimal("0.50")}


def test_an_unknown_allocation_source_is_refused_by_name(tmp_path: Path):
    parse = run_dbt(
        tmp_path / "home", tmp_path / "target",
        "parse", "--vars", json.dumps({"kubernetes_allocation_source": "opencost"}),
        "--log-path", str(tmp_path / "logs"),
    )  # fmt: skip
    assert parse.returncode != 0
    assert "kubernetes_allocation_source: telemetry or aws_split, not opencost" in parse.stdout
