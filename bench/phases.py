"""One measured phase, run in its own process so its memory is its own: `python -m bench.phases PHASE …`.

- `baseline`: DuckDB alone, `CREATE TABLE AS SELECT` the columns the ingest keeps, typed the same way,
  from the same Parquet files: the closest thing to the physical limit of this machine.
- `ingest`: the project's own code path for every delivery waiting in the landing zone (hash, parse,
  validate, load with restatement and audit records), then the audit check the ingest asset blocks on.
- `build`: what the dbt asset does, without Dagster: plan the build against the last one (every model, what
  changed, or nothing: pipelines/lib/transform/build_plan.py), run `dbt build` on the plan, record it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome, Settings
from pipelines.lib.transform.build_plan import plan_next_build
from pipelines.lib.transform.builds import finish_build, start_build
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import audit_mismatches
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from pipelines.lib.warehouse.tables import MONEY_SQL_TYPE
from sources.aws.columns import JSON_COLUMNS, PINNED_COLUMNS
from sources.common.sql import quote_identifier
from sources.common.types import Kind


def baseline(files: list[Path], database: Path) -> int:
    """Rows written by one `CREATE TABLE AS SELECT … FROM read_parquet(…)` of the pinned CUR columns."""
    sql_types = {Kind.DECIMAL: MONEY_SQL_TYPE, Kind.DATETIME: "TIMESTAMP"}
    columns = [
        f"cast({quote_identifier(name)} as {sql_types.get(kind, 'VARCHAR')}) as {quote_identifier(name)}"
        for name, kind in PINNED_COLUMNS.items()
    ]
    columns += [
        f"cast(to_json({quote_identifier(name)}) as VARCHAR) as {quote_identifier(name)}" for name in JSON_COLUMNS
    ]
    listed = ", ".join("'" + str(path).replace("'", "''") + "'" for path in files)
    with connect(database) as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE TABLE baseline AS SELECT {', '.join(columns)} FROM read_parquet([{listed}])")
        return con.execute("SELECT count(*) FROM baseline").fetchone()[0]


def ingest(home: FinopsHome, source: str) -> dict[str, object]:
    """What the ingest asset does for `source`: every pending delivery loaded, then raw audited."""
    billing = SOURCES_BY_NAME[source]
    log = logging.getLogger("bench.ingest")
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        results = ingest_landing_zone(home, con, billing, log=log)
        _, mismatches = audit_mismatches(con, billing.raw_table)
    rejected = [r.reason for r in results if r.status == "rejected"]
    if rejected or mismatches:
        raise SystemExit(f"ingest failed: rejected {rejected}, audit mismatches {mismatches[:5]}")
    return {"rows": sum(r.rows for r in results if r.status == "loaded"), "deliveries": len(results)}


def build(
    home: FinopsHome, target: Path, select: list[str], vars_: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The dbt asset's build without Dagster: the plan (and how long planning took), then dbt on it in `target`,
    whose manifest the plan reads (parsed before, as a deployment's is). `select` narrows the build (smoke runs);
    `vars_` are the run's dbt vars, as the asset's run config gives them."""
    started = time.perf_counter()
    engine = Settings.from_environment().engine
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        plan = plan_next_build(con, target / "manifest.json", vars_=vars_ or {}, engine=engine)
        selection_seconds = time.perf_counter() - started
        result: dict[str, object] = {
            "scope": plan.scope,
            "reason": plan.reason,
            "changed_tables": list(plan.changed_tables),
            "selected_nodes": len(plan.selected),
            "selection_seconds": round(selection_seconds, 3),
        }
        if plan.scope == "nothing":
            return result
        build_id = start_build(
            con,
            run_id=None,
            command=plan.command(),
            scope=plan.scope,
            project_state=plan.project_state,
            run_date=plan.run_date,
        )
    dbt = [str(Path(sys.executable).parent / "dbt"), "build", "--target-path", str(target), "--quiet"]
    dbt += plan.dbt_args() + (["--select", *select] if select else [])
    environment = os.environ | {"FINOPS_HOME": str(home.root), "FINOPS_ENGINE": engine}
    completed = subprocess.run(dbt, cwd=DBT_PROJECT_DIR, env=environment, capture_output=True, text=True)
    with connect(home.warehouse) as con:
        finish_build(con, build_id, status="succeeded" if completed.returncode == 0 else "failed")
    if completed.returncode != 0:
        raise SystemExit(f"dbt build failed (exit {completed.returncode}):\n{completed.stdout[-3000:]}")
    return result | {"build_seconds": round(time.perf_counter() - started - selection_seconds, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.phases")
    commands = parser.add_subparsers(dest="phase", required=True)
    base = commands.add_parser("baseline")
    base.add_argument("--database", type=Path, required=True)
    base.add_argument("files", type=Path, nargs="+")
    load = commands.add_parser("ingest")
    load.add_argument("--home", type=Path, required=True)
    load.add_argument("--source", default="aws_cur")
    models = commands.add_parser("build")
    models.add_argument("--home", type=Path, required=True)
    models.add_argument("--target", type=Path, required=True, help="dbt's target folder, holding the manifest")
    models.add_argument("select", nargs="*", help="dbt selectors narrowing the build (smoke runs)")
    args = parser.parse_args(argv)
    if args.phase == "baseline":
        result: dict[str, object] = {"rows": baseline(args.files, args.database)}
    elif args.phase == "build":
        result = build(FinopsHome(args.home), args.target, args.select)
    else:
        result = ingest(FinopsHome(args.home), args.source)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
