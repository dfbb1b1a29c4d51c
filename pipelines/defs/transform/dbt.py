import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets
from dagster_duckdb import DuckDBResource

from pipelines.lib.dbt import FinopsDbtTranslator, dbt_project, ensure_manifest
from pipelines.lib.raw_schema import ensure_raw_tables
from pipelines.lib.settings import DUCKDB_WRITER_POOL

ensure_manifest()


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    dagster_dbt_translator=FinopsDbtTranslator(),
    pool=DUCKDB_WRITER_POOL,
)
def gpu_finops_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, duckdb: DuckDBResource):
    """Staging, intermediate and mart models with their tests, built in one `dbt build`."""
    with duckdb.get_connection() as con:
        ensure_raw_tables(con)
    yield from dbt.cli(["build"], context=context).stream()
