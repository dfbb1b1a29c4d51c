"""Load GPU telemetry into raw tables: Prometheus (DCGM) per day, nvidia-smi logs and the host map per delivery.

Three raw tables, all in the long sample shape of `sources.telemetry.samples` or the host map's:

| table | replaced by a load of | fed by |
|---|---|---|
| `raw.prometheus_gpu_samples` | the same UTC day (every host: a day is fetched whole) | `fetch_prometheus_day` |
| `raw.nvidia_smi_gpu_samples` | the same log file × day × host | `ingest_nvidia_smi_logs` (landing/nvidia_smi) |
| `raw.telemetry_host_map` | the whole table | `ingest_host_maps` (landing/telemetry_host_map) |

Every load is one transaction and recorded in `audit.loads`; the same payload twice changes nothing.
Prometheus answers are kept gzipped under FINOPS_HOME/raw/telemetry/prometheus/<day>/, one file per
metric and window, named so the parser knows what was asked. With FINOPS_OFFLINE=1 those files
(fetched earlier, or the demo's recordings) are parsed instead of calling Prometheus.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipelines.lib.catalog.tables import ReferenceTable
from pipelines.lib.catalog.telemetry import (
    HOST_MAP,
    HOST_MAP_SOURCE,
    NVIDIA_SMI_SAMPLES,
    NVIDIA_SMI_SOURCE,
    PROMETHEUS_SAMPLES,
)
from pipelines.lib.ingest.landing import pending_deliveries, quarantine
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.loads import LoadOutcome, find_load, load_reference_rows
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput
from sources.telemetry import prometheus, samples
from sources.telemetry.host_map import read_host_map
from sources.telemetry.nvidia_smi import read_nvidia_smi_log

STEP_ENV = "FINOPS_PROMETHEUS_STEP_SECONDS"
NVIDIA_SMI_TIMEZONE_ENV = "FINOPS_NVIDIA_SMI_TIMEZONE"
DEFAULT_STEP_SECONDS = 60
_PAYLOAD_NAME = re.compile(
    r"^(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)__(?P<step>\d+)s__(?P<start>\d+)-(?P<end>\d+)\.json\.gz$"
)


@dataclass(frozen=True)
class PrometheusLoad:
    outcome: LoadOutcome | None
    """None when no day had anything to load (see `skipped`)."""
    days: list[date]
    """The days loaded (each replaced whole)."""
    skipped: list[str]
    """Why each other day was skipped: Prometheus not configured, or offline with no recordings."""
    responses: int
    rows: int
    hosts: int


def prometheus_payloads(home: FinopsHome, day: date) -> Path:
    return home.raw_payloads / "telemetry" / "prometheus" / day.isoformat()


def payload_file_name(metric: str, step_seconds: int, start: datetime, end: datetime) -> str:
    return f"{metric}__{step_seconds}s__{int(start.timestamp())}-{int(end.timestamp())}.json.gz"


def day_window(day: date, step_seconds: int) -> tuple[datetime, datetime]:
    """The points whose step lies inside `day` (UTC): the first ends at 00:00 + step, the last at 24:00."""
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start + timedelta(seconds=step_seconds), start + timedelta(days=1)


def store_responses(folder: Path, responses: list[prometheus.RangeResponse]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for response in responses:
        name = payload_file_name(response.metric, response.step_seconds, response.window.start, response.window.end)
        (folder / name).write_bytes(gzip.compress(response.payload, compresslevel=6, mtime=0))


def stored_responses(folder: Path, url: str) -> list[prometheus.RangeResponse]:
    """The recorded answers of a day, rebuilt from their file names (metric, step, window)."""
    responses = []
    for path in sorted(folder.glob("*.json.gz")) if folder.exists() else []:
        match = _PAYLOAD_NAME.match(path.name)
        if match is None:
            raise prometheus.PrometheusError(
                str(path), "not a recorded query_range file (<metric>__<step>s__<start>-<end>.json.gz)"
            )
        step = int(match["step"])
        window = prometheus.Window(
            datetime.fromtimestamp(int(match["start"]), UTC), datetime.fromtimestamp(int(match["end"]), UTC)
        )
        responses.append(
            prometheus.RangeResponse(
                match["metric"],
                prometheus.query_for(match["metric"], step),
                window,
                step,
                url,
                gzip.decompress(path.read_bytes()),
            )
        )
    return responses


def fetch_prometheus_days(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    days: list[date],
    *,
    offline: bool,
    log: logging.Logger,
    client: prometheus.PrometheusClient | None = None,
    step_seconds: int = DEFAULT_STEP_SECONDS,
    metrics: tuple[str, ...] = samples.METRICS,
) -> PrometheusLoad:
    """UTC days of every DCGM metric into raw.prometheus_gpu_samples, in one transaction replacing each day whole."""
    skipped: list[str] = []
    if not offline and client is None:
        try:
            client = prometheus.PrometheusClient.from_environment()
        except prometheus.PrometheusNotConfigured as error:
            return PrometheusLoad(None, [], [f"{day}: {error}" for day in days], 0, 0, 0)
    frames, loaded, digest, count, first_ref = [], [], hashlib.sha256(), 0, None
    for day in days:
        folder = prometheus_payloads(home, day)
        if offline:
            responses = stored_responses(folder, f"recorded:{folder}")
            if not responses:
                skipped.append(f"{day}: offline, and no recorded query_range answers in {folder}")
                continue
        else:
            start, end = day_window(day, step_seconds)
            responses = [
                answer for metric in metrics for answer in client.query_range(metric, start, end, step_seconds)
            ]
            store_responses(folder, responses)
        log.info("%s: %d query_range answers (%s)", day, len(responses), "recorded" if offline else client.url)
        frames.append(prometheus.parse_responses(responses).filter(pl.col("sample_date") == day))
        loaded.append(day)
        count += len(responses)
        first_ref = first_ref or (responses[0].url if responses else str(folder))
        digest.update(day.isoformat().encode())
        for response in responses:
            digest.update(response.metric.encode() + b"\0" + response.payload)
    if not loaded:
        return PrometheusLoad(None, [], skipped, 0, 0, 0)
    frame = pl.concat(frames)
    span = f"{loaded[0]}" if len(loaded) == 1 else f"{loaded[0]}..{loaded[-1]}"
    outcome = _replace_days(con, frame, loaded, delivery=f"{first_ref}@{span}", sha256=digest.hexdigest())
    return PrometheusLoad(outcome, loaded, skipped, count, frame.height, frame["host"].n_unique())


def _replace_days(
    con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, days: list[date], *, delivery: str, sha256: str
) -> LoadOutcome:
    """Replace `days` whole, even those whose answers held no series, audited in audit.loads.

    `load_reference_rows` replaces the keys the frame carries; a day Prometheus now answers empty
    carries none, and its old rows would survive. So the days are named explicitly here.
    """
    return load_reference_rows(
        con,
        PROMETHEUS_SAMPLES,
        source=samples.SOURCE_PROMETHEUS,
        delivery=delivery,
        sha256=sha256,
        frame=frame,
        format_version="Prometheus query_range v1",
        whole_partitions=[(day,) for day in days],
    )


@dataclass(frozen=True)
class TelemetryDelivery:
    delivery: str
    status: str
    rows: int = 0
    replaced_rows: int = 0
    load_id: str | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ingest_nvidia_smi_logs(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, timezone: str, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Every log file or folder of logs waiting in landing/nvidia_smi; a bad one goes to quarantine."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        frames = [
            read_nvidia_smi_log(path, name=delivery.display_name(path), timezone=timezone)
            for path in delivery.all_files()
        ]
        if not frames:
            raise RejectedInput(delivery.name, "no log files in the delivery")
        return pl.concat(frames)

    return _ingest(home, con, NVIDIA_SMI_SOURCE, NVIDIA_SMI_SAMPLES, parse, "nvidia-smi --format=csv", log)


def ingest_host_maps(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Host map files waiting in landing/telemetry_host_map, oldest first: each replaces the whole mapping."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        files = delivery.all_files()
        if len(files) != 1:
            raise RejectedInput(delivery.name, f"expected one host map CSV, found {len(files)} files")
        return read_host_map(files[0], name=delivery.display_name(files[0]))

    return _ingest(home, con, HOST_MAP_SOURCE, HOST_MAP, parse, "telemetry host map CSV", log)


def _ingest(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    source: str,
    table: ReferenceTable,
    parse: Callable[[Delivery], pl.DataFrame],
    format_version: str,
    log: logging.Logger,
) -> list[TelemetryDelivery]:
    """Each pending delivery of `source`: skipped if loaded before, quarantined if rejected, else loaded."""
    results = []
    for delivery in pending_deliveries(home, source):
        sha256 = delivery.sha256()
        existing = find_load(con, source, sha256)
        if existing is not None:
            results.append(TelemetryDelivery(delivery.name, "duplicate", load_id=existing))
            continue
        try:
            frame = parse(delivery)
        except RejectedInput as error:
            quarantine(home, delivery, error)
            log.warning("%s: rejected (%s)", delivery.name, error.describe())
            results.append(TelemetryDelivery(delivery.name, "rejected", reason=error.describe()))
            continue
        outcome = load_reference_rows(
            con, table, source=source, delivery=delivery.name, sha256=sha256, frame=frame, format_version=format_version
        )
        log.info("%s: %s (%d rows)", delivery.name, outcome.status, outcome.rows)
        results.append(
            TelemetryDelivery(delivery.name, outcome.status, outcome.rows, outcome.replaced_rows, outcome.load_id)
        )
    return results
