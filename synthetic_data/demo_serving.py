"""vLLM serving counters for the demo organisation's model servers, as recorded Prometheus `query_range` answers.

The vLLM servers run in namespace `inference`, one pod per model on four H100s each (`demo_telemetry.SERVING_PODS`,
the pods the DCGM series name): the rented p5-chat node (team inference) holds two all day, Llama-3.1-8B-Instruct
and Qwen2.5-72B-Instruct, and the owned server gpu-ams1-01 one, Llama-3.1-70B-Instruct, on its GPUs 4-7 (fewer
requests than the 8B model, longer prompts). While the node runs, every 15-minute step adds requests to their
counters, more on weekday daytime as the chat traffic of `demo_telemetry` (SM-active) is; tokens, prefix-cache
lookups and hits, finished requests by reason and prefill/decode seconds follow from the requests. The Qwen server
restarts once (`RESTART`): its counters start again from 0 there, the reset `int_serving__token_increases_hourly`
must see.

The answers are the bare counters, one file per metric and UTC day in the layout the serving asset keeps its own
fetches in (`serving/<day>/<metric>__900s__<start>-<end>.counter.json.gz`, points 00:00 to 23:45).
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sources.telemetry import serving
from sources.telemetry.prometheus import matrix_payload
from synthetic_data.demo_common import rng_for
from synthetic_data.demo_telemetry import SERVING_PODS, demo_gpu_hosts
from synthetic_data.focus_samples import billing_months

STEP_SECONDS = 900
MODELS = {
    # model: (requests per busy step, prompt tokens per request, generation tokens per request, prefix-cache hit share)
    "Llama-3.1-8B-Instruct": (2400, 850, 230, Decimal("0.35")),
    "Qwen2.5-72B-Instruct": (900, 1600, 420, Decimal("0.55")),
    "Llama-3.1-70B-Instruct": (1000, 1400, 380, Decimal("0.45")),
}
RESTART = ("Qwen2.5-72B-Instruct", datetime(2026, 10, 14, 3, 0, tzinfo=UTC))
"""The Qwen server restarts in the step ending 03:00 on 14 October: its counters start again from 0."""
SERIES = (
    serving.PROMPT_TOKENS,
    serving.GENERATION_TOKENS,
    serving.PREFIX_CACHE_QUERIES,
    serving.PREFIX_CACHE_HITS,
    serving.PREFILL_SECONDS_SUM,
    serving.PREFILL_SECONDS_COUNT,
    serving.DECODE_SECONDS_SUM,
    serving.DECODE_SECONDS_COUNT,
)
REASONS = ("stop", "length")


def _busy(moment: int) -> bool:
    hour = moment // 3600 % 24
    return (moment // 86400 + 3) % 7 < 5 and 8 <= hour < 20  # 1970-01-01 was a Thursday


def write_demo_serving(out_dir: Path, seed: int = 42, start_month: str = "2026-09", months: int = 2) -> Path:
    """Write one recorded answer per serving metric and day of the demo window; returns the folder of days."""
    periods = billing_months(start_month, months)
    days = [day.date() for period in periods for day in period.days]
    hosts = demo_gpu_hosts(seed, periods)
    pods = {}
    for fleet, model, pod, _, _ in SERVING_PODS:
        (host,) = [host for host in hosts if host.fleet == fleet]  # one node per serving fleet
        pods[model] = (host, pod)
    restart_at = int(RESTART[1].timestamp())
    # (day, metric) -> [(labels, [(unix, value)])]
    series: dict[tuple[date, str], list] = defaultdict(list)
    for model, (busy_requests, prompt, generation, hit_share) in MODELS.items():
        host, pod = pods[model]
        rng = rng_for(seed, "serving", model)
        labels = {"namespace": host.team, "pod": pod, "model_name": model, "engine": "0", "container": "vllm"}
        totals = {name: Decimal(0) for name in (*SERIES, *REASONS)}
        points: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for begin, end in host.intervals:
            moment = int(begin.timestamp()) + (-int(begin.timestamp()) % STEP_SECONDS)
            while moment <= int(end.timestamp()):
                if model == RESTART[0] and moment == restart_at:
                    totals = dict.fromkeys(totals, Decimal(0))
                requests = (
                    rng.randint(busy_requests // 2, busy_requests)
                    if _busy(moment)
                    else rng.randint(0, busy_requests // 20)
                )
                length = rng.randint(0, requests // 20)
                tokens_in = requests * rng.randint(prompt * 8 // 10, prompt * 12 // 10)
                tokens_out = requests * rng.randint(generation * 8 // 10, generation * 12 // 10)
                step = {
                    serving.PROMPT_TOKENS: tokens_in,
                    serving.GENERATION_TOKENS: tokens_out,
                    serving.PREFIX_CACHE_QUERIES: tokens_in,
                    serving.PREFIX_CACHE_HITS: int(tokens_in * hit_share),
                    serving.PREFILL_SECONDS_SUM: Decimal(tokens_in) / 40_000,
                    serving.PREFILL_SECONDS_COUNT: requests,
                    serving.DECODE_SECONDS_SUM: Decimal(tokens_out) / 2_000,
                    serving.DECODE_SECONDS_COUNT: requests,
                    "stop": requests - length,
                    "length": length,
                }
                for name, added in step.items():
                    totals[name] += added
                    points[name].append((moment, f"{totals[name].normalize():f}"))
                moment += STEP_SECONDS
        for name, values in points.items():
            metric = serving.REQUEST_SUCCESS if name in REASONS else name
            extra = {"finished_reason": name} if name in REASONS else {}
            by_day: dict[date, list[tuple[int, str]]] = defaultdict(list)
            for at, value in values:
                by_day[datetime.fromtimestamp(at, UTC).date()].append((at, value))
            for day, day_points in by_day.items():
                series[(day, metric)].append((labels | extra, day_points))
    root = out_dir / "serving"
    for day in days:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        end = start + timedelta(days=1) - timedelta(seconds=STEP_SECONDS)
        folder = root / day.isoformat()
        folder.mkdir(parents=True, exist_ok=True)
        for metric in (*SERIES, serving.REQUEST_SUCCESS):
            name = f"{metric}__{STEP_SECONDS}s__{int(start.timestamp())}-{int(end.timestamp())}.counter.json.gz"
            payload = matrix_payload(series.get((day, metric), []))
            (folder / name).write_bytes(gzip.compress(payload, compresslevel=1, mtime=0))
    return root
