"""Write, audit, publish: which unpublished deliveries made a model build fail, so that only they are withheld.

A billing load is committed to raw before dbt has seen it, and keeps what it replaced until a build accepts it
(pipelines/lib/warehouse/lake.py). When a build fails on data tests, each failing test is run again on each
unpublished load alone: its own compiled query, with every relation it reads that carries lineage (`x_load_id`)
narrowed to that load's rows. A load whose rows alone break the test is withheld, with the rule and its first
failing row. A test that no load breaks alone (a rule across rows or deliveries: reconciliation, uniqueness) is
traced through the source and billing period its failing rows name to the unpublished loads of that source and
period. A failure traced to no unpublished load (a model error, or a rule that the published data breaks since the
project changed) stops the build as before: withholding a delivery would not mend it.

DuckDB only: on Spark the models live in Spark's catalog, and a failing build stops as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from sources.common.sql import sql_text

LINEAGE_COLUMN = "x_load_id"
"""Every model row a delivery produced names its load here (raw tables call it `_load_id`)."""

SOURCE_COLUMNS = ("x_source", "source")
PERIOD_COLUMNS = ("billingperiodstart", "billing_period_start", "billing_period")
"""What a failing test's rows may call the billing source and period they are about (case-insensitive)."""

_FAILED = {"fail", "error"}


@dataclass(frozen=True)
class FailingNode:
    """A node of a dbt build that did not pass, as run_results.json and the manifest describe it."""

    unique_id: str
    name: str
    resource_type: str
    status: str
    message: str
    compiled_code: str | None
    model: str | None
    """The model (or source) a generic test is attached to; None for singular tests and models."""
    column_name: str | None
    parents: tuple[dict[str, Any], ...]
    """The manifest entries of the relations the node reads."""
    fail_calc: str = "count(*)"
    error_if: str = "!= 0"


@dataclass(frozen=True)
class ModelRuleFailure:
    """Why a model rule withholds one load: what audit.withheld_loads records for it."""

    load_id: str
    model: str
    test: str
    rule: str
    failing_rows: int | None
    example_file: str | None
    example_row: int | None
    example_column: str | None
    detail: str | None = None
    """What else the rule says, e.g. the source and billing period a rule across rows stops."""

    def describe(self) -> str:
        """What follows `REJECTED by model rule`: the rule, its model, its rows and the first of them."""
        where = ""
        if self.example_file:
            where = f", first at {self.example_file} row {self.example_row}"
            if self.example_column:
                where += f" column {self.example_column}"
        rows = f": {self.failing_rows} row(s)" if self.failing_rows is not None else ""
        return f"{self.rule} ({self.model}){rows}{where}" + (f"; {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class BuildAudit:
    """What a failed build's failures trace to."""

    withhold: list[ModelRuleFailure]
    """One entry per (load, rule) to withhold; a load may break several rules."""
    untraced: list[FailingNode]
    """Failures no unpublished load explains: they stop the build."""

    @property
    def load_ids(self) -> list[str]:
        return sorted({failure.load_id for failure in self.withhold})


def failing_nodes(run_results: dict[str, Any], manifest: dict[str, Any]) -> list[FailingNode]:
    """The nodes of a build that failed (tests that found rows, tests and models that errored)."""
    nodes = manifest["nodes"] | manifest.get("sources", {})
    failing = []
    for result in run_results["results"]:
        if result["status"] not in _FAILED:
            continue
        node = nodes.get(result["unique_id"], {})
        config = node.get("config", {})
        attached = node.get("attached_node")
        parents = tuple(nodes[parent] for parent in node.get("depends_on", {}).get("nodes", []) if parent in nodes)
        failing.append(
            FailingNode(
                unique_id=result["unique_id"],
                name=node.get("name", result["unique_id"]),
                resource_type=node.get("resource_type", result["unique_id"].split(".")[0]),
                status=result["status"],
                message=(result.get("message") or "").strip(),
                compiled_code=result.get("compiled_code"),
                model=nodes[attached]["name"] if attached in nodes else None,
                column_name=(node.get("test_metadata") or {}).get("kwargs", {}).get("column_name"),
                parents=parents,
                fail_calc=config.get("fail_calc") or "count(*)",
                error_if=config.get("error_if") or "!= 0",
            )
        )
    return failing


def audit_failed_build(
    con: duckdb.DuckDBPyConnection, failing: Sequence[FailingNode], unpublished: Sequence[str]
) -> BuildAudit:
    """Trace each failing test of a build to the unpublished loads that make it fail."""
    withhold: list[ModelRuleFailure] = []
    untraced: list[FailingNode] = []
    for node in failing:
        found = _trace(con, node, unpublished) if node.resource_type == "test" and node.status == "fail" else []
        if found:
            withhold.extend(found)
        else:
            untraced.append(node)
    return BuildAudit(withhold, untraced)


def _trace(con: duckdb.DuckDBPyConnection, node: FailingNode, unpublished: Sequence[str]) -> list[ModelRuleFailure]:
    """The unpublished loads that break `node`; none when its query cannot be narrowed or run again here."""
    if not node.compiled_code or not unpublished:
        return []
    try:
        lineage = [parent for parent in node.parents if _has_column(con, parent, LINEAGE_COLUMN)]
        found = []
        if lineage:
            for load_id in unpublished:
                narrowed = _narrowed(node.compiled_code, lineage, load_id)
                if _breaks(con, node, narrowed):
                    found.extend(_failures_of_load(con, node, narrowed, lineage, load_id))
        return found or _failures_by_source_and_period(con, node, unpublished)
    except duckdb.Error:
        return []


def _has_column(con: duckdb.DuckDBPyConnection, parent: dict[str, Any], column: str) -> bool:
    if not parent.get("relation_name"):
        return False
    found = con.execute(
        "select count(*) from information_schema.columns where table_schema = ? and table_name = ? "
        "and lower(column_name) = ?",
        [parent["schema"], parent.get("alias") or parent.get("identifier") or parent["name"], column],
    ).fetchall()
    return bool(found[0][0])


def _narrowed(sql: str, relations: Iterable[dict[str, Any]], load_id: str) -> str:
    """`sql` reading only `load_id`'s rows of `relations` (each named as dbt compiled it)."""
    names = sorted({parent["relation_name"] for parent in relations}, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(name) for name in names))
    return pattern.sub(
        lambda match: f"(select * from {match.group(0)} where {LINEAGE_COLUMN} = {sql_text(load_id)})", sql
    )


def _breaks(con: duckdb.DuckDBPyConnection, node: FailingNode, sql: str) -> bool:
    """The test's own verdict on `sql` (dbt's: `fail_calc` of its rows, compared by `error_if`)."""
    verdict = con.execute(f"select {node.fail_calc} {node.error_if} from ({sql}\n) as dbt_internal_test").fetchall()
    return bool(verdict[0][0])


def _rows(con: duckdb.DuckDBPyConnection, sql: str, limit: int = 50) -> list[dict[str, Any]]:
    cursor = con.execute(f"select * from ({sql}\n) as failing limit {limit}")
    header = [column[0].lower() for column in cursor.description]
    return [dict(zip(header, row, strict=True)) for row in cursor.fetchall()]


def _failures_of_load(
    con: duckdb.DuckDBPyConnection,
    node: FailingNode,
    narrowed: str,
    lineage: Sequence[dict[str, Any]],
    load_id: str,
) -> list[ModelRuleFailure]:
    """Each rule the load breaks (column_rules names them; any other test is one rule), with its first row."""
    model = node.model or node.name
    results = _rows(con, narrowed)
    tested = next((parent for parent in lineage if parent["name"] == node.model), lineage[0])
    load_rows = f"(select * from {tested['relation_name']} where {LINEAGE_COLUMN} = {sql_text(load_id)})"
    if results and {"broken_rule", "failing_rows", "failing_when"} <= results[0].keys():
        # column_rules reports each broken rule with its condition: the project's SQL, as dbt compiled it.
        return [
            ModelRuleFailure(
                load_id=load_id,
                model=model,
                test=node.name,
                rule=broken["broken_rule"],
                failing_rows=int(broken["failing_rows"]),
                example_column=broken.get("column_name"),
                **_first_row(con, f"select * from {load_rows} as rows_of_load where {broken['failing_when']}"),
            )
            for broken in results
        ]
    example = _first_row_of(results) or {"example_file": None, "example_row": None}
    return [
        ModelRuleFailure(
            load_id=load_id,
            model=model,
            test=node.name,
            rule=node.name,
            failing_rows=_failure_count(con, node, narrowed),
            example_column=node.column_name,
            **example,
        )
    ]


def _failure_count(con: duckdb.DuckDBPyConnection, node: FailingNode, sql: str) -> int | None:
    value = con.execute(f"select {node.fail_calc} from ({sql}\n) as dbt_internal_test").fetchall()[0][0]
    return int(value) if value is not None else None


def _first_row(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, Any]:
    """The least file, then row, of `sql`'s rows (as the quality gate names a rule's first row)."""
    try:
        found = con.execute(
            f"select x_source_file, x_source_row from ({sql}) as broken order by 1, 2 limit 1"
        ).fetchall()
    except duckdb.BinderException:
        found = []
    file, row = found[0] if found else (None, None)
    return {"example_file": file, "example_row": row}


def _first_row_of(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    located = sorted(
        (row["x_source_file"], row["x_source_row"])
        for row in rows
        if row.get("x_source_file") is not None and row.get("x_source_row") is not None
    )
    return {"example_file": located[0][0], "example_row": located[0][1]} if located else None


def _failures_by_source_and_period(
    con: duckdb.DuckDBPyConnection, node: FailingNode, unpublished: Sequence[str]
) -> list[ModelRuleFailure]:
    """A rule across rows stops the unpublished loads of the source and billing period its failing rows name."""
    rows = _rows(con, node.compiled_code or "", limit=1000)
    if not rows:
        return []
    source_column = next((name for name in SOURCE_COLUMNS if name in rows[0]), None)
    period_column = next((name for name in PERIOD_COLUMNS if name in rows[0]), None)
    if source_column is None and period_column is None:
        return []
    named = {
        (row.get(source_column) if source_column else None, _month(row.get(period_column)) if period_column else None)
        for row in rows
    }
    candidates = con.execute(
        "select l.load_id, l.source, strftime(t.billing_period_start, '%Y-%m-%d') from audit.loads as l "
        "join audit.load_totals as t using (load_id) where l.load_id in (select unnest(?::varchar[]))",
        [list(unpublished)],
    ).fetchall()
    stopped: dict[str, set[str]] = {}
    for load_id, source, period in candidates:
        for named_source, named_period in named:
            if named_source in (None, source) and named_period in (None, period):
                stopped.setdefault(load_id, set()).add(f"{source} {period}")
    return [
        ModelRuleFailure(
            load_id=load_id,
            model=node.model or node.name,
            test=node.name,
            rule=node.name,
            failing_rows=len(rows),
            example_file=None,
            example_row=None,
            example_column=None,
            detail=f"fails for {', '.join(sorted(keys))}",
        )
        for load_id, keys in sorted(stopped.items())
    ]


def _month(value: Any) -> str | None:
    """A billing period as audit.load_totals writes it (`YYYY-MM-DD`)."""
    if value is None:
        return None
    return str(value)[:10]
