"""GPU telemetry: Prometheus (DCGM) samples per day, nvidia-smi logs per delivery and the host map; and the
model servers' (vLLM, SGLang) serving counters per day.

The GPU samples share the long shape of `sources.telemetry.samples`; the rules their values must satisfy
are the DCGM metrics' units. The serving samples have their own shape (`sources.telemetry.serving`).
"""

from __future__ import annotations

from datetime import timedelta

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.facts import AllowedValues, Derived, InRange, LastObserved, NotBefore, QualityFacts
from pipelines.lib.catalog.tables import ReferenceTable
from sources.common.row_checks import EARLIEST, LATEST, OneOf
from sources.telemetry import samples, serving
from sources.telemetry.host_map import HOST_MAP_SCHEMA

PROMETHEUS_SAMPLES = ReferenceTable(
    name="raw.prometheus_gpu_samples", columns=samples.SAMPLE_SCHEMA, replace_key=("sample_date",)
)
NVIDIA_SMI_SAMPLES = ReferenceTable(
    name="raw.nvidia_smi_gpu_samples",
    columns=samples.SAMPLE_SCHEMA,
    replace_key=("source_ref", "sample_date", "host"),
    partition_by=("source_ref",),
)
HOST_MAP = ReferenceTable(name="raw.telemetry_host_map", columns=HOST_MAP_SCHEMA, replace_key=("mapping",))
SERVING_SAMPLES = ReferenceTable(
    name="raw.serving_metric_samples", columns=serving.SERVING_SCHEMA, replace_key=("sample_date",)
)

NVIDIA_SMI_SOURCE = "nvidia_smi"
HOST_MAP_SOURCE = "telemetry_host_map"
SERVING_SOURCE = "serving_prometheus"

_RATIOS = (samples.SM_ACTIVE, samples.GR_ENGINE_ACTIVE, samples.TENSOR_ACTIVE)
_NOT_NEGATIVE_UNITS = (samples.FB_USED, samples.POWER_USAGE, samples.TOTAL_ENERGY)


def sample_facts(source: str) -> QualityFacts:
    """raw.prometheus_gpu_samples and raw.nvidia_smi_gpu_samples: DCGM names, each value in its metric's unit.

    A sample describes the `sample_seconds` before `sampled_at`, and `sample_date` is the day that
    interval starts in, so `sampled_at` lies in [day start + sample_seconds, day end + sample_seconds].
    """
    return QualityFacts(
        keys=("sample_date", "sampled_at", "sample_seconds", "source", "host", "metric", "source_ref"),
        allowed_values=(AllowedValues("metric", samples.METRICS), AllowedValues("source", (source,))),
        in_range=(
            InRange("sampled_at", EARLIEST, LATEST, unit="(a plausible sample time)"),
            InRange("sample_seconds", 1, 86_400, unit="seconds"),
            InRange("value", 0, 1, when=OneOf("metric", _RATIOS), unit="(a ratio)"),
            InRange("value", 0, 100, when=OneOf("metric", (samples.GPU_UTIL,)), unit="%"),
            InRange("value", 0, None, when=OneOf("metric", _NOT_NEGATIVE_UNITS), unit="(MiB, W, mJ)"),
        ),
        ordered=(
            NotBefore("sampled_at", "_earliest_sampled_at"),
            NotBefore("_latest_sampled_at", "sampled_at"),
        ),
        derived=(
            Derived("_earliest_sampled_at", "CAST(sample_date AS TIMESTAMP) + to_seconds(sample_seconds)"),
            Derived(
                "_latest_sampled_at", "CAST(sample_date AS TIMESTAMP) + INTERVAL 1 DAY + to_seconds(sample_seconds)"
            ),
        ),
    )


HOST_MAP_FACTS = QualityFacts(
    keys=("mapping", "host", "resource_id", "source_file", "source_row"),
    allowed_values=(AllowedValues("mapping", ("host_map_file",)),),
    ordered=(NotBefore("valid_to", "valid_from"),),
)
"""raw.telemetry_host_map: every row maps a host to a resource; a validity window never runs backwards."""

SERVING_FACTS = QualityFacts(
    keys=("sampled_at", "source", "engine", "metric", "model_name", "source_ref"),
    allowed_values=(
        AllowedValues("metric", serving.METRICS),
        AllowedValues("engine", serving.ENGINES),
        AllowedValues("source", serving.SOURCES),
    ),
    in_range=(
        InRange("sampled_at", EARLIEST, LATEST, unit="(a plausible sample time)"),
        InRange("value", 0, None, unit="(a counter)"),
    ),
    ordered=(NotBefore("_sampled_on", "sample_date"), NotBefore("sample_date", "_sampled_on")),
    derived=(Derived("_sampled_on", "CAST(sampled_at AS DATE)"),),
)
"""raw.serving_metric_samples: every metric is a counter, so never negative; a counter is read at an instant, so
`sample_date` is the day of `sampled_at` itself."""

PROMETHEUS = CatalogEntry(
    name=samples.SOURCE_PROMETHEUS,
    title="Prometheus DCGM samples",
    asset_key=("raw", "prometheus_gpu_samples"),
    raw_table=PROMETHEUS_SAMPLES,
    quality=sample_facts(samples.SOURCE_PROMETHEUS),
    delivery_cadence=timedelta(days=1),
    # Yesterday is read at 05:30 UTC: just before that, the newest sample is 29.5 hours old.
    delivery_grace=timedelta(hours=12),
    observed=LastObserved("sampled_at", "source"),
    partition_column="sample_date",
)

NVIDIA_SMI = CatalogEntry(
    name=NVIDIA_SMI_SOURCE,
    title="nvidia-smi logs",
    asset_key=("raw", "nvidia_smi_gpu_samples"),
    raw_table=NVIDIA_SMI_SAMPLES,
    quality=sample_facts(samples.SOURCE_NVIDIA_SMI),
    delivery_cadence=timedelta(days=1),
    # Logs are collected from hosts by a user's job, so a day of slack.
    delivery_grace=timedelta(days=1),
    observed=LastObserved("sampled_at", "source"),
)

TELEMETRY_HOST_MAP = CatalogEntry(
    name=HOST_MAP_SOURCE,
    title="telemetry host map",
    asset_key=("raw", "telemetry_host_map"),
    raw_table=HOST_MAP,
    quality=HOST_MAP_FACTS,
    # A file a user maintains when hosts change: no cadence, so not watched for freshness.
    delivery_cadence=None,
)

SERVING = CatalogEntry(
    name=SERVING_SOURCE,
    title="vLLM/SGLang serving metrics",
    asset_key=("raw", "serving_metric_samples"),
    raw_table=SERVING_SAMPLES,
    quality=SERVING_FACTS,
    delivery_cadence=timedelta(days=1),
    # Read with the GPU samples at 05:30 UTC, so the same slack.
    delivery_grace=timedelta(hours=12),
    observed=LastObserved("sampled_at", f"'{SERVING_SOURCE}'"),
    partition_column="sample_date",
)

TELEMETRY = (PROMETHEUS, NVIDIA_SMI, TELEMETRY_HOST_MAP, SERVING)
