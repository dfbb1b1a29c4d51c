"""One home for all state.

`FINOPS_HOME` (default `<project>/data`) holds the warehouse, the landing zone, quarantine,
exports, the docs site and the Dagster instance. Dagster, dbt (through `profiles.yml`) and the
CLI all read the warehouse path from here, so there is exactly one setting to change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DBT_PROJECT_DIR = Path(os.environ.get("FINOPS_DBT_PROJECT_DIR") or PROJECT_ROOT / "dbt_project").resolve()
"""The dbt project the pipeline builds: the bundled one, or (`FINOPS_DBT_PROJECT_DIR`) a copy with an
organisation's own models and rules."""
DAGSTER_YAML = PROJECT_ROOT / "dagster.yaml"
DAGSTER_POSTGRES_YAML = PROJECT_ROOT / "dagster-postgres.yaml"

DUCKDB_WRITER_POOL = "duckdb_writer"
"""Concurrency pool (size 1 in dagster.yaml) that every DuckDB writer uses: DuckDB allows one writer process."""


@dataclass(frozen=True)
class FinopsHome:
    root: Path

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def landing(self) -> Path:
        return self.root / "landing"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def exports(self) -> Path:
        return self.root / "exports"

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def reports(self) -> Path:
        return self.root / "report"

    @property
    def logs(self) -> Path:
        """Log files of CLI runs whose detail would bury what matters on the terminal (e.g. a feed outage)."""
        return self.root / "logs"

    @property
    def lake(self) -> Path:
        """The raw layer (Parquet): FINOPS_LAKE, or `lake` in this home."""
        return lake_root(self.root)

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    @property
    def spark_warehouse(self) -> Path:
        """Where the `spark` dbt target writes its tables (`<schema>.db/<table>/`): see profiles.yml."""
        return self.root / "spark" / "warehouse"

    @property
    def raw_payloads(self) -> Path:
        """Fetched API responses, kept compressed so a day can be re-parsed without refetching."""
        return self.root / "raw"

    def price_payloads(self, provider: str, day: date) -> Path:
        return self.raw_payloads / "prices" / provider / day.isoformat()

    def landing_for(self, source: str) -> Path:
        return self.landing / source

    def create_folders(self) -> FinopsHome:
        """Create the folders the pipeline writes into (landing, quarantine, exports, docs, the Dagster instance's).

        The instance's dagster.yaml is installed apart, by the processes that start Dagster
        (pipelines/lib/operations/instance.py: `install_instance_config_into`).
        """
        for folder in (self.landing, self.quarantine, self.exports, self.docs, self.dagster_home):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def daily_schedule_cron() -> str:
    """FINOPS_DAILY_CRON (UTC; default 06:00 every day): when the daily refresh runs."""
    return os.environ.get("FINOPS_DAILY_CRON", "").strip() or "0 6 * * *"


def restatement_days() -> int:
    """FINOPS_RESTATEMENT_DAYS (default 14): for how many days after a month ends its data is still re-loaded."""
    return int(os.environ.get("FINOPS_RESTATEMENT_DAYS", "").strip() or 14)


def offline() -> bool:
    """FINOPS_OFFLINE=1: read bundled snapshots instead of calling providers (demo, air-gapped sites)."""
    return os.environ.get("FINOPS_OFFLINE", "").strip().lower() in {"1", "true", "yes"}


ENGINES = ("duckdb", "spark")


def engine() -> str:
    """FINOPS_ENGINE (default duckdb): the engine dbt builds the models on, `duckdb` or `spark`.

    It is also the dbt target (profiles.yml). Ingest runs in DuckDB whatever the engine and writes the lake,
    which both engines read; on Spark the marts are Spark tables that DuckDB reads back for the CLI and report.
    """
    chosen = os.environ.get("FINOPS_ENGINE", "").strip().lower() or "duckdb"
    if chosen not in ENGINES:
        raise ValueError(f"FINOPS_ENGINE={chosen!r} is not an engine this project builds on; use one of {ENGINES}")
    return chosen


DEFAULT_DUCKDB_MEMORY_LIMIT = "1.5GB"


def duckdb_memory_limit() -> str:
    """FINOPS_DUCKDB_MEMORY_LIMIT (default 1.5GB): what one DuckDB connection may hold before it spills to disk.

    DuckDB's own default is 80% of the machine's memory, which a big build takes; every writer (the
    ingest, the Dagster resource, dbt's profile) uses this one setting so a run's memory is bounded. 1.5GB keeps
    a whole run, dbt's own process included, under 2 GB at 10M and 30M line items (docs/benchmarks.md); a full
    10M build then takes about 10% longer than with 3GB. A bigger machine builds faster with a higher limit.
    """
    return os.environ.get("FINOPS_DUCKDB_MEMORY_LIMIT", "").strip() or DEFAULT_DUCKDB_MEMORY_LIMIT


def lake_root(home_root: Path | None = None) -> Path:
    """FINOPS_LAKE (default `$FINOPS_HOME/lake`): where validated deliveries land as Parquet, read by every engine.

    `home_root` is the FINOPS_HOME to default into (the warehouse's folder); FINOPS_HOME's setting when not given.
    """
    configured = os.environ.get("FINOPS_LAKE", "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    root = home_root or Path(os.environ.get("FINOPS_HOME") or PROJECT_ROOT / "data").expanduser()
    return root.resolve() / "lake"


def finops_home() -> FinopsHome:
    """Resolve FINOPS_HOME and publish it (absolute) to child processes such as dbt and Dagster."""
    root = Path(os.environ.get("FINOPS_HOME") or PROJECT_ROOT / "data").expanduser().resolve()
    os.environ["FINOPS_HOME"] = str(root)
    os.environ["DAGSTER_HOME"] = str(root / "dagster")
    # Derived, not a second setting: what the Dagster DuckDB resource reads at run time.
    os.environ["FINOPS_WAREHOUSE"] = str(root / "warehouse.duckdb")
    return FinopsHome(root)
