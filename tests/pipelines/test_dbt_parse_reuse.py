"""A dbt invocation on a new warehouse starts from the project's parse, and that parse is the one dbt makes there.

dbt would parse the whole project again in every new home (its saved parse names the connection profile, which
names the warehouse's path); `reuse_partial_parse` marks the project's parse as made with the home's profile. That
is only right while nothing dbt parses depends on the profile or on the environment: checked here against dbt's own
full parse in the same environment.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pipelines.lib.settings import DBT_PROJECT_DIR
from pipelines.lib.transform.dbt import DBT_EXECUTABLE, PROJECT_PARSE, parse_project_if_changed, reuse_partial_parse
from tests.support.dbt_helpers import dbt_environment

_SECTIONS = ("nodes", "sources", "macros", "unit_tests", "exposures", "metrics", "semantic_models", "saved_queries")


def _parse(target: Path, environment: dict[str, str], *flags: str) -> str:
    parsed = subprocess.run(
        [DBT_EXECUTABLE, "--debug", "parse", *flags, "--target-path", str(target), "--log-path", str(target / "logs")],
        cwd=DBT_PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert parsed.returncode == 0, parsed.stdout[-3000:]
    return parsed.stdout


def _project(target: Path) -> dict[str, object]:
    """What dbt parsed, without the parse's own timestamps."""
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    parsed: dict[str, object] = {key: manifest[key] for key in ("parent_map", "child_map", "disabled")}
    for section in _SECTIONS:
        for unique_id, node in manifest[section].items():
            parsed[unique_id] = {field: value for field, value in node.items() if field != "created_at"}
    return parsed


def test_a_new_home_starts_from_the_projects_parse_and_it_equals_a_full_parse_there(tmp_path: Path) -> None:
    parse_project_if_changed()
    home = tmp_path / "home"
    home.mkdir()
    # Everything a test or a deployment varies: the warehouse, DuckDB's memory, the owned servers' last day.
    environment = dbt_environment(home) | {
        "FINOPS_DUCKDB_MEMORY_LIMIT": "1GB",
        "FINOPS_ONPREM_COSTS_THROUGH": "2026-01-31",
    }
    reused = tmp_path / "reused"
    reuse_partial_parse(home / "dbt" / "no-saved-parse.msgpack", reused, environment)

    log = _parse(reused, environment)
    assert "Unable to do partial parsing" not in log
    assert "no changes found, skipping parsing" in log

    _parse(tmp_path / "full", environment, "--no-partial-parse")
    reused_project, full_project = _project(reused), _project(tmp_path / "full")
    assert reused_project.keys() == full_project.keys()
    differing = sorted(key for key in full_project if reused_project[key] != full_project[key])
    assert differing == []


def test_a_saved_parse_of_the_home_comes_first_and_another_engines_parse_is_never_reused(tmp_path: Path) -> None:
    parse_project_if_changed()
    home = tmp_path / "home"
    saved = home / "dbt" / "partial_parse-duckdb.msgpack"
    saved.parent.mkdir(parents=True)
    saved.write_bytes(PROJECT_PARSE.read_bytes() + b"saved")  # newer than every project file
    reuse_partial_parse(saved, tmp_path / "from-home", dbt_environment(home))
    assert (tmp_path / "from-home" / "partial_parse.msgpack").read_bytes() == saved.read_bytes()

    # The project's parse was made with the DuckDB adapter: on Spark, dbt parses in full.
    reuse_partial_parse(tmp_path / "none.msgpack", tmp_path / "spark", dbt_environment(home, engine="spark"))
    assert not (tmp_path / "spark" / "partial_parse.msgpack").exists()
