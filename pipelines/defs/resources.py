import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.settings import Settings
from pipelines.lib.transform.dbt import dbt_cli


@dg.definitions
def resources() -> dg.Definitions:
    # The edge of every Dagster process (webserver, daemon, a run, the CLI's in-process runs): the settings are read
    # from the environment here, once, and passed to the assets, sensors and schedules as the `settings` resource.
    # A CLI run passes its own (`gpu-finops demo` runs offline): see pipelines/cli/runs.py.
    settings = Settings.from_environment()
    return dg.Definitions(
        resources={
            "settings": settings,
            "duckdb": DuckDBResource(
                database=str(settings.home.warehouse),
                connection_config={"memory_limit": settings.duckdb_memory_limit},
            ),
            "dbt": dbt_cli(),
        }
    )
