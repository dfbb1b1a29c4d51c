"""The gpu-finops Dagster code location: definitions loaded from `defs/`, one folder per concern."""

from pathlib import Path

import dagster as dg

from pipelines.lib.settings import finops_home

finops_home().ensure()


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
