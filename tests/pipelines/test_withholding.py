"""Withholding a delivery the models refused: the lake puts back exactly what it replaced, in any order, and
keeps what later deliveries brought; audit.loads and the landing zone say what happened. Real Parquet files,
a real DuckDB file; the expected sums are the CSV rows' own, added up here."""

from __future__ import annotations

from decimal import Decimal
from itertools import permutations
from pathlib import Path

import pytest

from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.model_audit import FailingNode, ModelRuleFailure, audit_failed_build
from pipelines.lib.transform.withholding import release_withheld, withhold
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.publication import publish_loads, unpublished_load_ids
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import OCTOBER, SEPTEMBER, ingest_focus
from tests.support.warehouse_helpers import query


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def deliver(home: FinopsHome, tmp_path: Path, name: str, *rows: dict[str, str]) -> str:
    """One FOCUS delivery of `rows` through the real ingest; its load id."""
    register(home, "focus", write_csv(tmp_path / name, focus_rows(*rows)))
    (loaded,) = [result for result in ingest_focus(home) if result.status == "loaded"]
    return loaded.load_id


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    sql = "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
    return dict(query(home.warehouse, sql))


def refusal(load_id: str) -> ModelRuleFailure:
    return ModelRuleFailure(
        load_id=load_id,
        model="int_focus__cost_lines",
        test="int_focus__cost_lines_column_rules",
        rule="house_rule",
        failing_rows=1,
        example_file="x.csv",
        example_row=2,
        example_column=None,
    )


def withhold_loads(home: FinopsHome, *load_ids: str) -> list[str]:
    import logging

    with connect(home.warehouse) as con:
        return withhold(home, con, [refusal(load_id) for load_id in load_ids], logging.getLogger("tests"))


def sep(cost: str) -> dict[str, str]:
    return SEPTEMBER | {"BilledCost": cost}


def oct_(cost: str) -> dict[str, str]:
    return OCTOBER | {"BilledCost": cost}


@pytest.fixture
def three_loads(home: FinopsHome, tmp_path: Path) -> tuple[str, str, str]:
    """A published September and October; then B restating both, then C restating October again, unpublished."""
    a = deliver(home, tmp_path, "a.csv", sep("1"), sep("2"), oct_("4"))
    with connect(home.warehouse) as con:
        publish_loads(con, unpublished_load_ids(con))
    b = deliver(home, tmp_path, "b.csv", sep("8.5"), oct_("16"))
    c = deliver(home, tmp_path, "c.csv", oct_("32"))
    with connect(home.warehouse) as con:
        assert sorted(unpublished_load_ids(con)) == sorted([b, c])
    assert billed_by_period(home) == {"2026-09": Decimal("8.5"), "2026-10": Decimal("32")}
    return a, b, c


def test_withholding_the_middle_load_restores_its_september_and_keeps_the_later_october(
    home: FinopsHome, three_loads: tuple[str, str, str]
):
    a, b, c = three_loads
    assert withhold_loads(home, b) == [b]
    # September is A's again (1 + 2); October stays C's, which replaced B's there.
    assert billed_by_period(home) == {"2026-09": Decimal("3"), "2026-10": Decimal("32")}
    statuses = dict(query(home.warehouse, "select load_id, status from audit.loads"))
    assert statuses == {a: "loaded", b: "withheld", c: "loaded"}
    # C withdrawn as well, later: October goes back to A's 4, never to the withheld B's 16.
    withhold_loads(home, c)
    assert billed_by_period(home) == {"2026-09": Decimal("3"), "2026-10": Decimal("4")}


@pytest.mark.parametrize("order", list(permutations("bc")))
def test_withholding_both_new_loads_in_any_order_leaves_the_published_state(
    home: FinopsHome, three_loads: tuple[str, str, str], order: tuple[str, ...]
):
    a, b, c = three_loads
    ids = {"b": b, "c": c}
    for name in order:
        withhold_loads(home, ids[name])
    assert billed_by_period(home) == {"2026-09": Decimal("3"), "2026-10": Decimal("4")}
    with connect(home.warehouse) as con:
        assert unpublished_load_ids(con) == []
    statuses = dict(query(home.warehouse, "select load_id, status from audit.loads"))
    assert statuses == {a: "loaded", b: "withheld", c: "withheld"}


def test_withholding_both_in_one_call(home: FinopsHome, three_loads: tuple[str, str, str]):
    _, b, c = three_loads
    assert set(withhold_loads(home, b, c)) == {b, c}
    assert billed_by_period(home) == {"2026-09": Decimal("3"), "2026-10": Decimal("4")}


def test_a_withheld_delivery_waits_in_quarantine_with_its_rule_and_loads_again_when_released(
    home: FinopsHome, tmp_path: Path
):
    first = deliver(home, tmp_path, "new-month.csv", oct_("5"), oct_("7"))
    (name,) = [row[0] for row in query(home.warehouse, "select delivery from audit.loads")]
    withhold_loads(home, first)
    # A period that did not exist before the load is gone again, the delivery is in quarantine with its reason.
    assert billed_by_period(home) == {}
    assert not (home.landing_for("focus") / name).exists()
    reason = (home.quarantine / "focus" / f"{name}.reason.txt").read_text()
    assert "REJECTED by model rule house_rule (int_focus__cost_lines): 1 row(s), first at x.csv row 2" in reason
    assert f"gpu-finops ingest --retry {first}" in reason
    withheld = query(home.warehouse, "select load_id, source, delivery, rule, example_row from audit.withheld_loads")
    assert withheld == [(first, "focus", name, "house_rule", 2)]

    # Released, the same bytes load again as a new load (a withheld load is no duplicate of itself).
    with connect(home.warehouse, read_only=True) as con:
        released = release_withheld(home, con, first)
    assert released.name == name and released.path.exists()
    assert not (home.quarantine / "focus" / f"{name}.reason.txt").exists()
    (again,) = [result for result in ingest_focus(home) if result.status == "loaded"]
    assert again.load_id != first
    assert billed_by_period(home) == {"2026-10": Decimal("12")}
    statuses = dict(query(home.warehouse, "select load_id, status from audit.loads"))
    assert statuses == {first: "withheld", again.load_id: "loaded"}


def test_a_published_load_keeps_nothing_to_withdraw(home: FinopsHome, tmp_path: Path):
    deliver(home, tmp_path, "a.csv", sep("1"))
    deliver(home, tmp_path, "b.csv", sep("2"))
    with connect(home.warehouse) as con:
        publish_loads(con, unpublished_load_ids(con))
        assert unpublished_load_ids(con) == []
    assert not any((home.lake / "_unpublished").iterdir())


def _cost_lines(con) -> dict:
    """A model with lineage, as dbt builds one from raw: each row names its load, source, file and row."""
    con.execute("create schema if not exists intermediate")
    con.execute(
        "create or replace table intermediate.cost_lines as select _load_id as x_load_id, 'focus' as x_source, "
        "_source_file as x_source_file, _source_row as x_source_row, BillingAccountId, BillingPeriodStart, SkuId, "
        "BilledCost "
        "from raw.focus_cost_and_usage"
    )
    return {
        "name": "cost_lines",
        "schema": "intermediate",
        "alias": "cost_lines",
        "relation_name": '"warehouse"."intermediate"."cost_lines"',
    }


def _test_node(name: str, sql: str, parent: dict) -> FailingNode:
    return FailingNode(
        unique_id=f"test.gpu_finops.{name}",
        name=name,
        resource_type="test",
        status="fail",
        message="Got 1 result, configured to fail if != 0",
        compiled_code=sql,
        model=None,
        column_name=None,
        parents=(parent,),
    )


def test_a_row_rule_traces_to_the_loads_whose_rows_break_it_with_the_first_row(home: FinopsHome, tmp_path: Path):
    good = deliver(home, tmp_path, "good.csv", oct_("4"))
    bad = deliver(
        home, tmp_path, "bad.csv", oct_("1") | {"BillingAccountId": "2"}, oct_("12000") | {"BillingAccountId": "2"}
    )
    with connect(home.warehouse) as con:
        parent = _cost_lines(con)
        sql = f"select * from {parent['relation_name']} where BilledCost > 10000"
        audit = audit_failed_build(con, [_test_node("no_line_over_10000", sql, parent)], [good, bad])
    (failure,) = audit.withhold
    assert (failure.load_id, failure.rule, failure.failing_rows) == (bad, "no_line_over_10000", 1)
    assert failure.example_file.endswith("bad.csv") and failure.example_row == 2
    assert audit.untraced == []


def test_a_rule_across_deliveries_stops_the_new_loads_of_the_source_and_period_it_names(
    home: FinopsHome, tmp_path: Path
):
    """The same SKU billed to two accounts in one period: no load breaks it alone, so the source and period its
    failing rows name stop, and only their unpublished loads are withheld."""
    published = deliver(home, tmp_path, "a.csv", oct_("4") | {"SkuId": "sku-1"}, sep("1") | {"SkuId": "sku-1"})
    with connect(home.warehouse) as con:
        publish_loads(con, unpublished_load_ids(con))
    october = deliver(home, tmp_path, "b.csv", oct_("6") | {"SkuId": "sku-1", "BillingAccountId": "2"})
    september = deliver(home, tmp_path, "c.csv", sep("2") | {"SkuId": "sku-2", "BillingAccountId": "2"})
    with connect(home.warehouse) as con:
        parent = _cost_lines(con)
        sql = (
            f"select x_source, BillingPeriodStart, SkuId from {parent['relation_name']} "
            "group by all having count(distinct BillingAccountId) > 1"
        )
        node = _test_node("sku_billed_to_one_account", sql, parent)
        audit = audit_failed_build(con, [node], unpublished_load_ids(con))
    (failure,) = audit.withhold
    assert failure.load_id == october and failure.load_id not in (published, september)
    assert failure.detail == "fails for focus 2026-10-01"


def test_a_failure_no_new_load_explains_stops_the_build(home: FinopsHome, tmp_path: Path):
    deliver(home, tmp_path, "a.csv", oct_("12000"))
    with connect(home.warehouse) as con:
        publish_loads(con, unpublished_load_ids(con))
    fresh = deliver(home, tmp_path, "b.csv", sep("1"))
    with connect(home.warehouse) as con:
        parent = _cost_lines(con)
        node = _test_node(
            "no_line_over_10000", f"select * from {parent['relation_name']} where BilledCost > 10000", parent
        )
        audit = audit_failed_build(con, [node], [fresh])
    assert audit.withhold == [] and audit.untraced == [node]
