"""The gpu-finops Dagster code location: definitions loaded from `defs/`, one folder per concern."""

from pathlib import Path

import dagster as dg

from pipelines.lib.operations.instance import install_instance_config_into
from pipelines.lib.settings import Settings


@dg.definitions
def defs() -> dg.Definitions:
    # Loading the code location is where a Dagster process starts on FINOPS_HOME: its folders and the instance's
    # dagster.yaml are put in place here, not on import.
    install_instance_config_into(Settings.from_environment().home)
    # Every step writes DuckDB and so waits for the one `duckdb_writer` slot: a run's steps never run side by side.
    # The multiprocess executor would still start a Python process per step, importing the whole code location
    # each time (about a minute a step on two busy cores: most of a daily run); in one process they follow each other.
    return dg.Definitions.merge(
        dg.load_from_defs_folder(path_within_project=Path(__file__).parent),
        dg.Definitions(executor=dg.in_process_executor),
    )
