"""Which assets a run builds, written once for the CLI, the landing sensor's jobs and the daily job."""

import dagster as dg


def transform_selection() -> dg.AssetSelection:
    """Every model, seed and view, with their checks: every asset but the loads.

    Daily-partitioned price and telemetry assets run through their own jobs and commands. A load's run
    builds every model, not only those downstream of it: all models read the reference seeds, whose tests
    (relationships from any model to a seed) dbt runs whenever a seed is built, and dbt unit tests read the
    columns of their models' parents, so on a new warehouse every model must exist.
    """
    return (dg.AssetSelection.all() - dg.AssetSelection.groups("ingest", "prices", "telemetry")) | dbt_source_tests()


def load_selection(*asset_keys: tuple[str, ...]) -> dg.AssetSelection:
    """The ingest assets of these billing sources, with their quality and reconciliation checks."""
    return dg.AssetSelection.assets(*(dg.AssetKey(list(key)) for key in asset_keys)) - dbt_source_tests()


def group_loads(*groups: str) -> dg.AssetSelection:
    """The assets of these groups (daily price or telemetry loads) with their own checks, without dbt's."""
    return dg.AssetSelection.groups(*groups) - dbt_source_tests()


def dbt_source_tests() -> dg.AssetSelection:
    """dbt's tests of its sources (the raw and price tables), which dagster-dbt makes checks of those tables.

    They run in the dbt build, so they belong to the runs that build models; a run that only loads (an ingest,
    a day's prices or telemetry) leaves them out, or it would start dbt, and a partitioned job could not hold it.
    """
    from pipelines.defs.transform.dbt import gpu_finops_dbt_models

    models = gpu_finops_dbt_models
    return dg.AssetSelection.checks(*(key for key in models.check_keys if key.asset_key not in models.keys))
