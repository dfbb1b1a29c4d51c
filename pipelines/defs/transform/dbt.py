import json

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets
from dagster_duckdb import DuckDBResource
from pydantic import Field

from pipelines.lib.dbt import FinopsDbtTranslator, dbt_project, ensure_manifest
from pipelines.lib.raw_schema import ensure_raw_tables
from pipelines.lib.settings import DUCKDB_WRITER_POOL

ensure_manifest()


class DbtBuildConfig(dg.Config):
    """dbt project variables for one run, passed as `--vars`.

    The demo pins `onprem_costs_through` to its last day this way, so its on-prem cost lines cover
    exactly the sample months whatever today's date is. Empty (the default): dbt_project.yml decides.
    """

    vars: dict[str, str] = Field(default_factory=dict)


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    dagster_dbt_translator=FinopsDbtTranslator(),
    pool=DUCKDB_WRITER_POOL,
)
def gpu_finops_dbt_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, duckdb: DuckDBResource, config: DbtBuildConfig
):
    """Staging, intermediate and mart models with their tests, built in one `dbt build`."""
    with duckdb.get_connection() as con:
        ensure_raw_tables(con)
    # Unit tests check the SQL against fixed cases, not the data: dbt recommends leaving them out of production
    # builds. The test suite runs every one of them (tests/test_dbt_unit_tests.py).
    args = ["build", "--exclude-resource-type", "unit_test"]
    if config.vars:
        args += ["--vars", json.dumps(config.vars, sort_keys=True)]
    yield from dbt.cli(args, context=context).stream()
