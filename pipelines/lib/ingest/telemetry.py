"""Load GPU telemetry into raw tables: Prometheus (DCGM) per day, nvidia-smi logs and the host map per delivery.

Three raw tables, all in the long sample shape of `sources.telemetry.samples` or the host map's:

| table | replaced by a load of | fed by |
|---|---|---|
| `raw.prometheus_gpu_samples` | the same UTC day (every host: a day is fetched whole) | `fetch_prometheus_day` |
| `raw.nvidia_smi_gpu_samples` | the same log file × day × host | `ingest_nvidia_smi_logs` (landing/nvidia_smi) |
| `raw.telemetry_host_map` | the whole table | `ingest_host_maps` (landing/telemetry_host_map) |
| `raw.serving_metric_samples` | the same UTC day | `fetch_prometheus_days(…, feed=SERVING_FEED)` |

Every load is one transaction and recorded in `audit.loads`; the same payload twice changes nothing.
Prometheus answers are kept gzipped under FINOPS_HOME/raw/telemetry/<feed folder>/<day>/ (`prometheus` for
DCGM, `serving` for vLLM/SGLang), one file per metric and window, named so the parser knows what was asked:
`<metric>__<step>s__<start>-<end>.json.gz`, with `.counter` before `.json.gz` when the query was the bare counter
(its values are readings). A DCGM counter capture without the marker was written when its energy counter was asked
as `increase(…[step])`, so it is read back as that (`RangeFeed.unmarked_query`), never as readings.
Offline (`Settings.offline`) those files (fetched earlier, or the demo's recordings) are parsed instead of
calling Prometheus; the serving folder may also hold text exposition captures (`*.prom`, `*.prom.gz`: a
`/metrics` scrape named `<anything>__<unix seconds>.prom`, or a `/federate` answer, whose samples carry
their own times).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.tables import ReferenceTable
from pipelines.lib.catalog.telemetry import (
    HOST_MAP,
    HOST_MAP_SOURCE,
    NVIDIA_SMI_SAMPLES,
    NVIDIA_SMI_SOURCE,
    PROMETHEUS,
    SERVING,
)
from pipelines.lib.ingest.landing import pending_deliveries, quarantine
from pipelines.lib.settings import DEFAULT_PROMETHEUS_STEP_SECONDS, FinopsHome
from pipelines.lib.warehouse.loads import LoadOutcome, find_load, load_reference_rows
from sources.common.delivery import Delivery, DeliveryWarning
from sources.common.errors import RejectedInput
from sources.telemetry import prometheus, samples, serving
from sources.telemetry.host_map import read_host_map
from sources.telemetry.nvidia_smi import read_nvidia_smi_log

_PAYLOAD_NAME = re.compile(
    r"^(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)__(?P<step>\d+)s__(?P<start>\d+)-(?P<end>\d+)"
    r"(?P<counter>\.counter)?\.json\.gz$"
)
COUNTER_MARKER = ".counter"
"""In a capture's name before `.json.gz`: the query was the bare counter, so its values are readings."""
Parsed = tuple[pl.DataFrame, tuple[DeliveryWarning, ...]]
_CAPTURE_TIME = re.compile(r"__(?P<unix>\d+)\.prom(\.gz)?$")


@dataclass(frozen=True)
class RangeFeed:
    """A raw table filled one UTC day at a time from Prometheus range queries: the DCGM samples, the serving counters.

    Fetching, keeping the answers, reading them back offline and replacing the day are shared; what differs is here.
    """

    entry: CatalogEntry
    """The catalogue's entry for the rows: their source in audit.loads, their raw table, the asset that writes them."""
    folder: str
    """The answers of a day are kept in FINOPS_HOME/raw/telemetry/<folder>/<day>/."""
    reads: str
    """What the feed reads, for the message when Prometheus is not configured."""
    metrics: tuple[str, ...]
    query: Callable[[str, int], str]
    window: Callable[[date, int], tuple[datetime, datetime]]
    """The first and last point of a day's query for a step."""
    parse: Callable[[Sequence[prometheus.RangeResponse], Sequence[Path]], Parsed]
    """The answers and the day's capture files (offline) as rows and warnings."""
    format_version: str
    captures: str | None = None
    """A glob of other recordings in the day's folder the parser reads (exposition captures)."""
    unmarked_query: Callable[[str, int], str] | None = None
    """The query a capture without the counter marker answers, where not `query`: captures were unmarked before
    counters were read bare, and DCGM asked its energy counter as `increase(…)` then."""

    def __post_init__(self) -> None:
        if not isinstance(self.entry.raw_table, ReferenceTable):
            raise TypeError(f"{self.entry.name}: a range feed replaces whole days, so needs a ReferenceTable")

    @property
    def source(self) -> str:
        return self.entry.name

    @property
    def table(self) -> ReferenceTable:
        return self.entry.raw_table


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
    pods: int = 0
    warnings: tuple[DeliveryWarning, ...] = ()
    """What the parser accepted with a warning (serving metrics it does not keep)."""


def prometheus_payloads(home: FinopsHome, day: date, folder: str = "prometheus") -> Path:
    return home.raw_payloads / "telemetry" / folder / day.isoformat()


def payload_file_name(metric: str, step_seconds: int, start: datetime, end: datetime, *, counter: bool = False) -> str:
    """`counter`: the answer holds the bare counter's readings (marked, so it is never read as increases)."""
    marker = COUNTER_MARKER if counter else ""
    return f"{metric}__{step_seconds}s__{int(start.timestamp())}-{int(end.timestamp())}{marker}.json.gz"


def day_window(day: date, step_seconds: int) -> tuple[datetime, datetime]:
    """The points whose step lies inside `day` (UTC): the first ends at 00:00 + step, the last at 24:00."""
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start + timedelta(seconds=step_seconds), start + timedelta(days=1)


def counter_day_window(day: date, step_seconds: int) -> tuple[datetime, datetime]:
    """A counter's values read at the instants of `day` (UTC): 00:00 to the last step before 24:00."""
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start, start + timedelta(days=1) - timedelta(seconds=step_seconds)


def serving_query(metric: str, step_seconds: int) -> str:
    """The bare counter: its values, resets included, for dbt to difference per series (not `increase()`)."""
    return metric


def _parse_dcgm(responses: Sequence[prometheus.RangeResponse], captures: Sequence[Path]) -> Parsed:
    return prometheus.parse_responses(responses), ()


def _parse_serving(responses: Sequence[prometheus.RangeResponse], captures: Sequence[Path]) -> Parsed:
    parsed = [serving.parse_responses(responses)]
    for path in captures:
        found = _CAPTURE_TIME.search(path.name)
        scraped_at = datetime.fromtimestamp(int(found["unix"]), UTC).replace(tzinfo=None) if found else None
        parsed.append(serving.parse_exposition(path.read_bytes(), name=path.name, scraped_at=scraped_at))
    combined = serving.combine(parsed)
    return combined.frame, combined.warnings


DCGM_FEED = RangeFeed(
    entry=PROMETHEUS,
    folder="prometheus",
    reads="DCGM GPU metrics",
    metrics=samples.METRICS,
    query=prometheus.query_for,
    window=day_window,
    parse=_parse_dcgm,
    format_version="Prometheus query_range v1",
    unmarked_query=prometheus.legacy_query_for,
)
SERVING_FEED = RangeFeed(
    entry=SERVING,
    folder="serving",
    reads="vLLM/SGLang serving metrics",
    metrics=serving.METRICS,
    query=serving_query,
    window=counter_day_window,
    parse=_parse_serving,
    format_version="Prometheus query_range v1 / text exposition 0.0.4",
    captures="*.prom*",
)


def store_responses(folder: Path, responses: list[prometheus.RangeResponse]) -> None:
    """Each answer gzipped under a name that rebuilds its query; a bare counter's is marked `.counter`."""
    folder.mkdir(parents=True, exist_ok=True)
    for response in responses:
        name = payload_file_name(
            response.metric,
            response.step_seconds,
            response.window.start,
            response.window.end,
            counter=response.query == response.metric,
        )
        (folder / name).write_bytes(gzip.compress(response.payload, compresslevel=6, mtime=0))


def stored_responses(folder: Path, url: str, feed: RangeFeed = DCGM_FEED) -> list[prometheus.RangeResponse]:
    """The recorded answers of a day, rebuilt from their file names (metric, step, window, counter marker): a marked
    capture answers the bare counter, an unmarked one the feed's `unmarked_query` (else its `query`)."""
    unmarked = feed.unmarked_query or feed.query
    responses = []
    for path in sorted(folder.glob("*.json.gz")) if folder.exists() else []:
        match = _PAYLOAD_NAME.match(path.name)
        if match is None:
            raise prometheus.PrometheusError(
                str(path),
                "not a recorded query_range file (<metric>__<step>s__<start>-<end>.json.gz, or "
                "<metric>__<step>s__<start>-<end>.counter.json.gz for a bare counter's readings)",
            )
        metric, step = match["metric"], int(match["step"])
        window = prometheus.Window(
            datetime.fromtimestamp(int(match["start"]), UTC), datetime.fromtimestamp(int(match["end"]), UTC)
        )
        responses.append(
            prometheus.RangeResponse(
                metric,
                metric if match["counter"] else unmarked(metric, step),
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
    step_seconds: int = DEFAULT_PROMETHEUS_STEP_SECONDS,
    metrics: tuple[str, ...] | None = None,
    feed: RangeFeed = DCGM_FEED,
) -> PrometheusLoad:
    """UTC days of every metric of `feed` into its raw table, in one transaction replacing each day whole."""
    skipped: list[str] = []
    if not offline and client is None:
        try:
            client = prometheus.PrometheusClient.from_environment(reads=feed.reads)
        except prometheus.PrometheusNotConfigured as error:
            return PrometheusLoad(None, [], [f"{day}: {error}" for day in days], 0, 0, 0)
    frames, warnings, loaded, digest, count, first_ref = [], [], [], hashlib.sha256(), 0, None
    for day in days:
        folder = prometheus_payloads(home, day, feed.folder)
        captures: list[Path] = []
        if offline:
            responses = stored_responses(folder, f"recorded:{folder}", feed)
            if feed.captures and folder.exists():
                captures = sorted(folder.glob(feed.captures))
            if not responses and not captures:
                skipped.append(f"{day}: offline, and no recorded query_range answers in {folder}")
                continue
        else:
            start, end = feed.window(day, step_seconds)
            responses = [
                answer
                for metric in metrics or feed.metrics
                for answer in client.query_range(
                    metric, start, end, step_seconds, query=feed.query(metric, step_seconds)
                )
            ]
            store_responses(folder, responses)
        log.info("%s: %d query_range answers (%s)", day, len(responses), "recorded" if offline else client.url)
        frame, found = feed.parse(responses, captures)
        frames.append(frame.filter(pl.col("sample_date") == day))
        warnings.extend(found)
        loaded.append(day)
        count += len(responses) + len(captures)
        first_ref = first_ref or (responses[0].url if responses else str(folder))
        digest.update(day.isoformat().encode())
        for response in responses:
            # the query too: the same bytes answering increase() or the bare counter are different rows
            digest.update(response.metric.encode() + b"\0" + response.query.encode() + b"\0" + response.payload)
        for capture in captures:
            digest.update(capture.name.encode() + b"\0" + capture.read_bytes())
    if not loaded:
        return PrometheusLoad(None, [], skipped, 0, 0, 0)
    frame = pl.concat(frames)
    span = f"{loaded[0]}" if len(loaded) == 1 else f"{loaded[0]}..{loaded[-1]}"
    outcome = _replace_days(con, feed, frame, loaded, delivery=f"{first_ref}@{span}", sha256=digest.hexdigest())
    hosts = frame["host"].n_unique() if "host" in frame.columns else 0
    pods = frame["pod"].drop_nulls().n_unique()
    return PrometheusLoad(outcome, loaded, skipped, count, frame.height, hosts, pods, tuple(warnings))


def _replace_days(
    con: duckdb.DuckDBPyConnection,
    feed: RangeFeed,
    frame: pl.DataFrame,
    days: list[date],
    *,
    delivery: str,
    sha256: str,
) -> LoadOutcome:
    """Replace `days` whole, even those whose answers held no series, audited in audit.loads.

    `load_reference_rows` replaces the keys the frame carries; a day Prometheus now answers empty
    carries none, and its old rows would survive. So the days are named explicitly here.
    """
    return load_reference_rows(
        con,
        feed.table,
        source=feed.source,
        delivery=delivery,
        sha256=sha256,
        frame=frame,
        format_version=feed.format_version,
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

    return ingest_reference_deliveries(
        home, con, NVIDIA_SMI_SOURCE, NVIDIA_SMI_SAMPLES, parse, "nvidia-smi --format=csv", log
    )


def ingest_host_maps(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Host map files waiting in landing/telemetry_host_map, oldest first: each replaces the whole mapping."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        files = delivery.all_files()
        if len(files) != 1:
            raise RejectedInput(delivery.name, f"expected one host map CSV, found {len(files)} files")
        return read_host_map(files[0], name=delivery.display_name(files[0]))

    return ingest_reference_deliveries(home, con, HOST_MAP_SOURCE, HOST_MAP, parse, "telemetry host map CSV", log)


def ingest_reference_deliveries(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    source: str,
    table: ReferenceTable,
    parse: Callable[[Delivery], pl.DataFrame],
    format_version: str,
    log: logging.Logger,
) -> list[TelemetryDelivery]:
    """Each pending delivery of a landing-zone source whose rows are reference data (telemetry logs, the host map,
    the training jobs' exports, a gateway export): skipped if loaded before, quarantined if rejected, else loaded
    replacing its keys."""
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
