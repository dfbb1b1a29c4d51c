"""The dbt project as Dagster sees it: one DbtProject and one translator for every dbt asset."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, DbtProject
from dagster_dbt.dbt_project import DagsterDbtProjectPreparer

from pipelines.lib.settings import DBT_PROJECT_DIR

_BESIDE_PYTHON = Path(sys.executable).parent / "dbt"
DBT_EXECUTABLE = str(_BESIDE_PYTHON) if _BESIDE_PYTHON.exists() else shutil.which("dbt") or "dbt"
"""The dbt installed with this package, so the CLI works without an activated virtualenv."""


class _ParseWithOurDbt(DagsterDbtProjectPreparer):
    """dagster-dbt's preparer (it locks the manifest, so parallel processes never write it at once), run with
    the dbt beside this Python rather than whichever `dbt` is first on PATH."""

    def _prepare_manifest(self, project: DbtProject) -> None:
        dbt_cli().cli(["parse", "--quiet"], target_path=project.target_path).wait()


dbt_project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR)


def ensure_manifest() -> None:
    """Parse the dbt project when the manifest is missing or older than any project file."""
    manifest = dbt_project.manifest_path
    sources = (
        path
        for folder in ("models", "macros", "seeds", "tests")
        for path in (DBT_PROJECT_DIR / folder).rglob("*")
        if path.is_file()
    )
    newest = max((path.stat().st_mtime for path in sources), default=0.0)
    newest = max(newest, (DBT_PROJECT_DIR / "dbt_project.yml").stat().st_mtime)
    if not manifest.exists() or manifest.stat().st_mtime < newest:
        _ParseWithOurDbt().prepare(dbt_project)


def dbt_cli() -> DbtCliResource:
    return DbtCliResource(project_dir=dbt_project, dbt_executable=DBT_EXECUTABLE)


class FinopsDbtTranslator(DagsterDbtTranslator):
    """Asset keys are `<schema>/<name>`, groups are the dbt layers (staging, intermediate, marts)."""

    def __init__(self) -> None:
        super().__init__(settings=DagsterDbtTranslatorSettings(enable_asset_checks=True))

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            return dg.AssetKey([dbt_resource_props["source_name"], dbt_resource_props["name"]])
        schema = dbt_resource_props.get("config", {}).get("schema") or dbt_resource_props["schema"]
        return dg.AssetKey([schema, dbt_resource_props["name"]])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        fqn = dbt_resource_props.get("fqn", [])
        if dbt_resource_props["resource_type"] == "seed":
            return "reference"
        return fqn[1] if len(fqn) > 2 else "transform"
