"""One home for all state.

`FINOPS_HOME` (default `<project>/data`) holds the warehouse, the landing zone, quarantine,
exports, the docs site and the Dagster instance. Dagster, dbt (through `profiles.yml`) and the
CLI all read the warehouse path from here, so there is exactly one setting to change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from sources.telemetry.nvidia_smi import is_time_zone

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

    def dbt_partial_parse(self, engine: str) -> Path:
        """dbt's parse of the project for this warehouse and engine, kept between builds (transform/dbt.py)."""
        return self.root / "dbt" / f"partial_parse-{engine}.msgpack"

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


ENGINES = ("duckdb", "spark")
DEFAULT_DUCKDB_MEMORY_LIMIT = "1.5GB"
"""DuckDB's own default is 80% of the machine's memory, which a big build takes; every writer (the ingest, the
Dagster resource, dbt's profile) uses this one setting so a run's memory is bounded. 1.5GB keeps a whole run, dbt's
own process included, under 2 GB at 10M and 30M line items (docs/benchmarks.md); a full 10M build then takes about
10% longer than with 3GB. A bigger machine builds faster with a higher limit."""
TRUE_SPELLINGS = {"1", "true", "yes"}
DEFAULT_PROMETHEUS_STEP_SECONDS = 60
DAY_SECONDS = 86_400


@dataclass(frozen=True)
class Settings:
    """Every setting of a run, read from the environment once, where a process starts: the CLI's `main`, the Dagster
    definitions' resources (`pipelines/defs/resources.py`), a test. Below that edge it is passed, never looked up."""

    home: FinopsHome
    offline: bool = False
    """FINOPS_OFFLINE=1: read bundled snapshots instead of calling providers (demo, air-gapped sites)."""
    engine: str = "duckdb"
    """FINOPS_ENGINE (default duckdb): the engine dbt builds the models on, `duckdb` or `spark`, and so the dbt
    target (profiles.yml). Ingest runs in DuckDB whatever the engine and writes the lake, which both engines read; on
    Spark the marts are Spark tables that DuckDB reads back for the CLI and report."""
    duckdb_memory_limit: str = DEFAULT_DUCKDB_MEMORY_LIMIT
    """FINOPS_DUCKDB_MEMORY_LIMIT: what one DuckDB connection may hold before it spills (`duckdb_memory_limit`)."""
    daily_cron: str = "0 6 * * *"
    """FINOPS_DAILY_CRON (UTC; default 06:00 every day): when the daily refresh runs."""
    restatement_days: int = 14
    """FINOPS_RESTATEMENT_DAYS (default 14): for how many days after a month ends its data is still re-loaded."""
    prometheus_step_seconds: int = DEFAULT_PROMETHEUS_STEP_SECONDS
    """FINOPS_PROMETHEUS_STEP_SECONDS (default 60): the step of the telemetry feeds' Prometheus range queries, at most
    a day (a partition is one UTC day)."""
    nvidia_smi_timezone: str = "UTC"
    """FINOPS_NVIDIA_SMI_TIMEZONE (IANA name, default UTC): the zone nvidia-smi logs' local timestamps are read in."""
    slurm_timezone: str = "UTC"
    """FINOPS_SLURM_TIMEZONE (IANA name, default UTC): the cluster's zone, which `sacct` prints its times in."""

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(
                f"FINOPS_ENGINE={self.engine!r} is not an engine this project builds on; use one of {ENGINES}"
            )
        if not 1 <= self.prometheus_step_seconds <= DAY_SECONDS:
            raise _not_a_step(self.prometheus_step_seconds)
        for variable, zone in (
            ("FINOPS_NVIDIA_SMI_TIMEZONE", self.nvidia_smi_timezone),
            ("FINOPS_SLURM_TIMEZONE", self.slurm_timezone),
        ):
            if not is_time_zone(zone):
                raise ValueError(f"{variable}={zone!r} is not a time zone: use an IANA name (e.g. UTC, Europe/Berlin)")

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> Settings:
        """The settings the environment gives (FINOPS_HOME, default `<project>/data`, and the variables above)."""

        def setting(name: str) -> str:
            return env.get(name, "").strip()

        root = Path(setting("FINOPS_HOME") or PROJECT_ROOT / "data").expanduser().resolve()
        return cls(
            home=FinopsHome(root),
            offline=setting("FINOPS_OFFLINE").lower() in TRUE_SPELLINGS,
            engine=setting("FINOPS_ENGINE").lower() or "duckdb",
            duckdb_memory_limit=duckdb_memory_limit(env),
            daily_cron=setting("FINOPS_DAILY_CRON") or "0 6 * * *",
            restatement_days=int(setting("FINOPS_RESTATEMENT_DAYS") or 14),
            prometheus_step_seconds=_step_seconds(setting("FINOPS_PROMETHEUS_STEP_SECONDS")),
            nvidia_smi_timezone=setting("FINOPS_NVIDIA_SMI_TIMEZONE") or "UTC",
            slurm_timezone=setting("FINOPS_SLURM_TIMEZONE") or "UTC",
        )

    def child_environment(self) -> dict[str, str]:
        """What the processes this one starts read, each from its own environment: dbt (profiles.yml: the
        warehouse, the target, the memory limit), Dagster's instance (DAGSTER_HOME) and its DuckDB resource."""
        return {
            "FINOPS_HOME": str(self.home.root),
            "DAGSTER_HOME": str(self.home.dagster_home),
            "FINOPS_WAREHOUSE": str(self.home.warehouse),
            "FINOPS_ENGINE": self.engine,
            "FINOPS_DUCKDB_MEMORY_LIMIT": self.duckdb_memory_limit,
        }


def _step_seconds(text: str) -> int:
    """FINOPS_PROMETHEUS_STEP_SECONDS as set ('' for the default): a message naming the variable, not int()'s."""
    try:
        return int(text or DEFAULT_PROMETHEUS_STEP_SECONDS)
    except ValueError:
        raise _not_a_step(text) from None


def _not_a_step(value: int | str) -> ValueError:
    return ValueError(
        f"FINOPS_PROMETHEUS_STEP_SECONDS={value!r} is not a query step: use a whole number of seconds from 1 to "
        f"{DAY_SECONDS} (a day)"
    )


def duckdb_memory_limit(env: Mapping[str, str] = os.environ) -> str:
    """FINOPS_DUCKDB_MEMORY_LIMIT (default 1.5GB): what one DuckDB connection may hold before it spills to disk.

    Read where a connection is opened (`warehouse.connection.connect`) as well as into `Settings`: a process-wide
    bound on the machine's memory, like the lake's place (`lake_root`), not a choice a run makes.
    """
    return env.get("FINOPS_DUCKDB_MEMORY_LIMIT", "").strip() or DEFAULT_DUCKDB_MEMORY_LIMIT


def lake_root(home_root: Path | None = None) -> Path:
    """FINOPS_LAKE (default `$FINOPS_HOME/lake`): where validated deliveries land as Parquet, read by every engine.

    `home_root` is the FINOPS_HOME to default into (the warehouse's folder); FINOPS_HOME's setting when not given.
    """
    configured = os.environ.get("FINOPS_LAKE", "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    root = home_root or Path(os.environ.get("FINOPS_HOME") or PROJECT_ROOT / "data").expanduser()
    return root.resolve() / "lake"
