"""Contracted tables on DuckDB (dbt_project/macros/duckdb/create_table_as.sql), built by real dbt.

A throwaway dbt project holds the project's own macro file, with the project's dispatch order, and contracted
models written here. The two-step build must leave the table dbt's own path leaves (the contract's columns in its
order, its types, NOT NULL and PRIMARY KEY in the catalog, and the rows), and must refuse what the constraints
refuse: a null in a not-null column, a key twice. A unique constraint keeps the adapter's path and still holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb

from pipelines.lib.settings import PROJECT_ROOT
from pipelines.lib.transform.dbt import DBT_EXECUTABLE

MACRO = PROJECT_ROOT / "dbt_project" / "macros" / "duckdb" / "create_table_as.sql"

MODEL_SQL = """
select *
from (values
    ({key_1}, cast('2025-01-01' as date), cast(1.5 as decimal(38, 12)), 'a'),
    ({key_2}, cast('2025-01-02' as date), cast(2.25 as decimal(38, 12)), {label_2})
) as rows (row_key, day, amount, label)
"""

MODEL_YAML = """version: 2
models:
  - name: {name}
    config:
      contract:
        enforced: true
    columns:
      - name: row_key
        data_type: string
        constraints:
          - type: not_null
          - type: {key_constraint}
      - name: day
        data_type: date
        constraints:
          - type: not_null
      - name: amount
        data_type: decimal(38, 12)
      - name: label
        data_type: string
        constraints:
          - type: not_null
"""

PROJECT_YAML = """name: contracts
version: '1.0'
profile: contracts
config-version: 2
dispatch:
  - macro_namespace: dbt
    search_order: ["contracts", "dbt"]
models:
  contracts:
    +materialized: table
"""


def _project(root: Path, models: dict[str, tuple[dict[str, str], str]]) -> Path:
    (root / "macros").mkdir(parents=True)
    shutil.copy(MACRO, root / "macros")
    (root / "models").mkdir()
    for name, (values, key_constraint) in models.items():
        (root / "models" / f"{name}.sql").write_text(MODEL_SQL.format(**values))
        (root / "models" / f"_{name}.yml").write_text(MODEL_YAML.format(name=name, key_constraint=key_constraint))
    (root / "dbt_project.yml").write_text(PROJECT_YAML)
    (root / "profiles.yml").write_text(
        f"contracts:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {root / 'c.duckdb'}\n"
    )
    return root


def _build(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            DBT_EXECUTABLE,
            "run",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
            "--target-path",
            "target",
        ],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=300,
    )


def test_a_contracted_table_has_the_contract_columns_types_constraints_and_rows(tmp_path: Path):
    good = {"key_1": "'k1'", "key_2": "'k2'", "label_2": "'b'"}
    project = _project(tmp_path / "project", {"two_step": (good, "primary_key"), "adapter_path": (good, "unique")})
    done = _build(project)
    assert done.returncode == 0, done.stdout[-3000:]

    compiled = (project / "target" / "run" / "contracts" / "models" / "two_step.sql").read_text()
    assert "add primary key (row_key)" in compiled
    assert "insert into" not in compiled
    with duckdb.connect(str(project / "c.duckdb"), read_only=True) as con:
        columns = con.sql('select column_name, column_type, "null", "key" from (describe two_step)').fetchall()
        constraints = con.sql(
            "select constraint_type, constraint_column_names from duckdb_constraints() "
            "where table_name = 'two_step' order by 1, 2"
        ).fetchall()
        rows = con.sql("select row_key, day::varchar, amount::varchar, label from two_step order by 1").fetchall()
        adapter_path = con.sql("select constraint_type from duckdb_constraints() where table_name = 'adapter_path'")
        adapter_constraints = sorted(row[0] for row in adapter_path.fetchall())
    assert columns == [
        ("row_key", "VARCHAR", "NO", "PRI"),
        ("day", "DATE", "NO", None),
        ("amount", "DECIMAL(38,12)", "YES", None),
        ("label", "VARCHAR", "NO", None),
    ]
    assert constraints == [
        ("NOT NULL", ["day"]),
        ("NOT NULL", ["label"]),
        ("NOT NULL", ["row_key"]),
        ("PRIMARY KEY", ["row_key"]),
    ]
    assert rows == [("k1", "2025-01-01", "1.500000000000", "a"), ("k2", "2025-01-02", "2.250000000000", "b")]
    assert adapter_constraints == ["NOT NULL", "NOT NULL", "NOT NULL", "UNIQUE"]


def test_a_null_in_a_not_null_column_or_a_key_twice_fails_the_model(tmp_path: Path):
    models = {
        "null_label": ({"key_1": "'k1'", "key_2": "'k2'", "label_2": "null"}, "primary_key"),
        "key_twice": ({"key_1": "'k1'", "key_2": "'k1'", "label_2": "'b'"}, "primary_key"),
        "key_twice_unique": ({"key_1": "'k1'", "key_2": "'k1'", "label_2": "'b'"}, "unique"),
    }
    done = _build(_project(tmp_path / "project", models))
    assert done.returncode == 1, done.stdout[-3000:]
    assert "ERROR=3" in done.stdout, done.stdout[-3000:]
    assert "NOT NULL constraint failed" in done.stdout and "label" in done.stdout, done.stdout[-3000:]
    assert "PRIMARY KEY or UNIQUE constraint" in done.stdout, done.stdout[-3000:]
    with duckdb.connect(str(tmp_path / "project" / "c.duckdb"), read_only=True) as con:
        tables = con.sql("select table_name from duckdb_tables()").fetchall()
    assert tables == []
