"""The `column_rules` generic test (dbt_project/tests/generic/test_column_rules.sql), run by real dbt on DuckDB.

A throwaway dbt project holds the project's own test file and one seed whose bad rows are counted by hand below; its
stored failures must name each broken rule with that count, and a clean seed must pass.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb

from pipelines.lib.settings import PROJECT_ROOT
from pipelines.lib.transform.dbt import DBT_EXECUTABLE

GENERIC_TEST = PROJECT_ROOT / "dbt_project" / "tests" / "generic" / "test_column_rules.sql"

# ids 2 and 3 are missing (not_null); row 3's amount is below zero (non_negative); row 4's kind is not accepted;
# row 3 is of kind a with an amount of 4 or less (the expression). Row 5's null amount and kind pass, as in dbt's
# single-column tests and in dbt_utils' expression_is_true (the expression is null there, not false); row 6's quote in
# a value is escaped. true_on_every_row is stricter: `id <> 4` is false on row 4 and null on rows 2 and 3, three rows.
BAD_ROWS = "id,amount,kind\n1,5.50,a\n,3,b\n,-2,a\n4,0,c\n5,,\n6,1,it's\n"
CLEAN_ROWS = "id,amount,kind\n1,5.50,a\n2,0,b\n3,,\n"

SEED_YAML = """version: 2
seeds:
  - name: {name}
    config:
      column_types: {{id: integer, amount: "decimal(38, 12)", kind: varchar}}
    data_tests:
      - column_rules:
          name: {name}_column_rules
          arguments:
            not_null: [id]
            non_negative: [amount]
            accepted_values:
              kind: ["a", "b", "it's"]
            expressions:
              kind a has an amount: kind <> 'a' or amount > 4
            true_on_every_row:
              id is known and not 4: id <> 4
"""


def _project(root: Path, seeds: dict[str, str]) -> Path:
    (root / "tests" / "generic").mkdir(parents=True)
    shutil.copy(GENERIC_TEST, root / "tests" / "generic")
    (root / "seeds").mkdir()
    for name, rows in seeds.items():
        (root / "seeds" / f"{name}.csv").write_text(rows)
        (root / "seeds" / f"_{name}.yml").write_text(SEED_YAML.format(name=name))
    (root / "dbt_project.yml").write_text("name: rules\nversion: '1.0'\nprofile: rules\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        f"rules:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {root / 'rules.duckdb'}\n"
    )
    return root


def test_each_broken_rule_is_a_failing_row_with_its_count_and_clean_rows_pass(tmp_path: Path):
    project = _project(tmp_path / "project", {"bad_rows": BAD_ROWS, "clean_rows": CLEAN_ROWS})
    done = subprocess.run(
        [DBT_EXECUTABLE, "build", "--store-failures", "--project-dir", str(project), "--profiles-dir", str(project)],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-3000:]
    assert "PASS clean_rows_column_rules" in done.stdout, done.stdout[-3000:]
    assert "FAIL 5 bad_rows_column_rules" in done.stdout, done.stdout[-3000:]

    with duckdb.connect(str(project / "rules.duckdb"), read_only=True) as con:
        failures = con.sql(
            "select broken_rule, failing_rows from main_dbt_test__audit.bad_rows_column_rules order by 1"
        ).fetchall()
    assert failures == [
        ("amount is negative", 1),
        ("id is known and not 4", 3),
        ("id is null", 2),
        ("kind a has an amount", 1),
        ("kind is not an accepted value", 1),
    ]
