"""FOCUS 1.3 split-cost allocation columns (`Allocated*`) read from a delivery and carried to the canonical cost lines.

A FOCUS 1.3 CSV (ServiceProviderName and HostProviderName instead of ProviderName and PublisherName) from a provider
that splits one node's day, 98.32 of p5.48xlarge, between two pods and the node's unused capacity: three allocated
charges of one origin charge (one ResourceId), each naming what received the share (AllocatedResourceId, Name,
Tags) and how it was split (AllocatedMethodId, AllocatedMethodDetails), plus a provider column `x_ClusterName` the
reader does not know. In FOCUS the allocated charges of an origin charge add up to it, so they are the cost, not
more of it: the cost lines must hold 98.32 for the node, every Allocated* value as delivered, and the extra column
in x_extensions.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal

import pytest

from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support.dbt_helpers import run_dbt
from tests.support.focus_fixtures import BASE_ROW, write_csv
from tests.support.warehouse_helpers import query

NODE = "arn:aws:ec2:us-east-1:111122223333:instance/i-0focus13node001"
METHOD = "kubernetes-gpu-request-share"
ORIGIN = {k: v for k, v in BASE_ROW.items() if k not in ("ProviderName", "PublisherName")} | {
    "ServiceProviderName": "AWS",
    "HostProviderName": "AWS",
    "ResourceId": NODE,
    "AllocatedMethodId": METHOD,
    "x_ClusterName": "gpu-cluster",
}
# (consumer id, name, share of the 8 GPUs, cost): 5 + 2 + 1 GPUs of 98.32
ALLOCATIONS = [
    ("gpu-cluster/research/train-0", "train-0", 5, "61.45"),
    ("gpu-cluster/inference/serve-7", "serve-7", 2, "24.58"),
    ("gpu-cluster/unused", "unused capacity", 1, "12.29"),
]


def allocated_rows() -> list[dict[str, str]]:
    rows = []
    for resource, name, gpus, cost in ALLOCATIONS:
        rows.append(
            ORIGIN
            | {key: cost for key in ("BilledCost", "EffectiveCost", "ContractedCost", "ListCost")}
            | {
                "AllocatedResourceId": resource,
                "AllocatedResourceName": name,
                "AllocatedMethodDetails": json.dumps({"AllocatedRatio": f"{gpus}/8", "Basis": "GPU requests"}),
                "AllocatedTags": json.dumps({"k8s-namespace": resource.split("/")[1]}),
            }
        )
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("focus_allocated")
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "focus", write_csv(tmp_path / "focus-1.3-allocated.csv", allocated_rows()))
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, FOCUS, log=logging.getLogger("test"))] == [
            "loaded"
        ]
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+int_billing__cost_lines", "--exclude", "test_type:unit",
        "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"),
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    return home


def test_allocated_columns_reach_the_cost_lines_and_the_allocated_charges_add_up_to_the_origin(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select AllocatedResourceId, AllocatedResourceName, AllocatedMethodId, AllocatedMethodDetails, AllocatedTags, "
        "BilledCost, EffectiveCost, ResourceId, json_extract_string(x_extensions, '$.x_ClusterName') "
        "from intermediate.int_billing__cost_lines order by BilledCost desc",
    )
    written = allocated_rows()
    assert [(*row[:3], json.loads(row[3]), json.loads(row[4])) for row in rows] == [
        (line["AllocatedResourceId"], line["AllocatedResourceName"], line["AllocatedMethodId"],
         json.loads(line["AllocatedMethodDetails"]), json.loads(line["AllocatedTags"]))
        for line in written
    ]  # fmt: skip
    origin = Decimal(BASE_ROW["BilledCost"])
    assert sum(Decimal(line["BilledCost"]) for line in written) == origin  # the fixture splits the origin whole
    assert sum(row[5] for row in rows) == sum(row[6] for row in rows) == origin
    assert [row[5] for row in rows] == [Decimal(line["BilledCost"]) for line in written]
    assert {row[7] for row in rows} == {NODE} and {row[8] for row in rows} == {"gpu-cluster"}
