"""Cost per million tokens on a real dbt build: the Kubernetes chargeback's node (the bill and recorded DCGM answer of
tests/dbt/test_gpu_cost_allocation.py) with the serving counters of two of its pods, fetched over real HTTP.

The chargeback gives pod serve-7 (namespace inference) 11.5 GPU-hours and 18.23 of the node's 152.16, and pod
notebook-1 (sandbox) 0.5 GPU-hour and 0.79. The serving recording
(tests/fixtures/telemetry/serving/query_range_k8s_serving_pods.json, 10:00-11:00 on 5 October 2026) says:

- serve-7 runs two vLLM servers: Llama-3.1-8B-Instruct with 1,800,000 prompt and 410,000 generation tokens and
  180 + 820.5 busy seconds (prefill + decode), and Mistral-7B-Instruct-v0.3, whose server restarts after 10:30
  (counters from 0 again), with 1,100,000 prompt and 330,000 generation tokens and 110 + 990.5 busy seconds.
  The pod's 18.23 is split by busy seconds and rounded cumulatively: Llama 18.23 × 1000.5 / 2101 = 8.681... → 8.68,
  Mistral 18.23 − 8.68 = 9.55. Each model's input cost is its cost × prefill ÷ (prefill + decode).
- notebook-1 serves Phi-3-mini-4k-instruct without timing histograms: all of 0.79 is its cost, split into input and
  output with an output token weighing 2.5 input tokens (the `multiplier` rule).

Everything is recomputed here from the recording's JSON and the bill's CSV row with Decimal.
"""

from __future__ import annotations

import csv
import json
import logging
from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise

import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import SERVING_FEED, fetch_prometheus_days
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.dbt.test_gpu_cost_allocation import BILL, COLUMNS, RECORDING, held_gpu_hours
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
SERVING = FIXTURES_ROOT / "telemetry" / "serving" / "query_range_k8s_serving_pods.json"
CENT = Decimal("0.01")
MILLION = Decimal(1_000_000)
OUTPUT_INPUT_RATIO = Decimal("2.5")
METRICS = {
    "vllm:prompt_tokens_total": "prompt",
    "vllm:generation_tokens_total": "generation",
    "vllm:prefix_cache_hits_total": "hits",
    "vllm:request_prefill_time_seconds_sum": "prefill",
    "vllm:request_decode_time_seconds_sum": "decode",
}


def served() -> dict[tuple[str, str, str], dict[str, Decimal]]:
    """(namespace, pod, model) -> the day's increases per quantity, a drop in a counter being a restart."""
    totals: dict[tuple[str, str, str], dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for series in json.loads(SERVING.read_text())["data"]["result"]:
        labels = series["metric"]
        if labels["__name__"] not in METRICS:
            continue
        values = [Decimal(value) for _, value in series["values"]]
        increase = sum((b if b < a else b - a for a, b in pairwise(values)), Decimal(0))
        totals[(labels["namespace"], labels["pod"], labels["model_name"])][METRICS[labels["__name__"]]] += increase
    return totals


def pod_costs() -> dict[tuple[str, str], Decimal]:
    """(namespace, pod) -> the chargeback's cost: the bill's rate per GPU-hour × GPU-hours held, to the cent."""
    rate = Decimal(BILL["cost"]) / (Decimal(BILL["gpu_count"]) * Decimal(BILL["usage_hours"]))
    held = held_gpu_hours(json.loads(RECORDING.read_text()))
    return {key: (rate * hours).quantize(CENT, ROUND_HALF_UP) for key, hours in held.items()}


def expected_rows() -> dict[tuple[str, str], dict[str, Decimal | str]]:
    """(pod, model) -> allocation cost, input cost and the rules, split as the module docstring says."""
    costs = pod_costs()
    by_pod: dict[tuple[str, str], list[tuple[str, dict[str, Decimal]]]] = defaultdict(list)
    for (namespace, pod, model), quantities in sorted(served().items()):
        by_pod[(namespace, pod)].append((model, quantities))
    rows = {}
    for key, models in by_pod.items():
        busy = {model: q["prefill"] + q["decode"] for model, q in models}
        weights = busy if len(models) > 1 else dict.fromkeys(busy, Decimal(1))
        through = Decimal(0)
        for model, quantities in models:
            before = (costs[key] * through / sum(weights.values())).quantize(CENT, ROUND_HALF_UP)
            through += weights[model]
            cost = (costs[key] * through / sum(weights.values())).quantize(CENT, ROUND_HALF_UP) - before
            if busy[model] > 0:
                input_cost, rule = cost * quantities["prefill"] / busy[model], "compute_time"
            else:
                weighted = quantities["prompt"] + OUTPUT_INPUT_RATIO * quantities["generation"]
                input_cost, rule = cost * quantities["prompt"] / weighted, "multiplier"
            rows[(key[1], model)] = {
                "cost": cost,
                "input_cost": input_cost,
                "rule": rule,
                "share_rule": "busy_seconds" if len(models) > 1 else "sole_model",
                **quantities,
            }
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("inference")
    home = FinopsHome(tmp_path / "home").create_folders()
    bill = tmp_path / "k8s-bill.csv"
    with bill.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerow(BILL)
    register(home, "gpu_cloud_usage", bill)
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=log)] == ["loaded"]
        server.route("/api/v1/query_range", Reply(RECORDING.read_bytes()))
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE",),
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
        server.route("/api/v1/query_range", Reply(SERVING.read_bytes()))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=("vllm:prompt_tokens_total",), feed=SERVING_FEED,
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": DAY.isoformat()}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_inference_cost_per_million_tokens", "--exclude", "test_type:unit",
        "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"), environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "assert_inference_cost_reconciles_to_serving_pods" in build.stdout
    return home


def test_each_model_pays_its_share_of_its_pods_gpu_cost_to_the_cent(built: FinopsHome):
    expected = expected_rows()
    rows = query(
        built.warehouse,
        "select pod, model_name, allocation_cost, input_cost, output_cost, input_output_rule, model_share_rule, "
        "prompt_tokens, generation_tokens from intermediate.int_serving__model_costs_daily",
    )
    got = {(row[0], row[1]): row[2:] for row in rows}
    assert set(got) == set(expected)
    for key, want in expected.items():
        cost, input_cost, output_cost, rule, share_rule, prompt, generation = got[key]
        assert cost == want["cost"], key
        assert input_cost == want["input_cost"].quantize(Decimal("1e-12"), ROUND_HALF_UP), key
        assert input_cost + output_cost == cost and (rule, share_rule) == (want["rule"], want["share_rule"])
        assert (prompt, generation) == (want["prompt"], want["generation"])
    # the figures of the module docstring
    assert got[("serve-7", "Llama-3.1-8B-Instruct")][0] == Decimal("8.68")
    assert got[("serve-7", "Mistral-7B-Instruct-v0.3")][0] == Decimal("9.55")
    assert got[("notebook-1", "Phi-3-mini-4k-instruct")][0] == Decimal("0.79")
    assert got[("serve-7", "Mistral-7B-Instruct-v0.3")][5:] == (Decimal(1_100_000), Decimal(330_000))


def test_cost_per_million_tokens_adds_up_to_the_serving_pods_and_divides_exactly(built: FinopsHome):
    expected = expected_rows()
    costs = pod_costs()
    rows = query(
        built.warehouse,
        "select namespace, model_name, team, gpu_model, provider_name, allocation_cost, usage_cost, total_tokens, "
        "cost_per_million_tokens, input_cost_per_million_tokens, output_cost_per_million_tokens, cache_hit_fraction, "
        "estimated_cache_savings, gpu_hours, active_gpu_hours "
        "from marts.fct_inference_cost_per_million_tokens",
    )
    assert sum(row[5] for row in rows) == costs[("inference", "serve-7")] + costs[("sandbox", "notebook-1")]
    six = Decimal("1e-6")
    chargeback = {
        row[0]: (row[1], row[2])
        for row in query(
            built.warehouse,
            "select pod, gpu_hours, active_gpu_hours from marts.fct_gpu_cost_allocation_daily "
            "where allocation_type = 'pod'",
        )
    }
    for row in rows:
        namespace, model, team, gpu_model, provider, cost, usage_cost, tokens = row[:8]
        per_million, per_input, per_output, hits, savings, gpu_hours, active = row[8:]
        pod = "serve-7" if namespace == "inference" else "notebook-1"
        want = expected[(pod, model)]
        assert (gpu_model, provider, team) == ("A100 80GB", "Lambda", {"inference": "inference"}.get(namespace))
        assert tokens == want["prompt"] + want["generation"]
        assert per_million == (cost * MILLION / tokens).quantize(six, ROUND_HALF_UP)
        assert per_input == (want["input_cost"] * MILLION / want["prompt"]).quantize(six, ROUND_HALF_UP)
        output_cost = cost - want["input_cost"].quantize(Decimal("1e-12"), ROUND_HALF_UP)
        assert per_output == (output_cost * MILLION / want["generation"]).quantize(six, ROUND_HALF_UP)
        pod_hours, pod_active = chargeback[pod]
        # the cost × active GPU-hours product is kept to 12 decimals before the division, as the model documents
        twelve = Decimal("1e-12")
        assert usage_cost == ((cost * pod_active).quantize(twelve, ROUND_HALF_UP) / pod_hours).quantize(
            twelve, ROUND_HALF_UP
        )
        assert gpu_hours <= pod_hours and active <= pod_active
        if want.get("hits"):
            assert hits == (want["hits"] / want["prompt"]).quantize(six, ROUND_HALF_UP)
            assert savings is not None and savings > 0
        else:
            assert hits in (None, Decimal(0))
