"""The same dbt project on Spark, proven against the DuckDB build of the same lake.

One standalone cluster (a master and a worker, separate JVMs on 127.0.0.1) serves the whole module:
`FINOPS_ENGINE=spark gpu-finops demo` runs against it (ingest into the lake, every model built on Spark,
the docs, the summary and the report read Spark's tables), then a DuckDB build of the very same lake in a
second home is compared with it table by table, value for value, and the dbt unit tests run on the cluster.
Last, a day of prices is built as the daily run plans it (only what the day changed) and compared the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from bench.phases import build
from pipelines.cli._output import money
from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.dbt import dbt_project
from pipelines.lib.transform.spark_tables import SparkTable, spark_tables
from scripts.compare_warehouses import BUILD_BOOKKEEPING, LOAD_LINEAGE, compare
from synthetic_data.demo_organisation import demo_last_day
from tests.support.dbt_helpers import passed_unit_tests, run_dbt, unit_tests_in_yaml
from tests.support.spark_cluster import standalone_cluster

pytestmark = [pytest.mark.slow, pytest.mark.spark]

DEMO_VARS = json.dumps({"onprem_costs_through": demo_last_day().isoformat()})
ENSURE_RAW_VIEWS = """
from pipelines.lib.settings import Settings
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from pipelines.lib.warehouse.connection import connect
with connect(Settings.from_environment().home.warehouse) as con:
    recover_and_ensure_raw_tables(con)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster"), memory="3g") as master_url:
        yield master_url


@pytest.fixture(scope="module")
def spark_demo(cluster: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """`FINOPS_ENGINE=spark gpu-finops demo --seed 7` on the cluster: its home and the finished process."""
    home = tmp_path_factory.mktemp("spark-home")
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "demo", "--seed", "7"],
        env=_env(home, engine="spark", FINOPS_SPARK_MASTER=cluster),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return home, done


@pytest.fixture(scope="module")
def duckdb_build_of_the_same_lake(spark_demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second home whose DuckDB reads the Spark demo's lake (FINOPS_LAKE), with every model and seed built by
    dbt-duckdb. Its data tests are left out: the Spark demo ran them on Spark, and the end-to-end tests on DuckDB."""
    spark_home, _ = spark_demo
    return _duckdb_build(tmp_path_factory.mktemp("duckdb-home"), spark_home / "lake")


@pytest.fixture(scope="module")
def project_tables(spark_demo, duckdb_build_of_the_same_lake) -> list[SparkTable]:
    """The project's tables and seeds (from the DuckDB build's manifest), located in the Spark demo's warehouse."""
    spark_home, _ = spark_demo
    return spark_tables(duckdb_build_of_the_same_lake / "target" / "manifest.json", spark_home / "spark" / "warehouse")


def test_the_spark_demo_summarises_spark_tables_with_the_duckdb_build_figures(
    spark_demo, duckdb_build_of_the_same_lake, project_tables
):
    """Every table and seed of the project has a DuckDB view over Spark's files, and the summary `demo` printed
    (read through those views) states the spend the DuckDB build of the same lake computes, per currency."""
    home, done = spark_demo
    assert len(project_tables) > 30, "the manifest lists the project's tables"
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        views = set(
            con.execute(
                "select table_schema, table_name from information_schema.tables where table_type = 'VIEW'"
            ).fetchall()
        )
    assert {(table.schema, table.name) for table in project_tables} <= views
    with duckdb.connect(str(duckdb_build_of_the_same_lake / "warehouse.duckdb"), read_only=True) as con:
        totals = con.execute(
            "select billing_currency, bill_effective_cost, gpu_effective_cost from marts.rpt_gpu_share_of_bill"
            " where bill_effective_cost is not null"
        ).fetchall()
    assert totals
    for currency, spend, gpu_spend in totals:
        assert f"total spend {currency} {money(spend)}; GPU spend {currency} {money(gpu_spend or 0)}" in done.stdout


def test_every_table_built_on_spark_equals_the_duckdb_build_of_the_same_lake(
    spark_demo, duckdb_build_of_the_same_lake, project_tables
):
    """Same rows as a multiset (EXCEPT ALL both ways, DECIMAL compared exactly), same columns and types, for every
    table Spark built, marts and intermediate tables and seeds alike."""
    spark_home, _ = spark_demo
    _assert_equal_tables(duckdb_build_of_the_same_lake, spark_home, project_tables)


def test_every_dbt_unit_test_passes_on_the_cluster(spark_demo, cluster):
    home, _ = spark_demo
    done = _dbt(
        home,
        _env(home, engine="spark", FINOPS_SPARK_MASTER=cluster),
        "test",
        "--select",
        "test_type:unit",
        check=False,
    )
    assert passed_unit_tests(done.stdout) == unit_tests_in_yaml(), done.stdout[-4000:]


def test_a_build_of_what_a_price_day_changed_equals_a_full_build_of_the_same_lake(
    spark_demo, cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The daily run on Spark builds what the day changed, and that is enough: a new day of prices in the demo's
    lake, then the build the dbt asset plans against the demo's own (bench.phases.build: the plan, then dbt on it)
    covers the models downstream of the prices only, and every table of the project equals a full DuckDB build of
    the same lake. Last in the module: it changes the demo's warehouse."""
    home, _ = spark_demo
    spark_env = _env(home, engine="spark", FINOPS_SPARK_MASTER=cluster)
    day = (demo_last_day() + timedelta(days=1)).isoformat()
    loaded = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "prices", "refresh", "--offline", "--date", day, "--no-build"],
        env=spark_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert loaded.returncode == 0, loaded.stdout[-3000:] + loaded.stderr[-3000:]

    # The plan is made in this process, with the environment the demo's build had (it is part of the state).
    for name in ("FINOPS_HOME", "FINOPS_ENGINE", "FINOPS_SPARK_MASTER", "SPARK_LOCAL_IP"):
        monkeypatch.setenv(name, spark_env[name])
    target = tmp_path / "target"
    target.mkdir()
    shutil.copy(dbt_project.manifest_path, target / "manifest.json")
    planned = build(FinopsHome(home), target, [], vars_=json.loads(DEMO_VARS))
    assert planned["scope"] == "changed", planned
    assert "raw.price_observations" in planned["changed_tables"]
    built = {result["unique_id"] for result in json.loads((target / "run_results.json").read_text())["results"]}
    assert "model.gpu_finops.fct_gpu_market_prices" in built
    assert "model.gpu_finops.int_billing__cost_lines" not in built

    duckdb_home = _duckdb_build(tmp_path / "duckdb-home", home / "lake")
    tables = spark_tables(duckdb_home / "target" / "manifest.json", home / "spark" / "warehouse")
    _assert_equal_tables(duckdb_home, home, tables)


def _duckdb_build(home: Path, lake: Path) -> Path:
    """A home whose DuckDB reads `lake` (FINOPS_LAKE), every model and seed built from scratch by dbt-duckdb (no
    data tests: the Spark builds ran them on Spark, and the end-to-end tests on DuckDB)."""
    home.mkdir(parents=True, exist_ok=True)
    env = _env(home, engine="duckdb", FINOPS_LAKE=str(lake))
    subprocess.run([sys.executable, "-c", ENSURE_RAW_VIEWS], env=env, check=True, timeout=300)
    _dbt(home, env, "build", "--full-refresh", "--exclude-resource-type", "test", "unit_test", "--vars", DEMO_VARS)
    return home


def _assert_equal_tables(duckdb_home: Path, spark_home: Path, tables: list[SparkTable]) -> None:
    result = compare(
        duckdb_home / "warehouse.duckdb",
        spark_home / "warehouse.duckdb",
        sorted({table.schema for table in tables}),
        [*BUILD_BOOKKEEPING, *LOAD_LINEAGE],
        only={f"{table.schema}.{table.name}" for table in tables},
    )
    assert not result.problems, "\n".join(result.problems)
    assert len(result.equal) == len(tables)


def _env(home: Path, *, engine: str, **extra: str) -> dict[str, str]:
    """The environment of a run on `engine`; Spark's driver listens on loopback, where the cluster's executors are."""
    return os.environ | {"FINOPS_HOME": str(home), "FINOPS_ENGINE": engine, "SPARK_LOCAL_IP": "127.0.0.1"} | extra


def _dbt(home: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = run_dbt(home, home / "target", *args, "--log-path", str(home / "logs"), environment=env, timeout=3600)
    if check:
        assert done.returncode == 0, done.stdout[-4000:]
    return done
