import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.settings import duckdb_memory_limit
from pipelines.lib.transform.dbt import dbt_cli


@dg.definitions
def resources() -> dg.Definitions:
    # The warehouse path is resolved when a run starts, from FINOPS_HOME (see lib/settings.py).
    return dg.Definitions(
        resources={
            "duckdb": DuckDBResource(
                database=dg.EnvVar("FINOPS_WAREHOUSE"), connection_config={"memory_limit": duckdb_memory_limit()}
            ),
            "dbt": dbt_cli(),
        }
    )
