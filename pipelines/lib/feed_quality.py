"""What the rows of the price feeds, exchange rates and telemetry must satisfy once loaded (their GX suites).

The billing sources declare their facts beside their raw tables (`billing_sources.py`); these are the
same declarations for the tables written by the daily feeds. The enums are the connectors' own sets
(`sources.prices.offers`, `sources.telemetry.samples`), the plausible time range the readers' one
(`sources.row_checks`), so a rule exists once.
"""

from __future__ import annotations

from pipelines.lib.quality.quality import MAX_ABS_COST, AllowedValues, Derived, InRange, NotBefore, QualityFacts
from sources.prices.offers import OFFER_STATISTICS, PRICE_UNITS, PRICING_MODELS, PriceFeed
from sources.row_checks import EARLIEST, LATEST, NonNegative, OneOf
from sources.telemetry import samples

CAPTURE_DEADLINE = Derived("_captured_by", "CAST(price_day AS TIMESTAMP) + INTERVAL 2 DAY")
"""A day's prices are fetched while that day is today (UTC, ±1 day; `market_prices._capture_for`), so
a capture observed after the end of the following day cannot be that day's: a slipped date."""

_PLAUSIBLE_TIME = InRange("observed_at", EARLIEST, LATEST, unit="(a plausible capture time)")


def _feed_facts(feed: PriceFeed) -> tuple[AllowedValues, NotBefore]:
    return (
        AllowedValues("feed", (feed.name,)),
        NotBefore("_captured_by", "observed_at"),
    )


def offer_facts(feed: PriceFeed) -> QualityFacts:
    """raw.price_observations, the rows of one feed: the offers shape of `sources.prices.offers`."""
    allowed, captured = _feed_facts(feed)
    return QualityFacts(
        keys=(
            "observed_at",
            "provider",
            "pricing_model",
            "price",
            "price_unit",
            "offer_statistic",
            "currency",
            "source_url",
            "feed",
            "price_day",
        ),
        allowed_values=(
            allowed,
            AllowedValues("pricing_model", tuple(sorted(PRICING_MODELS))),
            AllowedValues("price_unit", tuple(sorted(PRICE_UNITS))),
            AllowedValues("offer_statistic", tuple(sorted(OFFER_STATISTICS))),
        ),
        cost_columns=("price", "upfront_price"),
        currency_columns=("currency",),
        not_negative=tuple(
            NonNegative(column) for column in ("price", "upfront_price", "gpu_count", "term_years", "offer_count")
        ),
        ordered=(captured,),
        in_range=(_PLAUSIBLE_TIME,),
        derived=(CAPTURE_DEADLINE,),
    )


def spot_advisor_facts(feed: PriceFeed) -> QualityFacts:
    """raw.aws_spot_advisor: savings and interruption bands are percentages."""
    allowed, captured = _feed_facts(feed)
    return QualityFacts(
        keys=("observed_at", "region", "os", "instance_type", "interruption_band", "source_url", "feed", "price_day"),
        allowed_values=(allowed,),
        not_negative=(NonNegative("interruption_band"),),
        ordered=(captured,),
        in_range=(
            _PLAUSIBLE_TIME,
            InRange("savings_pct", 0, 100, unit="%"),
            InRange("interruption_max_pct", 0, 100, unit="%"),
        ),
        derived=(CAPTURE_DEADLINE,),
    )


FX_FACTS = QualityFacts(
    keys=("rate_date", "base_currency", "quote_currency", "rate", "source_url"),
    currency_columns=("base_currency", "quote_currency"),
    in_range=(InRange("rate", 0, MAX_ABS_COST, strict_min=True, unit="(units per EUR)"),),
)
"""raw.ecb_fx_rates: ISO 4217 codes on both sides and a positive, finite rate."""

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
