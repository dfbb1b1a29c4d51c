import dagster as dg
from dagster_dbt import DbtCliResource
from dagster_duckdb import DuckDBResource

from pipelines.lib.dbt import DBT_EXECUTABLE, dbt_project


@dg.definitions
def resources() -> dg.Definitions:
    # The warehouse path is resolved when a run starts, from FINOPS_HOME (see lib/settings.py).
    return dg.Definitions(
        resources={
            "duckdb": DuckDBResource(database=dg.EnvVar("FINOPS_WAREHOUSE")),
            "dbt": DbtCliResource(project_dir=dbt_project, dbt_executable=DBT_EXECUTABLE),
        }
    )
