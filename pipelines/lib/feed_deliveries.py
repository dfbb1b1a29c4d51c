"""Every source whose freshness is watched: the billing sources, each price feed, the ECB rates and telemetry.

The price feeds and telemetry are measured by their data (`LastObserved`): a feed is fresh when its
newest capture is, whatever was loaded. The host map is a file a user maintains when hosts change,
with no cadence, so it is not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pipelines.lib.ingest.billing_sources import BILLING_SOURCES
from pipelines.lib.ingest.telemetry import NVIDIA_SMI_SAMPLES, NVIDIA_SMI_SOURCE, PROMETHEUS_SAMPLES
from pipelines.lib.prices.fx_rates import FX_RATES
from pipelines.lib.prices.market_prices import price_table
from pipelines.lib.prices.price_feeds import PRICE_FEEDS
from pipelines.lib.quality.freshness import LastObserved
from pipelines.lib.warehouse.warehouse import ReferenceTable
from sources.telemetry import samples


@dataclass(frozen=True)
class FeedDelivery:
    """A daily feed as `freshness.DeliveredSource`, with the asset that writes it."""

    name: str
    """`source` in audit.loads."""
    title: str
    asset_key: tuple[str, ...]
    raw_table: ReferenceTable
    delivery_cadence: timedelta
    delivery_grace: timedelta
    observed: LastObserved


FEED_DELIVERIES: tuple[FeedDelivery, ...] = (
    *(
        FeedDelivery(
            f"prices/{feed.name}",
            feed.title,
            ("prices", feed.name),
            price_table(feed),
            feed.delivery_cadence,
            feed.delivery_grace,
            LastObserved("observed_at", "'prices/' || feed"),
        )
        for feed in PRICE_FEEDS
    ),
    FeedDelivery(
        "ecb",
        "ECB reference rates",
        ("raw", "ecb_fx_rates"),
        FX_RATES,
        timedelta(days=1),
        # Rates appear at 16:00 CET on TARGET working days only: Easter leaves four days without one.
        timedelta(days=5),
        LastObserved("rate_date", "'ecb'"),
    ),
    FeedDelivery(
        samples.SOURCE_PROMETHEUS,
        "Prometheus DCGM samples",
        ("raw", "prometheus_gpu_samples"),
        PROMETHEUS_SAMPLES,
        timedelta(days=1),
        # Yesterday is read at 05:30 UTC: just before that, the newest sample is 29.5 hours old.
        timedelta(hours=12),
        LastObserved("sampled_at", "source"),
    ),
    FeedDelivery(
        NVIDIA_SMI_SOURCE,
        "nvidia-smi logs",
        ("raw", "nvidia_smi_gpu_samples"),
        NVIDIA_SMI_SAMPLES,
        timedelta(days=1),
        # Logs are collected from hosts by a user's job, so a day of slack.
        timedelta(days=1),
        LastObserved("sampled_at", "source"),
    ),
)

DELIVERED_SOURCES = (*BILLING_SOURCES, *FEED_DELIVERIES)
"""Every source in audit.freshness."""
