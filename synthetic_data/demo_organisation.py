"""One fictional organisation, Acme AI, seen through every billing source the warehouse reads.

`write_demo_organisation` writes two full calendar months (2026-09 and 2026-10 by default) of
billing data for the same teams and projects (`demo_common.TEAM_PROJECTS`) in each provider's real
export format, one delivery per export run:

| source | deliveries |
|---|---|
| `aws_cur` | CUR 2.0 Data Export (main organisation) and legacy CUR CSV (acquired subsidiary), per month |
| `focus` | AWS `FOCUS_1_2_AWS` Data Export (lab organisation) and Azure FocusCost (EU entity), per month |
| `azure_actual`, `azure_amortized` | the US Enterprise Agreement's ActualCost and AmortizedCost runs, per month |
| `gcp_billing` | BigQuery billing export extracted to Parquet, per invoice month |
| `gpu_cloud_usage` | Lambda and RunPod usage CSVs, per provider and month |
| `onprem_gpu_assets` | the owned 8×H100 server inventory |

`expected_totals.json` holds what the warehouse must show, built from each writer's ledger (the
FOCUS meaning of every line as it was generated, in `Decimal`), never by reading the files back:
billed and effective cost per source, billing account, billing period and currency; GPU-hours per
provider, GPU model and pricing category; GPU effective cost per team; on-prem cost per server and
month through `onprem_costs_through`. The same seed gives byte-identical files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from synthetic_data.demo_aws import CUR2_FLEET, EksPod, write_cur2, write_focus_aws, write_legacy_cur
from synthetic_data.demo_azure import write_ea_exports, write_focus_cost
from synthetic_data.demo_common import ORGANISATION, TEAM_PROJECTS, Ledger, last_day
from synthetic_data.demo_gcp import write_gcp_billing
from synthetic_data.demo_gpu_clouds import onprem_costs, record_onprem, write_gpu_cloud_usage, write_onprem_assets
from synthetic_data.demo_telemetry import KUBERNETES_FLEET, KUBERNETES_PODS, SERVING_PODS
from synthetic_data.focus_samples import billing_months

EXPECTED_TOTALS_FILE = "expected_totals.json"
DEFAULT_START_MONTH = "2026-09"
DEFAULT_MONTHS = 2

ASSUMPTIONS = (
    "aws_cur: billed = sum of line_item_unblended_cost (SavingsPlanNegation included); effective = the CID "
    "amortization (SavingsPlanCoveredUsage -> savings_plan_savings_plan_effective_cost, SavingsPlanNegation -> 0, "
    "SavingsPlanRecurringFee -> total_commitment_to_date - used_commitment, DiscountedUsage -> "
    "reservation_effective_cost, RIFee -> unused amortized upfront + unused recurring fee, else unblended). "
    "GPU-hours = line_item_usage_amount x GPUs on Usage (Box/Spot), SavingsPlanCoveredUsage and DiscountedUsage "
    "rows only; Spot -> Dynamic, Savings Plan and Reserved -> Committed.",
    "azure_actual + azure_amortized (one group): billed = sum of the ActualCost dataset's CostInBillingCurrency, "
    "effective = sum of the AmortizedCost dataset's (FOCUS conversion: amortized rows plus actual reservation "
    "purchases with effective 0). UnusedReservation rows are GPU lines (ND96isr H100 v5) without a team.",
    "gcp_billing: billed = effective = cost + sum(credits.amount) per invoice.month (Pacific-time months; the "
    "billing period is compared by its date). GPU lines are the GPU SKUs and the GPU commitment fee; A3 host "
    "core/RAM SKUs are not GPU lines. A GPU row with a COMMITTED_USAGE_DISCOUNT credit is Committed; the "
    "commitment fee has no GPU-hours; its team comes from project.labels.",
    "gpu_cloud_usage: billed = effective = cost; GPU-hours = usage_hours x gpu_count; on_demand -> Standard, "
    "spot -> Dynamic, reserved -> Committed; billing period = calendar month of usage_start.",
    "onprem_gpu_assets: cost per server and day from purchase_date through onprem_costs_through (inclusive): "
    "(purchase_price - residual_value) / (depreciation_years x 365) + power_draw_kw x pue x 24 x "
    "electricity_price_per_kwh + power_draw_kw x colocation_price_per_kw_month x 12 / 365 + "
    "maintenance_per_year / 365, per calendar month in EUR; billing entries are per server (billing_account_id "
    "is the asset_id); compared as effective cost only (billed is listed equal to it); no GPU-hours are expected.",
    "focus: the FOCUS rows as written (AWS FOCUS_1_2_AWS and Azure FocusCost 1.0r2).",
)


@dataclass(frozen=True)
class DemoDelivery:
    """One delivery to register: the billing source it belongs to and its file or folder."""

    source: str
    path: Path
    description: str


def demo_first_day(start_month: str = DEFAULT_START_MONTH, months: int = DEFAULT_MONTHS) -> date:
    """The demo's first day: market prices are captured daily from here on."""
    return billing_months(start_month, months)[0].start.date()


def demo_last_day(start_month: str = DEFAULT_START_MONTH, months: int = DEFAULT_MONTHS) -> date:
    """The demo's last day (inclusive), to which on-prem cost lines are pinned."""
    return last_day(billing_months(start_month, months))


def eks_pods() -> dict[str, list[EksPod]]:
    """The pods of the demo's EKS GPU nodes, as AWS's split cost allocation data sees them, from the telemetry's
    schedules: the Kubernetes cluster node's pods (one per GPU they hold) and the model servers on AWS nodes (the
    owned server's are not AWS's to split)."""
    gpus: dict[tuple[str, str, int, int], int] = {}
    for _, namespace, pod, _, begin, end in KUBERNETES_PODS:
        gpus[(namespace, pod, begin, end)] = gpus.get((namespace, pod, begin, end), 0) + 1
    cluster = [EksPod(namespace, pod, count, begin, end) for (namespace, pod, begin, end), count in gpus.items()]
    pods = {KUBERNETES_FLEET: cluster}
    for fleet, _, pod, _, count in SERVING_PODS:
        pods.setdefault(fleet, []).append(EksPod("inference", pod, count, 0, 24 * 60))
    aws_fleets = {fleet.name for fleet in CUR2_FLEET}
    return {fleet: fleet_pods for fleet, fleet_pods in pods.items() if fleet in aws_fleets}


def write_demo_organisation(
    out_dir: Path, seed: int = 42, start_month: str = DEFAULT_START_MONTH, months: int = DEFAULT_MONTHS
) -> list[DemoDelivery]:
    """Write every delivery of the demo organisation and `expected_totals.json` into `out_dir`."""
    out_dir = Path(out_dir)
    periods = billing_months(start_month, months)
    ledger = Ledger()
    written = [
        *write_cur2(out_dir / "aws_cur", seed, periods, ledger, eks_pods()),
        *write_legacy_cur(out_dir / "aws_cur", seed, periods, ledger),
        *write_focus_aws(out_dir / "focus", seed, periods, ledger),
        *write_focus_cost(out_dir / "focus", seed, periods, ledger),
        *write_ea_exports(out_dir / "azure", seed, periods, ledger),
        *write_gcp_billing(out_dir / "gcp_billing", seed, periods, ledger),
        *write_gpu_cloud_usage(out_dir / "gpu_cloud_usage", seed, periods, ledger),
        *write_onprem_assets(out_dir / "onprem_gpu_assets"),
    ]
    through = last_day(periods)
    record_onprem(ledger, through)
    deliveries = [DemoDelivery(item.source, item.path, item.description) for item in written]
    document = {
        "organisation": ORGANISATION,
        "seed": seed,
        "start_month": start_month,
        "months": months,
        "teams": {team: list(projects) for team, projects in TEAM_PROJECTS.items()},
        "onprem_costs_through": through.isoformat(),
        "deliveries": [
            {"source": item.source, "path": item.path.relative_to(out_dir).as_posix(), "description": item.description}
            for item in deliveries
        ],
        "billing": ledger.billing(),
        "gpu_hours": ledger.gpu_hours(),
        "team_gpu_effective_cost": ledger.team_gpu_effective_cost(),
        "onprem": onprem_costs(through),
        "assumptions": list(ASSUMPTIONS),
    }
    (out_dir / EXPECTED_TOTALS_FILE).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return deliveries
