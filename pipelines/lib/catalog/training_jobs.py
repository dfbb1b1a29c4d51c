"""Training jobs: Slurm `sacct` exports and SkyPilot `sky cost-report` captures, per delivered file.

Each file replaces its own rows (`source_ref`, the file's name): a re-export of the same window under the same
name restates it; a new window under a new name adds to it, and staging keeps a job's newest row.
"""

from __future__ import annotations

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.facts import InRange, NotBefore, QualityFacts
from pipelines.lib.catalog.tables import ReferenceTable
from sources.common.row_checks import EARLIEST, LATEST, NonNegative
from sources.training_jobs.skypilot import SKYPILOT_SCHEMA
from sources.training_jobs.slurm import SLURM_SCHEMA

SLURM_SOURCE = "slurm_sacct"
SKYPILOT_SOURCE = "skypilot_cost_report"

SLURM_JOBS = ReferenceTable(
    name="raw.slurm_jobs", columns=SLURM_SCHEMA, replace_key=("source_ref",), partition_by=("source_ref",)
)
SKYPILOT_CLUSTERS = ReferenceTable(
    name="raw.skypilot_clusters", columns=SKYPILOT_SCHEMA, replace_key=("source_ref",), partition_by=("source_ref",)
)

SLURM_FACTS = QualityFacts(
    keys=("job_id", "elapsed_seconds", "state", "gpus", "source_row"),
    not_negative=(NonNegative("elapsed_seconds"), NonNegative("gpus"), NonNegative("node_count")),
    in_range=(
        InRange("started_at", EARLIEST, LATEST, unit="(a plausible job time)"),
        InRange("submitted_at", EARLIEST, LATEST, unit="(a plausible job time)"),
    ),
    ordered=(NotBefore("ended_at", "started_at"),),
)
"""raw.slurm_jobs: a job holds GPUs for a whole number of seconds, never negative, and ends after it starts."""

SKYPILOT_FACTS = QualityFacts(
    keys=("cluster_name", "launched_at", "duration_seconds", "node_count", "currency", "source_row"),
    cost_columns=("hourly_price", "cost"),
    currency_columns=("currency",),
    not_negative=(
        NonNegative("duration_seconds"),
        NonNegative("node_count"),
        NonNegative("accelerators_per_node"),
        NonNegative("hourly_price"),
        NonNegative("cost"),
    ),
    in_range=(InRange("launched_at", EARLIEST, LATEST, unit="(a plausible launch time)"),),
    ordered=(NotBefore("captured_at", "launched_at"),),
)
"""raw.skypilot_clusters: durations, counts and SkyPilot's own prices are never negative; a cluster was launched
before the report that lists it was printed."""

SLURM = CatalogEntry(
    name=SLURM_SOURCE,
    title="Slurm sacct exports",
    asset_key=("raw", "slurm_jobs"),
    raw_table=SLURM_JOBS,
    quality=SLURM_FACTS,
    # Exported by a cron job or by hand on the cluster's login node: no cadence to watch.
    delivery_cadence=None,
)

SKYPILOT = CatalogEntry(
    name=SKYPILOT_SOURCE,
    title="SkyPilot cost reports",
    asset_key=("raw", "skypilot_clusters"),
    raw_table=SKYPILOT_CLUSTERS,
    quality=SKYPILOT_FACTS,
    delivery_cadence=None,
)

TRAINING_JOBS = (SLURM, SKYPILOT)
