"""Which assets a run builds, written once for the CLI, the landing sensor's jobs and the daily job."""

import dagster as dg


def transform_selection() -> dg.AssetSelection:
    """Every model, seed and view, with their checks: every asset but the loads.

    Daily-partitioned price and telemetry assets run through their own jobs and commands. A load's run
    builds every model, not only those downstream of it: all models read the reference seeds, whose tests
    (relationships from any model to a seed) dbt runs whenever a seed is built, and dbt unit tests read the
    columns of their models' parents, so on a new warehouse every model must exist.
    """
    return dg.AssetSelection.all() - dg.AssetSelection.groups("ingest", "prices", "telemetry")


def load_selection(*asset_keys: tuple[str, ...]) -> dg.AssetSelection:
    """The ingest assets of these billing sources, with their quality and reconciliation checks."""
    return dg.AssetSelection.assets(*(dg.AssetKey(list(key)) for key in asset_keys))
