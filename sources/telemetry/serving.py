"""vLLM and SGLang serving metrics (tokens, prefix cache, finished requests, prefill and decode time) as long rows.

Two inputs, one shape (`SERVING_SCHEMA`), one row per series and sample:

- Prometheus `query_range` answers for each metric as it is, without `increase()`: the counter's own value at
  every step, so resets are handled per series in dbt (`int_serving__token_increases_hourly`), where every
  input meets. A reset between two steps that the counter outgrows before the next step goes unseen, as it
  would in a scrape every step.
- Text exposition captures (a server's `/metrics`, or Prometheus' `/federate`, which adds the target's labels
  and each sample's time in milliseconds), in the documented format: `# HELP`/`# TYPE` comments, then
  `name{label="value",…} value [timestamp]`. A sample without a timestamp takes the capture's scrape time.

Every metric kept is a counter; of the two time histograms only `_sum` and `_count` are kept (their buckets,
and OpenMetrics `_created` samples, are skipped without a warning). Other metrics (latency histograms, gauges,
the process's own) are ignored with one warning naming them. The serving pod is `exported_pod` when a scrape
with `honorLabels: false` renamed the label, else `pod` (the same for the namespace), as for DCGM. vLLM's own
`engine` label, the engine's index under data parallelism, is part of a series' identity: it is kept as
`engine_index`, while `engine` names the server software (vllm, sglang). Values are exact decimals (a counter
above 10^6 is written `1.234567e+06` by prometheus_client); NaN and ±Inf become null, like a missing sample.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from sources.common.delivery import DeliveryWarning
from sources.common.errors import RejectedInput
from sources.common.row_checks import EARLIEST, LATEST
from sources.common.types import DECIMAL, TIMESTAMP
from sources.telemetry import prometheus

VLLM = "vllm"
SGLANG = "sglang"
ENGINES = (VLLM, SGLANG)

PROMPT_TOKENS = "vllm:prompt_tokens_total"
GENERATION_TOKENS = "vllm:generation_tokens_total"
PREFIX_CACHE_QUERIES = "vllm:prefix_cache_queries_total"
PREFIX_CACHE_HITS = "vllm:prefix_cache_hits_total"
REQUEST_SUCCESS = "vllm:request_success_total"
PREFILL_SECONDS_SUM = "vllm:request_prefill_time_seconds_sum"
PREFILL_SECONDS_COUNT = "vllm:request_prefill_time_seconds_count"
DECODE_SECONDS_SUM = "vllm:request_decode_time_seconds_sum"
DECODE_SECONDS_COUNT = "vllm:request_decode_time_seconds_count"
SGLANG_PROMPT_TOKENS = "sglang:prompt_tokens_total"
SGLANG_GENERATION_TOKENS = "sglang:generation_tokens_total"
METRICS = (
    PROMPT_TOKENS,
    GENERATION_TOKENS,
    PREFIX_CACHE_QUERIES,
    PREFIX_CACHE_HITS,
    REQUEST_SUCCESS,
    PREFILL_SECONDS_SUM,
    PREFILL_SECONDS_COUNT,
    DECODE_SECONDS_SUM,
    DECODE_SECONDS_COUNT,
    SGLANG_PROMPT_TOKENS,
    SGLANG_GENERATION_TOKENS,
)
"""Every metric kept; all are counters (a histogram's `_sum` and `_count` only ever grow)."""
_HISTOGRAMS = ("vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds")
_SKIPPED_PARTS = (
    *(f"{histogram}_{part}" for histogram in _HISTOGRAMS for part in ("bucket", "created")),
    *(f"{name.removesuffix('_total')}_created" for name in METRICS if name.endswith("_total")),
)
"""Samples of the kept metrics that are not kept: histogram buckets and OpenMetrics creation times."""

SOURCE_QUERY_RANGE = "query_range"
SOURCE_EXPOSITION = "exposition"
SOURCES = (SOURCE_QUERY_RANGE, SOURCE_EXPOSITION)
UNKNOWN_METRIC = "unknown serving metric ignored"

SERVING_SCHEMA: dict[str, pl.DataType] = {
    "sample_date": pl.Date(),
    "sampled_at": TIMESTAMP,
    "source": pl.String(),
    "engine": pl.String(),
    "metric": pl.String(),
    "model_name": pl.String(),
    "namespace": pl.String(),
    "pod": pl.String(),
    "engine_index": pl.String(),
    "finished_reason": pl.String(),
    "value": DECIMAL,
    "source_ref": pl.String(),
    "source_row": pl.Int64(),
}
"""`sampled_at` is naive UTC and `sample_date` its day (a counter's value is read at an instant, not over an
interval); `source_ref` is the query URL, the recordings folder or the capture's name, `source_row` the
capture's line number (null for query_range)."""

_LABELS = {
    "model_name": ("model_name",),
    "namespace": ("exported_namespace", "namespace"),
    "pod": ("exported_pod", "pod"),
    "engine_index": ("engine",),
    "finished_reason": ("finished_reason",),
}
"""Output column -> the labels it is read from, first set wins."""
_SAMPLE_LINE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?P<labels>\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?'
    r"\s+(?P<value>\S+)(?:\s+(?P<timestamp>-?[0-9]+))?\s*$"
)
_NOT_A_NUMBER = ("NaN", "+Inf", "-Inf", "Inf")


@dataclass(frozen=True)
class ServingSamples:
    """Rows in `SERVING_SCHEMA` and what the reader accepted with a warning (metrics it does not keep)."""

    frame: pl.DataFrame
    warnings: tuple[DeliveryWarning, ...] = ()


def empty_samples() -> pl.DataFrame:
    return pl.DataFrame(schema=SERVING_SCHEMA)


def parse_query_range(payload: bytes, *, metric: str, source_ref: str) -> ServingSamples:
    """One `query_range` matrix of a serving metric; a series' `__name__`, when Prometheus keeps it, wins."""
    try:
        data = prometheus.check_envelope(payload, source_ref)
    except prometheus.PrometheusError as error:
        raise RejectedInput(source_ref, error.reason) from None
    if data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise RejectedInput(source_ref, f"resultType {data.get('resultType')!r} with a result list, expected 'matrix'")
    columns: dict[str, list] = {"metric": [], "unix": [], "raw_value": [], "series": [], **{c: [] for c in _LABELS}}
    for number, series in enumerate(data["result"]):
        if not isinstance(series, dict) or not isinstance(series.get("values"), list):
            raise RejectedInput(source_ref, f"series {number} has no values list", column="values")
        labels = series.get("metric") or {}
        points = series["values"]
        try:
            columns["unix"].extend(float(point[0]) for point in points)
            columns["raw_value"].extend(str(point[1]) for point in points)
        except (TypeError, ValueError, IndexError):
            reason = f'series {number}: a point is not [unix_time, "value"]'
            raise RejectedInput(source_ref, reason, column="values") from None
        for name, value in [("metric", labels.get("__name__") or metric), ("series", number)] + [
            (column, _first_label(labels, names)) for column, names in _LABELS.items()
        ]:
            columns[name].extend([value] * len(points))
    frame = pl.DataFrame(columns, schema_overrides={c: pl.String() for c in ("metric", "raw_value", *_LABELS)})
    frame = frame.with_columns(
        sampled_at=pl.from_epoch((pl.col("unix") * 1_000_000).round().cast(pl.Int64), time_unit="us"),
        source_row=pl.lit(None, dtype=pl.Int64),
    )
    return _finish(frame, source=SOURCE_QUERY_RANGE, source_ref=source_ref)


def parse_responses(responses: Sequence[prometheus.RangeResponse]) -> ServingSamples:
    parsed = [parse_query_range(r.payload, metric=r.metric, source_ref=r.url) for r in responses]
    return combine(parsed)


def parse_exposition(payload: bytes, *, name: str, scraped_at: datetime | None = None) -> ServingSamples:
    """A text exposition capture (gzip allowed); `scraped_at` (naive UTC) dates samples that carry no timestamp."""
    try:
        text = (gzip.decompress(payload) if payload[:2] == b"\x1f\x8b" else payload).decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise RejectedInput(name, f"cannot read the capture ({error})") from None
    except UnicodeDecodeError:
        raise RejectedInput(name, "not UTF-8 text") from None
    lines = pl.DataFrame({"line": text.splitlines()}, schema={"line": pl.String()}).with_columns(
        source_row=pl.int_range(1, pl.len() + 1, dtype=pl.Int64), line=pl.col("line").str.strip_chars()
    )
    lines = lines.filter((pl.col("line") != "") & ~pl.col("line").str.starts_with("#"))
    parts = lines.with_columns(pl.col("line").str.extract_groups(_SAMPLE_LINE.pattern).alias("parts")).unnest("parts")
    _reject_first(parts, name, "sample", pl.col("name").is_null(), "is not `name{labels} value [timestamp]`", "line")
    stamp = pl.col("timestamp").cast(pl.Int64, strict=False)
    at = (
        pl.from_epoch(stamp * 1000, time_unit="us")
        if scraped_at is None
        else (
            pl.when(stamp.is_null())
            .then(pl.lit(scraped_at, dtype=TIMESTAMP))
            .otherwise(pl.from_epoch(stamp * 1000, "us"))
        )
    )
    frame = parts.with_columns(
        metric=pl.col("name"),
        raw_value=pl.col("value"),
        sampled_at=at,
        **{column: _label_expr(names) for column, names in _LABELS.items()},
    )
    _reject_first(
        frame.filter(pl.col("metric").is_in(METRICS)),
        name,
        "timestamp",
        pl.col("sampled_at").is_null(),
        "is missing: a capture without sample times needs its scrape time (<name>__<unix seconds>.prom)",
        "line",
    )
    return _finish(frame, source=SOURCE_EXPOSITION, source_ref=name)


def combine(parsed: Sequence[ServingSamples]) -> ServingSamples:
    if not parsed:
        return ServingSamples(empty_samples())
    return ServingSamples(
        pl.concat([p.frame for p in parsed]), tuple(warning for p in parsed for warning in p.warnings)
    )


def _finish(frame: pl.DataFrame, *, source: str, source_ref: str) -> ServingSamples:
    """Keep the serving metrics, check and type them; a rejection names the series (query_range) or line."""
    ignored = frame.filter(~pl.col("metric").is_in(METRICS) & ~pl.col("metric").is_in(_SKIPPED_PARTS))
    warnings = ()
    if ignored.height:
        names = ignored["metric"].unique().sort().to_list()
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        warnings = (
            DeliveryWarning(
                rule=UNKNOWN_METRIC,
                column="metric",
                rows=ignored.height,
                message=f"{len(names)} metric(s) not read as serving metrics, ignored: {shown}",
                file=source_ref,
            ),
        )
    frame = frame.filter(pl.col("metric").is_in(METRICS))
    if frame.is_empty():
        return ServingSamples(empty_samples(), warnings)
    number = pl.col("raw_value").cast(DECIMAL, strict=False)
    not_a_number = pl.col("raw_value").is_in(_NOT_A_NUMBER)
    plausible = (pl.col("sampled_at") >= EARLIEST) & (pl.col("sampled_at") < LATEST)
    checks = (
        ("model_name", pl.col("model_name").fill_null("") == "", "is missing: a series must name its model"),
        ("value", number.is_null() & ~not_a_number, "is not a number"),
        ("timestamp", ~plausible, f"is outside {EARLIEST.year}–{LATEST.year - 1}"),
    )
    for column, failed, reason in checks:
        shown = "raw_value" if column == "value" else "sampled_at" if column == "timestamp" else column
        bad = frame.filter(failed.fill_null(False))
        if bad.height:
            row = None if bad["source_row"][0] is None else int(bad["source_row"][0])
            prefix = f"series {bad['series'][0]}: " if "series" in bad.columns else ""
            raise RejectedInput(
                source_ref, f"{prefix}{column} {reason} (found {bad[shown][0]!r})", row=row, column=column
            )
    frame = frame.with_columns(
        sample_date=pl.col("sampled_at").dt.date(),
        source=pl.lit(source),
        engine=pl.col("metric").str.split(":").list.first(),
        value=pl.when(not_a_number).then(None).otherwise(number),
        source_ref=pl.lit(source_ref),
    )
    return ServingSamples(frame.select([pl.col(c).cast(t) for c, t in SERVING_SCHEMA.items()]), warnings)


def _first_label(labels: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((labels[name] for name in names if labels.get(name)), None)


def _label_expr(names: tuple[str, ...]) -> pl.Expr:
    """A label's value from an exposition line's `{…}`, unescaped (`\\\\`, `\\"`, `\\n`); first set label wins."""
    found = [
        pl.col("labels")
        .str.extract(rf'[{{,]\s*{name}\s*=\s*"((?:[^"\\]|\\.)*)"', 1)
        .str.replace_all(r"\n", "\n", literal=True)
        .str.replace_all(r"\"", '"', literal=True)
        .str.replace_all("\\\\", "\\", literal=True)
        for name in names
    ]
    return pl.coalesce([pl.when(value != "").then(value) for value in found])


def _reject_first(frame: pl.DataFrame, name: str, column: str, failed: pl.Expr, reason: str, shown: str) -> None:
    bad = frame.filter(failed.fill_null(False))
    if bad.height:
        more = f" ({bad.height - 1} more line(s) like it)" if bad.height > 1 else ""
        raise RejectedInput(
            name, f"{column} {reason} (found {bad[shown][0]!r}){more}", row=int(bad["source_row"][0]), column=column
        )
