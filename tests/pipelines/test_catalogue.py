"""The catalogue against everything built from it: one entry is all a source needs on the pipeline's side.

Each entry of `pipelines.lib.catalog.registry.CATALOGUE` must come out as an asset writing its raw table, with
its quality-suite check (and a freshness check when it is delivered on a cadence), read by the dbt models; and
every table dbt reads from outside the project must be an entry's. The graph is the one Dagster loads.
"""

from __future__ import annotations

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.lib.catalog.billing import BILLING_SOURCES
from pipelines.lib.catalog.registry import CATALOGUE, DELIVERED_SOURCES, ENTRIES_BY_NAME, RAW_TABLES


@pytest.fixture(scope="module")
def graph():
    return defs().resolve_asset_graph()


def _checks(graph) -> dict[dg.AssetKey, set[str]]:
    checks: dict[dg.AssetKey, set[str]] = {}
    for check in graph.asset_check_keys:
        checks.setdefault(check.asset_key, set()).add(check.name)
    return checks


def test_every_entry_is_an_asset_with_its_checks(graph):
    checks = _checks(graph)
    for entry in CATALOGUE:
        key = dg.AssetKey(list(entry.asset_key))
        assert graph.has(key), entry.name
        assert "load_passes_quality_suite" in checks[key], entry.name
        assert ("delivery_is_fresh" in checks[key]) == entry.watched, entry.name


def test_every_entry_feeds_the_models_and_the_models_read_only_entries(graph):
    """The dbt models' parents outside the dbt project (other than the project's seeds) are exactly the
    catalogue's assets: a source dbt reads is registered, and a registered source is read."""
    dbt_keys = {key for key in graph.get_all_asset_keys() if "dbt" in (graph.get(key).kinds or set())}
    read_by_models = {
        parent
        for key in dbt_keys
        for parent in graph.get(key).parent_keys
        if parent not in dbt_keys and graph.get(parent).group_name != "reference"
    }
    assert read_by_models == {dg.AssetKey(list(entry.asset_key)) for entry in CATALOGUE}


def test_names_tables_and_views_are_each_once():
    assert len(ENTRIES_BY_NAME) == len(CATALOGUE)
    assert len({entry.asset_key for entry in CATALOGUE}) == len(CATALOGUE)
    assert {table.name for table in RAW_TABLES} == {entry.raw_table.name for entry in CATALOGUE}
    assert len({table.name for table in RAW_TABLES}) == len(RAW_TABLES)
    assert {source.name for source in BILLING_SOURCES} <= {source.name for source in DELIVERED_SOURCES}
    # files a user delivers when they change or by hand: the host map, the training jobs' and the gateway's exports
    assert [entry.name for entry in CATALOGUE if not entry.watched] == [
        "telemetry_host_map",
        "slurm_sacct",
        "skypilot_cost_report",
        "litellm_spend_logs",
    ]
