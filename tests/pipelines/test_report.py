"""`gpu-finops report` without a full dbt build: a warehouse whose marts do not exist yet, and marts written by hand
from which dbt builds only the reporting models the report reads.

The demo's report (every chart, its numbers against the generator's totals) is checked in a real browser in
tests/e2e/test_pipeline_e2e.py, which already has a demo warehouse.
"""

from __future__ import annotations

import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.lib.reporting.report import write_report
from pipelines.lib.warehouse.connection import connect
from tests.support.browser import open_page
from tests.support.dbt_helpers import run_dbt

HOSTILE_PROVIDER = "</script><script>alert('provider')</script>"
HOSTILE_MODEL = "<img src=x onerror=alert('model')>&amp;"


def _build_reporting(warehouse: Path, *models: str) -> None:
    """`dbt run` of only the reporting `models`, over the marts written by hand in `warehouse`."""
    result = run_dbt(warehouse.parent, warehouse.parent / "dbt-target", "run", "--select", *models)
    assert result.returncode == 0, result.stdout + result.stderr


def _gpu_marts(warehouse: Path) -> None:
    """fct_gpu_spend_daily and fct_cost_daily with the columns the report reads, names that try to run script.

    GPU spend: USD 100.105 + 200.2 = 300.305 (shown half up: USD 300.31), EUR 50; the whole USD bill 400.61.
    """
    with connect(warehouse) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.fct_gpu_spend_daily (
                charge_date date, provider_name varchar, gpu_model varchar, billing_currency varchar,
                effective_cost decimal(38, 12), billed_cost decimal(38, 12), gpu_hours decimal(38, 12),
                reporting_currency varchar, effective_cost_reporting decimal(38, 12)
            )
            """
        )
        con.executemany(
            "insert into marts.fct_gpu_spend_daily values (?, ?, ?, ?, ?, ?, ?, 'EUR', ?)",
            [
                ("2026-10-05", HOSTILE_PROVIDER, HOSTILE_MODEL, "USD", "100.105", "100.105", "10", "90"),
                ("2026-10-06", "AWS", "H100", "USD", "200.2", "200.2", "20", "180"),
                ("2026-10-13", "Azure", "A100", "EUR", "50", "50", "25", "50"),
            ],
        )
        con.execute("create table marts.fct_cost_daily (billing_currency varchar, effective_cost decimal(38, 12))")
        con.execute("insert into marts.fct_cost_daily values ('USD', 400.61), ('EUR', 50)")
    _build_reporting(warehouse, "rpt_gpu_spend_weekly", "rpt_gpu_share_of_bill", "rpt_gpu_spend_in_reporting_currency")


def test_a_warehouse_without_marts_gets_a_report_that_says_no_data_yet(tmp_path: Path):
    warehouse = tmp_path / "warehouse.duckdb"
    with connect(warehouse):
        pass
    report = write_report(warehouse, tmp_path / "out" / "report.html")
    assert report.charts == 0
    assert [section.empty is not None for section in report.sections] == [True] * 14
    page_html = report.path.read_text(encoding="utf-8")
    assert page_html.count("No data yet") == 14
    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        assert page.locator("p.empty").count() == 14
        assert page.locator(".chart").count() == 0
        log.assert_clean()


def test_values_from_the_warehouse_cannot_run_script_and_totals_are_exact(tmp_path: Path):
    warehouse = tmp_path / "warehouse.duckdb"
    _gpu_marts(warehouse)
    report = write_report(warehouse, tmp_path / "report.html")
    assert report.charts == 1  # only the GPU spend section has data
    page_html = report.path.read_text(encoding="utf-8")
    assert HOSTILE_PROVIDER not in page_html and HOSTILE_MODEL not in page_html
    assert "onerror=alert" not in page_html.replace("onerror=alert('model')\\u003e", "")

    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        log.assert_clean()  # no alert() ran, nothing asked the network
        cells = page.locator("#gpu-spend table tbody tr").all_inner_texts()
        usd = next(row for row in cells if row.startswith("USD"))
        # 100.105 + 200.2 = 300.305, half up to cents; per GPU-hour 300.305 / 30 = 10.01017 → 10.01;
        # share of the bill 300.305 / 400.61 = 74.96%
        assert "USD 300.31" in usd and "USD 10.01" in usd and "75.0%" in usd
        exact = page.locator("#gpu-spend td[data-exact]").first.get_attribute("data-exact")
        assert Decimal(exact) == Decimal("50")  # EUR sorts first: exact, not rounded
        caption = page.locator("#gpu-spend caption").inner_text()
        assert "all of it in EUR: EUR 320.00" in caption  # 90 + 180 + 50
        assert page.locator("#chart-gpu-spend svg").count() == 1
        # The hostile names reach the chart as text: the legend shows them literally.
        drawn = page.locator("#chart-gpu-spend svg").text_content()
        assert HOSTILE_PROVIDER[:20] in drawn and HOSTILE_MODEL[:20] in drawn  # long legend labels are cut


def test_report_command_writes_to_the_default_place_and_to_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = tmp_path / "home"
    monkeypatch.setenv("FINOPS_HOME", str(home))
    home.mkdir()
    _gpu_marts(home / "warehouse.duckdb")
    assert main(["report"]) == 0
    default = home / "report" / "gpu-finops-report.html"
    assert f"Report: {default}" in capsys.readouterr().out
    assert main(["report", "--output", str(tmp_path / "elsewhere.html")]) == 0
    page_html = (tmp_path / "elsewhere.html").read_text(encoding="utf-8")
    # self-contained: the Vega bundle is inlined, no script or stylesheet is loaded from anywhere
    assert "window.vegaEmbed" in page_html
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=", page_html)
    assert str(tmp_path) not in page_html


def test_report_without_a_warehouse_says_how_to_get_one(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "none"))
    assert main(["report"]) == 2
    assert "run `gpu-finops demo` or `gpu-finops ingest PATH` first" in capsys.readouterr().err


def test_the_funnel_shows_unused_commitments_and_its_parts_add_up_to_the_spend(tmp_path: Path):
    """fct_gpu_utilization_daily written by hand: a VM's day split into active, idle and unobserved cost, and a
    reservation's unused hours (no GPU-hours, all of it unused commitment). The funnel's table shows per currency
    the spend and each part, exact, and the parts add up to the spend; the chart draws the split."""
    warehouse = tmp_path / "warehouse.duckdb"
    columns = (
        "billing_currency, effective_cost, active_cost, idle_cost, unobserved_cost, unused_commitment_cost, "
        "provisioned_gpu_hours, telemetry_gpu_hours, active_gpu_hours, effective_gpu_hours, idle_gpu_hours"
    )
    rows = [
        ("USD", "400.00", "225.00", "75.00", "100.00", "0", "80", "60", "45", "30", "15"),
        ("USD", "960.005", "0", "0", "0", "960.005", "0", "0", "0", "0", "0"),
        ("EUR", "120.50", "0", "0", "0", "120.50", "0", "0", "0", "0", "0"),
    ]
    with connect(warehouse) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.fct_gpu_utilization_daily (billing_currency varchar, "
            + ", ".join(f"{name} decimal(38, 12)" for name in columns.split(", ")[1:])
            + ")"
        )
        con.executemany(f"insert into marts.fct_gpu_utilization_daily ({columns}) values ({', '.join('?' * 11)})", rows)
    _build_reporting(warehouse, "rpt_utilization_funnel", "rpt_utilization_cost")
    report = write_report(warehouse, tmp_path / "report.html")
    assert [section.key for section in report.sections if section.chart] == ["utilization"]
    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        assert page.locator("#chart-utilization svg").count() == 1
        header = page.locator("#utilization thead th").all_inner_texts()
        table = {
            cells[0]: dict(zip(header, cells, strict=True))
            for cells in page.evaluate(
                "Array.from(document.querySelectorAll('#utilization tbody tr'))"
                ".map((row) => Array.from(row.cells).map((cell) => cell.dataset.exact ?? cell.textContent))"
            )
        }
        log.assert_clean()
    parts = ("Active cost", "Idle cost", "Cost without telemetry", "Unused commitments")
    for currency in ("EUR", "USD"):
        mine = [row for row in rows if row[0] == currency]
        spend = sum(Decimal(row[1]) for row in mine)
        assert Decimal(table[currency]["GPU spend"]) == spend
        assert Decimal(table[currency]["Unused commitments"]) == sum(Decimal(row[5]) for row in mine)
        assert sum(Decimal(table[currency][part]) for part in parts) == spend
    assert Decimal(table["USD"]["Unused commitments"]) == Decimal("960.005")


def test_the_chargeback_shows_each_namespace_and_the_unallocated_rest_adding_up_to_the_nodes_cost(tmp_path: Path):
    """fct_gpu_cost_allocation_daily written by hand: two days of one node (USD 152.16 and 100.00) with pods of three
    namespaces, sandbox without a team, and the unallocated rest. The table shows per namespace the cost summed over
    the days, unassigned for the namespace without a team, and its rows add up to the nodes' cost."""
    warehouse = tmp_path / "warehouse.duckdb"
    rows = [
        ("2026-10-05", "USD", "pod", "research", "research", "train-0", "12", "9.6", "19.02"),
        ("2026-10-05", "USD", "pod", None, "sandbox", "notebook-1", "0.5", "0.1", "0.79"),
        ("2026-10-05", "USD", "unallocated", None, None, None, "83.5", "0", "132.35"),
        ("2026-10-06", "USD", "pod", "research", "research", "train-1", "24", "12", "25.00"),
        ("2026-10-06", "USD", "pod", "inference", "inference", "serve-7", "24", "6", "25.00"),
        ("2026-10-06", "USD", "unallocated", None, None, None, "48", "0", "50.00"),
    ]
    with connect(warehouse) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.fct_gpu_cost_allocation_daily (
                usage_date date, billing_currency varchar, allocation_type varchar, team varchar, namespace varchar,
                pod varchar, gpu_hours decimal(38, 12), active_gpu_hours decimal(38, 12),
                allocated_cost decimal(38, 12), resource_id varchar default 'k8s-node-a'
            )
            """
        )
        con.executemany(
            "insert into marts.fct_gpu_cost_allocation_daily (usage_date, billing_currency, allocation_type, team, "
            "namespace, pod, gpu_hours, active_gpu_hours, allocated_cost) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    _build_reporting(warehouse, "rpt_gpu_cost_allocation")
    report = write_report(warehouse, tmp_path / "report.html")
    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        table = page.evaluate(
            "Array.from(document.querySelectorAll('#chargeback tbody tr'))"
            ".map((row) => Array.from(row.cells).map((cell) => cell.dataset.exact ?? cell.textContent))"
        )
        log.assert_clean()
    costs: dict[str, Decimal] = {}
    for _, _, kind, _, namespace, _, _, _, cost in rows:
        key = "unallocated (no pod held the GPUs)" if kind == "unallocated" else namespace
        costs[key] = costs.get(key, Decimal(0)) + Decimal(cost)
    assert {row[2]: Decimal(row[5]) for row in table} == costs
    assert [row[1] for row in table] == ["research", "inference", "unassigned", "-"]  # by cost, unallocated last
    assert sum(Decimal(row[5]) for row in table) == Decimal("152.16") + Decimal("100.00")
    # research: 21.6 active of 36 GPU-hours held
    assert Decimal(table[0][3]) == 36 and table[0][4] == "60.0%"


def test_shared_gpus_show_each_teams_slices_and_time_sliced_pods_and_the_owners_idle_slices(tmp_path: Path):
    """fct_gpu_cost_allocation_daily written by hand, two days of a MIG node (owner platform) and a whole-GPU pod: the
    section keeps only shared GPUs (MIG slices, time-sliced pods, idle slices), sums per team, rule and profile over
    the days, puts the idle slices under the node's owner, and its costs add up to those rows'."""
    warehouse = tmp_path / "warehouse.duckdb"
    mig, idle, day = "mig_compute_share", "idle_mig_slice", "2026-10-05"
    rows = [
        # day, type, rule, profile, team, node team, pod, GPU-hours, active, cost
        (day, "pod", mig, "3g.40gb", "inference", "platform", "llm-0", "10.285714285714", "6", "17.85"),
        ("2026-10-06", "pod", mig, "3g.40gb", "inference", "platform", "llm-0", "10.285714285714", "3", "17.85"),
        (day, "pod", mig, "1g.10gb", None, "platform", "nb-0", "1.714285714285", "0.5", "2.97"),
        (day, "pod", "time_sliced_equal", None, "research", "platform", "tts-b", "6", "3", "10.41"),
        (day, "pod", "whole_gpu", None, "research", "platform", "train-0", "24", "20", "41.64"),
        (day, idle, mig, "1g.10gb", None, "platform", None, "5.142857142855", "0", "8.92"),
        (day, idle, "mig_unpartitioned", None, None, "platform", None, "6.857142857144", "0", "11.90"),
        (day, "unallocated", None, None, None, "platform", None, "4", "0", "6.94"),
    ]  # fmt: skip
    with connect(warehouse) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.fct_gpu_cost_allocation_daily (
                usage_date date, allocation_type varchar, allocation_rule varchar, mig_profile varchar, team varchar,
                node_team varchar, pod varchar, gpu_hours decimal(38, 12), active_gpu_hours decimal(38, 12),
                allocated_cost decimal(38, 12), billing_currency varchar default 'USD',
                resource_id varchar default 'k8s-mig-a'
            )
            """
        )
        con.executemany(
            "insert into marts.fct_gpu_cost_allocation_daily (usage_date, allocation_type, allocation_rule, "
            "mig_profile, team, node_team, pod, gpu_hours, active_gpu_hours, allocated_cost) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    _build_reporting(warehouse, "rpt_shared_gpu_chargeback")
    report = write_report(warehouse, tmp_path / "report.html")
    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        table = page.evaluate(
            "Array.from(document.querySelectorAll('#shared-gpus tbody tr'))"
            ".map((row) => Array.from(row.cells).map((cell) => cell.dataset.exact ?? cell.textContent))"
        )
        log.assert_clean()
    shared = [row for row in rows if row[1] == "idle_mig_slice" or (row[1] == "pod" and row[2] != "whole_gpu")]
    expected: dict[tuple, Decimal] = defaultdict(Decimal)
    for _, kind, rule, profile, team, node_team, _, _, _, cost in shared:
        owner = node_team if kind == "idle_mig_slice" else team
        expected[(kind, rule, profile, owner)] += Decimal(cost)
    shown = {
        (
            "idle_mig_slice" if row[2].startswith("idle: ") else "pod",
            row[2].removeprefix("idle: "),
            None if row[3] == "-" else row[3],
            None if row[1] == "unassigned" else row[1],
        ): Decimal(row[7])
        for row in table
    }
    names = {
        "MIG slice, g/7 of the GPU": "mig_compute_share",
        "MIG GPU, no slice": "mig_unpartitioned",
        "time-sliced, split evenly": "time_sliced_equal",
    }
    assert {(kind, names[rule], profile, team): cost for (kind, rule, profile, team), cost in shown.items()} == expected
    assert sum(Decimal(row[7]) for row in table) == Decimal("69.90")  # 2 × 17.85 + 2.97 + 10.41 + 8.92 + 11.90
    # pods first by cost, then the owner's idle slices
    assert [(row[1], row[3]) for row in table] == [
        ("inference", "3g.40gb"),
        ("research", "-"),
        ("unassigned", "1g.10gb"),
        ("platform", "-"),
        ("platform", "1g.10gb"),
    ]
    # inference's 3g.40gb slice: 9 active of 20.571428571428 GPU-hours over two days
    assert Decimal(table[0][5]) == Decimal("20.571428571428") and table[0][6] == "43.8%"
