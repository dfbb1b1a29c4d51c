"""Prometheus HTTP API range queries (`/api/v1/query_range`) over NVIDIA's DCGM exporter metrics.

One query per metric and window: `avg_over_time(METRIC[step])` for gauges (so a point is the mean
of the step before it, not one scrape picked at random) and the bare energy counter (millijoules since the
GPU's driver loaded), which dbt differences per GPU with its resets (`int_telemetry__gpu_samples`), as the
serving counters are: `increase()` per series would lose each pod series' first step and extrapolate.
Prometheus refuses more than 11,000 points per series, so a long range is split into windows that each
stay under it. Every result series becomes rows of the long frame in `sources.telemetry.samples`, keyed by
the GPU's `UUID` label (indexes change across reboots) and, under MIG, the slice's `GPU_I_ID` (with its
`GPU_I_PROFILE`), since every slice of a GPU carries the parent's UUID. Each row keeps the PromQL its value answers
(`promql`): the energy counter was asked as `increase(METRIC[step])` before (`legacy_query_for`), and dbt reads
such a value, or one loaded before the column existed, as the step's energy rather than a reading.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import requests

from sources.common.http import FetchError, HttpClient, base_url
from sources.telemetry import samples

PROVIDER = "Prometheus"
BASE_URL_ENV = "FINOPS_PROMETHEUS_URL"
TOKEN_ENV = "FINOPS_PROMETHEUS_TOKEN"
QUERY_RANGE_PATH = "/api/v1/query_range"
MAX_POINTS_PER_SERIES = 11_000
COUNTERS = frozenset({samples.TOTAL_ENERGY})

# Labels that name the billed machine when a relabeling rule or a join with kube_node_info put them
# on the series; first present wins. `provider_id` is Kubernetes' node providerID
# (`aws:///us-east-1a/i-0abc…`, `gce://project/zone/name`, `azure:///subscriptions/…`).
RESOURCE_LABELS = ("resource_id", "instance_id", "provider_id")


class PrometheusError(Exception):
    """A query Prometheus answered with an error, or an answer that is not a query_range matrix."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"{PROVIDER}: {url}: {reason}")


class PrometheusNotConfigured(Exception):
    """FINOPS_PROMETHEUS_URL is unset: the asset is skipped with this message, not failed."""


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime


@dataclass(frozen=True)
class RangeResponse:
    """One recorded `query_range` answer: what was asked and the bytes Prometheus sent back."""

    metric: str
    query: str
    window: Window
    step_seconds: int
    url: str
    payload: bytes


def query_for(metric: str, step_seconds: int) -> str:
    if metric in COUNTERS:
        return metric
    return f"avg_over_time({metric}[{step_seconds}s])"


def legacy_query_for(metric: str, step_seconds: int) -> str:
    """What the feed asked before counters were read bare: `increase(…[step])`, each value one step's energy.

    A stored capture of a counter without the readings marker (`pipelines.lib.ingest.telemetry`) answers this."""
    if metric in COUNTERS:
        return f"increase({metric}[{step_seconds}s])"
    return query_for(metric, step_seconds)


def split_windows(
    start: datetime, end: datetime, step_seconds: int, max_points: int = MAX_POINTS_PER_SERIES
) -> list[Window]:
    """Consecutive windows covering [start, end] whose point count ((end − start) / step + 1) is ≤ max_points."""
    if step_seconds <= 0:
        raise ValueError("step must be a positive number of seconds")
    if end < start:
        raise ValueError(f"window ends ({end}) before it starts ({start})")
    span = timedelta(seconds=step_seconds * (max_points - 1))
    step = timedelta(seconds=step_seconds)
    windows = []
    moment = start
    while moment <= end:
        stop = min(end, moment + span)
        windows.append(Window(moment, stop))
        moment = stop + step
    return windows


class PrometheusClient:
    """Range queries against one Prometheus (or Thanos, Mimir, VictoriaMetrics) base URL."""

    def __init__(self, url: str, *, token: str | None = None, http: HttpClient | None = None):
        self.url = url.rstrip("/")
        self.token = token
        self.http = http or HttpClient(provider=PROVIDER, secrets=(token,) if token else ())
        if token and token not in self.http.secrets:
            self.http.secrets = (*self.http.secrets, token)

    @classmethod
    def from_environment(cls, http: HttpClient | None = None, *, reads: str = "DCGM GPU metrics") -> PrometheusClient:
        url = base_url(BASE_URL_ENV, "")
        if not url:
            raise PrometheusNotConfigured(f"{PROVIDER}: set {BASE_URL_ENV} to read {reads}; skipped")
        return cls(url, token=os.environ.get(TOKEN_ENV, "").strip() or None, http=http)

    def query_range(
        self, metric: str, start: datetime, end: datetime, step_seconds: int, *, query: str | None = None
    ) -> list[RangeResponse]:
        """Every window's raw answer for one metric: POSTed form-encoded, checked to be a success envelope.

        `query` defaults to the DCGM one (`query_for`); the serving feed asks for the bare counter instead."""
        query = query or query_for(metric, step_seconds)
        url = self.url + QUERY_RANGE_PATH
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        answers = []
        for window in split_windows(start, end, step_seconds):
            form = {
                "query": query,
                "start": _unix(window.start),
                "end": _unix(window.end),
                "step": f"{step_seconds}s",
            }
            error_body: list[bytes] = []
            try:
                response = self.http.post(
                    url, data=form, headers=headers, hooks={"response": functools.partial(_keep_error, error_body)}
                )
            except FetchError as error:
                detail = _error_message(error_body[-1]) if error_body else None
                reason = f"{error.reason}: {self.http.scrub(detail)}" if detail else error.reason
                raise PrometheusError(error.url, f"{query} from {window.start} to {window.end}: {reason}") from None
            check_envelope(response.content, url)
            answers.append(RangeResponse(metric, query, window, step_seconds, url, response.content))
        return answers


def parse_query_range(payload: bytes, *, metric: str, query: str, step_seconds: int, source_ref: str) -> pl.DataFrame:
    """A `query_range` matrix as long rows (SAMPLE_SCHEMA); an empty result is an empty frame.

    `query` is the PromQL the payload answers, kept on every row (`promql`): a counter's value is a reading or an
    increase depending on it, so it is required, never guessed."""
    data = check_envelope(payload, source_ref)
    if data.get("resultType") != "matrix":
        raise PrometheusError(source_ref, f"resultType {data.get('resultType')!r}, expected 'matrix'")
    result = data.get("result")
    if not isinstance(result, list):
        raise PrometheusError(source_ref, "data.result is not a list")
    label_columns: dict[str, list[str | None]] = {
        "host": [],
        "gpu_uuid": [],
        "gpu_index": [],
        "gpu_model_name": [],
        "namespace": [],
        "pod": [],
        "container": [],
        "resource_id": [],
        "gpu_instance_id": [],
        "gpu_instance_profile": [],
    }
    times: list[float] = []
    values: list[str] = []
    for number, series in enumerate(result):
        if not isinstance(series, dict) or not isinstance(series.get("values"), list):
            raise PrometheusError(source_ref, f"series {number} has no values list")
        labels = series.get("metric") or {}
        points = series["values"]
        try:
            times.extend(float(point[0]) for point in points)
            values.extend(str(point[1]) for point in points)
        except (TypeError, ValueError, IndexError):
            raise PrometheusError(source_ref, f'series {number}: a point is not [unix_time, "value"]') from None
        row = {
            "host": labels.get("Hostname"),
            "gpu_uuid": labels.get("UUID"),
            "gpu_index": labels.get("gpu"),
            "gpu_model_name": labels.get("modelName"),
            # honorLabels: false renames the exporter's own pod labels to exported_*.
            "namespace": labels.get("exported_namespace") or labels.get("namespace"),
            "pod": labels.get("exported_pod") or labels.get("pod"),
            "container": labels.get("exported_container") or labels.get("container"),
            "resource_id": _resource_id(labels),
            "gpu_instance_id": labels.get("GPU_I_ID") or None,
            "gpu_instance_profile": labels.get("GPU_I_PROFILE") or None,
        }
        _check_instance(row, number, metric, source_ref)
        for name, column in label_columns.items():
            column.extend([row[name]] * len(points))
    if not values:
        return samples.empty_samples()
    frame = pl.DataFrame(
        {"unix": times, "raw_value": values} | label_columns,
        schema_overrides={name: pl.String() for name in label_columns},
    )
    as_float = pl.col("raw_value").cast(pl.Float64, strict=False)
    bad = frame.filter(as_float.is_null())
    if bad.height:
        raise PrometheusError(source_ref, f"value {bad['raw_value'][0]!r} is not a number")
    missing_uuid = frame.filter(pl.col("gpu_uuid").is_null())
    if missing_uuid.height:
        raise PrometheusError(source_ref, f"a {metric} series has no UUID label: per-GPU metrics must keep it")
    invalid = samples.invalid_reading(pl.lit(metric), as_float, pl.col("gpu_instance_id"))
    frame = frame.with_columns(
        sampled_at=pl.from_epoch((pl.col("unix") * 1_000_000).round().cast(pl.Int64), time_unit="us"),
        sample_seconds=pl.lit(step_seconds, dtype=pl.Int64),
        source=pl.lit(samples.SOURCE_PROMETHEUS),
        metric=pl.lit(metric),
        promql=pl.lit(query),
        # NaN and ±Inf have no decimal: null, like a missing sample.
        value_invalid=invalid,
        value=pl.when(as_float.is_finite() & (as_float.abs() < samples.MAX_ABS_VALUE) & ~invalid)
        .then(pl.col("raw_value").cast(samples.DECIMAL, strict=False))
        .otherwise(None),
        gpu_index=pl.col("gpu_index").cast(pl.Int64, strict=False),
        source_ref=pl.lit(source_ref),
        source_row=pl.lit(None, dtype=pl.Int64),
    )
    return samples.with_sample_date(frame)


def parse_responses(responses: Sequence[RangeResponse]) -> pl.DataFrame:
    frames = [
        parse_query_range(r.payload, metric=r.metric, query=r.query, step_seconds=r.step_seconds, source_ref=r.url)
        for r in responses
    ]
    return pl.concat(frames) if frames else samples.empty_samples()


def matrix_payload(series: Sequence[tuple[dict[str, str], Sequence[tuple[float, str]]]]) -> bytes:
    """A success envelope holding `series` (labels, [(unix, "value")]): what Prometheus returns, for recordings."""
    result = [{"metric": labels, "values": [[t, v] for t, v in points]} for labels, points in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()


def _keep_error(bodies: list[bytes], response: requests.Response, *args: Any, **kwargs: Any) -> None:
    """A requests response hook: keep an error answer's body, where Prometheus says what was wrong."""
    if response.status_code >= 400:
        bodies.append(response.content)


def _check_instance(row: dict[str, str | None], number: int, metric: str, source_ref: str) -> None:
    """A MIG slice's series names both its instance and its profile, and the profile is one DCGM writes."""
    instance, profile = row["gpu_instance_id"], row["gpu_instance_profile"]
    if (instance is None) != (profile is None):
        given, missing = ("GPU_I_ID", "GPU_I_PROFILE") if profile is None else ("GPU_I_PROFILE", "GPU_I_ID")
        raise PrometheusError(source_ref, f"{metric} series {number} has {given} without {missing}")
    if profile is not None and not samples.MIG_PROFILE.match(profile):
        raise PrometheusError(
            source_ref, f"{metric} series {number}: GPU_I_PROFILE {profile!r} is not <g>g.<memory>gb (e.g. 3g.40gb)"
        )


def _resource_id(labels: dict[str, str]) -> str | None:
    for name in RESOURCE_LABELS:
        value = labels.get(name)
        if value:
            # aws:///us-east-1a/i-0abc… → i-0abc…; other provider ids keep their full path.
            if name == "provider_id" and value.startswith("aws://"):
                return value.rstrip("/").rsplit("/", 1)[-1]
            return value
    return None


def check_envelope(payload: bytes, source_ref: str) -> dict[str, Any]:
    try:
        document = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PrometheusError(source_ref, f"malformed JSON ({error})") from None
    if not isinstance(document, dict) or "status" not in document:
        raise PrometheusError(source_ref, "not a Prometheus API envelope (no status)")
    if document["status"] != "success":
        reason = f"{document.get('errorType', 'error')}: {document.get('error', 'no error message')}"
        raise PrometheusError(source_ref, reason)
    data = document.get("data")
    if not isinstance(data, dict):
        raise PrometheusError(source_ref, "envelope has no data object")
    return data


def _error_message(body: bytes) -> str | None:
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return body[:200].decode("utf-8", "replace").strip() or None
    if isinstance(document, dict) and document.get("error"):
        return f"{document.get('errorType', 'error')}: {document['error']}"
    return None


def _unix(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return f"{moment.timestamp():.3f}".rstrip("0").rstrip(".")
