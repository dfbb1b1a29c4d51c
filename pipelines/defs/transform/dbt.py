import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets

from pipelines.lib.dbt import FinopsDbtTranslator, dbt_project, ensure_manifest
from pipelines.lib.settings import DUCKDB_WRITER_POOL

ensure_manifest()


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    dagster_dbt_translator=FinopsDbtTranslator(),
    pool=DUCKDB_WRITER_POOL,
)
def gpu_finops_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource):
    """Staging, intermediate and mart models with their tests, built in one `dbt build`."""
    yield from dbt.cli(["build"], context=context).stream()
