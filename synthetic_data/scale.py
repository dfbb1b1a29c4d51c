"""Billing exports of any size for benchmarks: `N` line items, deterministic, written in chunks by DuckDB.

The demo organisation (`demo_organisation`) is small and exact (every line is in a ledger). This
module is its opposite: it writes millions of plausible line items without holding them in Python.
Each row is a function of (seed, row number) only: DuckDB generates a chunk of row numbers with
`range()`, derives every value from hashes of them, and `COPY … TO` streams the chunk to a Parquet
part file (or CSV), so memory stays bounded at any N and the same seed gives the same bytes-for-values.

Rows are spread evenly over consecutive days from `start`; a day's rows all fall into its billing
month. About 12% of line items are GPU instance-hours (p5, p4d, g5, g6; a fifth of them Spot),
and they carry most of the cost, as in an organisation that trains models; the rest is CPU EC2,
EBS, S3 and data transfer, tagged with teams and projects.

- CUR 2.0: one Data Export per billing period (`<out>/cur2/<YYYY-MM>/`), part files and the
  manifest naming them, exactly like `demo_aws.write_cur2` lays them out.
- FOCUS 1.2: one Parquet delivery per billing period (`<out>/focus/<YYYY-MM>/`).
- Azure: one cost details CSV per billing period (`<out>/azure/<YYYY-MM>.csv`).

A daily refresh re-delivers the month to date (what AWS does): `days` controls how far the data
runs, and the same seed writes identical rows for the days both deliveries share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb

from synthetic_data.demo_aws import CUR2_BUCKET, CUR2_COLUMNS, CUR2_PREFIX

ROWS_PER_PART = 500_000
"""Rows per CUR part file (AWS splits large exports into parts too); also the generation chunk."""
DEFAULT_START = date(2026, 1, 1)
DEFAULT_DAYS = 90
EXPORT = "bench-cur2"
PAYER_ID = "771122334455"
PAYER_NAME = "bench-management"
USAGE_ACCOUNTS = 40
TEAMS = ("research", "inference", "platform", "data", "vision", "speech", "search", "ads")
PROJECTS = 24

# (instance type, on-demand USD per hour, share of the GPU lines in permille-of-100): real list prices.
GPU_TYPES = (
    ("p5.48xlarge", "55.04", 30),
    ("p4d.24xlarge", "21.96", 25),
    ("g5.xlarge", "1.006", 25),
    ("g6.xlarge", "0.8048", 20),
)
CPU_TYPES = (("m5.large", "0.096"), ("c6i.2xlarge", "0.34"), ("r6i.xlarge", "0.252"), ("m7g.4xlarge", "0.6528"))
REGIONS = (("us-east-1", "US East (N. Virginia)"), ("us-west-2", "US West (Oregon)"), ("eu-west-1", "EU (Ireland)"))


@dataclass(frozen=True)
class Written:
    """One delivery written: its source name (as `gpu-finops ingest --source` takes it), path and rows."""

    source: str
    path: Path
    rows: int
    billing_period: str


def months_of(start: date, days: int) -> list[tuple[str, int, int]]:
    """(YYYY-MM, first day index, day count) of each billing month the `days` days from `start` touch."""
    months: list[tuple[str, int, int]] = []
    for index in range(days):
        label = (start + timedelta(days=index)).strftime("%Y-%m")
        if months and months[-1][0] == label:
            months[-1] = (label, months[-1][1], months[-1][2] + 1)
        else:
            months.append((label, index, 1))
    return months


def _pick(options: list[str], index_sql: str) -> str:
    """SQL choosing options[index] for an integer expression in [0, len(options))."""
    return f"([{', '.join(options)}])[cast({index_sql} as bigint) + 1]"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _base_sql(seed: int, start: date, per_day: int, first: int, last: int) -> str:
    """One row per line item number in [first, last): the facts every export format is written from.

    `h1`…`h4` are independent 64-bit hashes of (seed, row); everything else is derived from them.
    """
    gpu_weights = []
    for position, (_, _, weight) in enumerate(GPU_TYPES):
        gpu_weights.extend([str(position)] * weight)
    gpu_index = _pick(gpu_weights, "h3 % 100")
    teams = [_quote(team) for team in TEAMS]
    regions = [_quote(code) for code, _ in REGIONS]
    region_names = [_quote(name) for _, name in REGIONS]
    gpu_names = [_quote(name) for name, _, _ in GPU_TYPES]
    gpu_rates = [f"{rate}::DECIMAL(18,6)" for _, rate, _ in GPU_TYPES]
    cpu_names = [_quote(name) for name, _ in CPU_TYPES]
    cpu_rates = [f"{rate}::DECIMAL(18,6)" for _, rate in CPU_TYPES]
    return f"""
    with numbered as (
        select
            i,
            hash(i, {seed}, 'a') as h1,
            hash(i, {seed}, 'b') as h2,
            hash(i, {seed}, 'c') as h3,
            hash(i, {seed}, 'd') as h4
        from range({first}, {last}) as t(i)
    ),
    kinds as (
        select
            *,
            -- 12% GPU instance-hours, 48% CPU instance-hours, 15% EBS, 15% S3, 10% data transfer
            case
                when h1 % 100 < 12 then 'gpu'
                when h1 % 100 < 60 then 'cpu'
                when h1 % 100 < 75 then 'ebs'
                when h1 % 100 < 90 then 's3'
                else 'transfer'
            end as kind,
            date '{start.isoformat()}' + cast(i // {per_day} as integer) as usage_day,
            cast(h2 % 24 as integer) as usage_hour,
            cast(h2 % {USAGE_ACCOUNTS} as integer) as account_no,
            cast(h4 % {len(TEAMS)} as integer) as team_no,
            cast(h4 % {PROJECTS} as integer) as project_no,
            cast(h3 % {len(REGIONS)} as integer) as region_no,
            {gpu_index} as gpu_no,
            cast(h3 % {len(CPU_TYPES)} as integer) as cpu_no,
            (h1 // 100) % 5 = 0 as spot
        from numbered
    ),
    priced as (
        select
            *,
            cast(usage_day as timestamp) + to_hours(usage_hour) as usage_start,
            case kind
                when 'gpu' then {_pick(gpu_names, "gpu_no")}
                when 'cpu' then {_pick(cpu_names, "cpu_no")}
            end as instance_type,
            case kind
                when 'gpu' then 1.0
                when 'cpu' then 1.0
                when 'ebs' then round(((h3 // 7) % 2000 + 8) / 720.0, 6)
                when 's3' then round(((h3 // 7) % 500000) / 1000.0 / 720.0, 6)
                else round(((h3 // 7) % 200000) / 1000.0, 6)
            end::DECIMAL(18,6) as usage_amount,
            case kind
                when 'gpu' then {_pick(gpu_rates, "gpu_no")} * (case when (h1 // 100) % 5 = 0 then 0.35 else 1 end)
                when 'cpu' then {_pick(cpu_rates, "cpu_no")}
                when 'ebs' then 0.08
                when 's3' then 0.023
                else 0.09
            end::DECIMAL(18,6) as unit_rate,
            case kind
                when 'gpu' then {_pick(gpu_rates, "gpu_no")}
                when 'cpu' then {_pick(cpu_rates, "cpu_no")}
                when 'ebs' then 0.08
                when 's3' then 0.023
                else 0.09
            end::DECIMAL(18,6) as public_rate,
            {_pick(regions, "region_no")} as region_code,
            {_pick(region_names, "region_no")} as region_name,
            {_pick(teams, "team_no")} as team,
            'project-' || lpad(cast(project_no as varchar), 2, '0') as project,
            '7711' || lpad(cast(1000000 + account_no as varchar), 8, '0') as usage_account_id,
            'bench-account-' || lpad(cast(account_no as varchar), 2, '0') as usage_account_name,
            substr(md5(cast(i as varchar) || '/{seed}'), 1, 26) as line_item_id
        from kinds
    )
    select
        *,
        round(usage_amount * unit_rate, 10)::DECIMAL(18,10) as cost,
        round(usage_amount * public_rate, 10)::DECIMAL(18,10) as public_cost,
        date_trunc('month', usage_day)::TIMESTAMP as period_start,
        (date_trunc('month', usage_day) + interval 1 month)::TIMESTAMP as period_end
    from priced
    """


def _cur2_select(base: str) -> str:
    """CUR 2.0 columns (every one the demo export has, in its order) from the base rows."""
    usage_type = (
        "case kind when 'gpu' then region_prefix || case when spot then 'SpotUsage:' else 'BoxUsage:' end "
        "|| instance_type when 'cpu' then region_prefix || 'BoxUsage:' || instance_type "
        "when 'ebs' then region_prefix || 'EBS:VolumeUsage.gp3' when 's3' then region_prefix || 'TimedStorage-ByteHrs' "
        "else region_prefix || 'DataTransfer-Out-Bytes' end"
    )
    values = {
        "bill_bill_type": "'Anniversary'",
        "bill_billing_entity": "'AWS'",
        "bill_billing_period_end_date": "period_end::TIMESTAMPTZ",
        "bill_billing_period_start_date": "period_start::TIMESTAMPTZ",
        "bill_invoicing_entity": "'Amazon Web Services, Inc.'",
        "bill_payer_account_id": f"'{PAYER_ID}'",
        "bill_payer_account_name": f"'{PAYER_NAME}'",
        "cost_category": "map(['team_group'], [case when team in ('research', 'vision', 'speech') then 'R&D' "
        "else 'Product' end])",
        "identity_line_item_id": "line_item_id",
        "identity_time_interval": "strftime(usage_start, '%Y-%m-%dT%H:%M:%SZ') || '/' || "
        "strftime(usage_start + interval 1 hour, '%Y-%m-%dT%H:%M:%SZ')",
        "line_item_availability_zone": "case when kind in ('gpu', 'cpu', 'ebs') then region_code || 'a' end",
        "line_item_blended_cost": "cost::DOUBLE",
        "line_item_blended_rate": "cast(unit_rate as varchar)",
        "line_item_currency_code": "'USD'",
        "line_item_legal_entity": "'Amazon Web Services, Inc.'",
        "line_item_line_item_description": "case kind when 'gpu' then '$' || cast(unit_rate as varchar) || "
        "' per ' || case when spot then 'Spot ' else 'On Demand ' end || 'Linux ' || instance_type || "
        "' Instance Hour' when 'cpu' then '$' || cast(unit_rate as varchar) || ' per On Demand Linux ' || "
        "instance_type || ' Instance Hour' when 'ebs' then '$0.08 per GB-month of General Purpose (gp3) "
        "provisioned storage' when 's3' then '$0.023 per GB - first 50 TB / month of storage used' "
        "else '$0.09 per GB - first 10 TB / month data transfer out' end",
        "line_item_line_item_type": "'Usage'",
        "line_item_net_unblended_cost": "cost::DOUBLE",
        "line_item_net_unblended_rate": "cast(unit_rate as varchar)",
        "line_item_normalization_factor": "case when kind in ('gpu', 'cpu') then 8.0::DOUBLE end",
        "line_item_normalized_usage_amount": "case when kind in ('gpu', 'cpu') then (usage_amount * 8)::DOUBLE end",
        "line_item_operation": "case kind when 'gpu' then 'RunInstances' when 'cpu' then 'RunInstances' "
        "when 'ebs' then 'CreateVolume-Gp3' when 's3' then 'StandardStorage' else 'GetObject' end",
        "line_item_product_code": "case when kind in ('gpu', 'cpu', 'ebs') then 'AmazonEC2' when kind = 's3' "
        "then 'AmazonS3' else 'AWSDataTransfer' end",
        "line_item_resource_id": "case kind when 'gpu' then 'i-0' || lpad(format('{:x}', h4 % 600), 16, '0') "
        "when 'cpu' then 'i-1' || lpad(format('{:x}', h4 % 20000), 16, '0') "
        "when 'ebs' then 'vol-0' || lpad(format('{:x}', h4 % 30000), 16, '0') "
        "when 's3' then 'bench-bucket-' || cast(h4 % 300 as varchar) end",
        "line_item_tax_type": "null",
        "line_item_unblended_cost": "cost::DOUBLE",
        "line_item_unblended_rate": "cast(unit_rate as varchar)",
        "line_item_usage_account_id": "usage_account_id",
        "line_item_usage_account_name": "usage_account_name",
        "line_item_usage_amount": "usage_amount::DOUBLE",
        "line_item_usage_end_date": "(usage_start + interval 1 hour)::TIMESTAMPTZ",
        "line_item_usage_start_date": "usage_start::TIMESTAMPTZ",
        "line_item_usage_type": usage_type,
        "pricing_currency": "'USD'",
        "pricing_public_on_demand_cost": "public_cost::DOUBLE",
        "pricing_public_on_demand_rate": "cast(public_rate as varchar)",
        "pricing_purchase_option": "case when kind = 'gpu' and spot then 'Spot' else 'On Demand' end",
        "pricing_rate_code": "upper(substr(md5(usage_type_text), 1, 16)) || '.JRTCKXETXF.6YS6EN2CT7'",
        "pricing_rate_id": "cast(h3 % 90000000 as varchar)",
        "pricing_term": "case when kind = 'gpu' and spot then 'Spot' else 'OnDemand' end",
        "pricing_unit": "case when kind in ('gpu', 'cpu') then 'Hrs' when kind in ('ebs', 's3') then 'GB-Mo' "
        "else 'GB' end",
        "product": "map(['region', 'servicename', 'instance_type'], [region_code, case when kind = 's3' "
        "then 'Amazon Simple Storage Service' else 'Amazon Elastic Compute Cloud' end, "
        "coalesce(instance_type, '')])",
        "product_instance_family": "case when kind = 'gpu' then 'Accelerated Computing' when kind = 'cpu' "
        "then 'General purpose' end",
        "product_instance_type": "instance_type",
        "product_location": "region_name",
        "product_location_type": "'AWS Region'",
        "product_operation": "case when kind in ('gpu', 'cpu') then 'RunInstances' end",
        "product_pricing_unit": "null",
        "product_product_family": "case kind when 'gpu' then 'Compute Instance' when 'cpu' then 'Compute Instance' "
        "when 'ebs' then 'Storage' when 's3' then 'Storage' else 'Data Transfer' end",
        "product_region_code": "region_code",
        "product_servicecode": "case when kind in ('gpu', 'cpu', 'ebs') then 'AmazonEC2' when kind = 's3' "
        "then 'AmazonS3' else 'AWSDataTransfer' end",
        "product_sku": "upper(substr(md5(usage_type_text), 1, 16))",
        "product_usagetype": usage_type,
        "resource_tags": "map(['user_team', 'user_project'], [team, project])",
    }
    types = {"string": "VARCHAR", "double": "DOUBLE", "timestamp": "TIMESTAMPTZ"}
    columns = []
    for name, kind in CUR2_COLUMNS:
        if name in values:
            columns.append(f"{values[name]} as {name}")
        elif kind == "map<string,string>":
            columns.append(f"cast(null as MAP(VARCHAR, VARCHAR)) as {name}")
        elif kind == "map<string,double>":
            columns.append(f"cast(null as MAP(VARCHAR, DOUBLE)) as {name}")
        else:
            columns.append(f"cast(null as {types[kind]}) as {name}")
    region_prefix = "case region_code when 'us-east-1' then '' when 'us-west-2' then 'USW2-' else 'EU-' end"
    return f"""
    with base as ({base}),
    typed as (
        select *, {region_prefix} as region_prefix from base
    ),
    labelled as (
        select *, {usage_type} as usage_type_text from typed
    )
    select {", ".join(columns)} from labelled
    """


def write_cur2(
    out: Path,
    *,
    rows: int,
    seed: int = 42,
    start: date = DEFAULT_START,
    days: int = DEFAULT_DAYS,
    last_month_only: bool = False,
) -> list[Written]:
    """CUR 2.0 Data Exports holding `rows` line items over `days` days: one delivery folder per billing period."""
    return _write_months(
        out / "cur2", rows=rows, seed=seed, start=start, days=days, writer=_cur2_month, last_month_only=last_month_only
    )


def _write_months(
    out: Path, *, rows: int, seed: int, start: date, days: int, writer, last_month_only: bool
) -> list[Written]:
    """Every billing month's delivery, or only the last one's (a daily refresh of the month to date)."""
    if rows < days:
        raise ValueError(f"--rows {rows} is fewer than one line item per day over {days} days")
    per_day = rows // days
    months = months_of(start, days)
    written = []
    with duckdb.connect() as con:
        con.execute("SET preserve_insertion_order = true; SET threads = 2; SET TimeZone = 'UTC'")
        for label, first_day, day_count in months[-1:] if last_month_only else months:
            first = first_day * per_day
            last = (first_day + day_count) * per_day
            written.append(writer(con, out, label, first, last, seed=seed, start=start, per_day=per_day))
    return written


def _cur2_month(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    label: str,
    first: int,
    last: int,
    *,
    seed: int,
    start: date,
    per_day: int,
) -> Written:
    root = out / label
    period = f"BILLING_PERIOD={label}"
    data_dir = root / EXPORT / "data" / period
    data_dir.mkdir(parents=True, exist_ok=True)
    data_files = []
    for part, chunk_first in enumerate(range(first, last, ROWS_PER_PART), start=1):
        chunk_last = min(chunk_first + ROWS_PER_PART, last)
        name = f"{EXPORT}-{part:05d}.snappy.parquet"
        sql = _cur2_select(_base_sql(seed, start, per_day, chunk_first, chunk_last))
        con.execute(f"COPY ({sql}) TO {_quote(str(data_dir / name))} (FORMAT parquet, COMPRESSION snappy)")
        data_files.append(f"s3://{CUR2_BUCKET}/{CUR2_PREFIX}/{EXPORT}/data/{period}/{name}")
    manifest = {
        "executionId": f"bench-{seed}-{label}-{last - first}",
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:{PAYER_ID}:export/{EXPORT}",
        "exportName": EXPORT,
        "table": "COST_AND_USAGE_REPORT",
        "billingPeriod": label,
        "columns": [{"name": name, "type": kind} for name, kind in CUR2_COLUMNS],
        "dataFiles": data_files,
        "additionalOutputFiles": [],
    }
    manifest_path = root / EXPORT / "metadata" / period / f"{EXPORT}-Manifest.json"
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return Written("aws_cur", root, last - first, label)


def _focus_select(base: str) -> str:
    """FOCUS 1.2 columns (an AWS-style FOCUS export) from the base rows; columns left out are optional."""
    return f"""
    with base as ({base})
    select
        case when kind in ('gpu', 'cpu', 'ebs') then region_code || 'a' end as AvailabilityZone,
        cost::DOUBLE as BilledCost,
        '{PAYER_ID}' as BillingAccountId,
        '{PAYER_NAME}' as BillingAccountName,
        'Billing Account' as BillingAccountType,
        'USD' as BillingCurrency,
        period_end::TIMESTAMPTZ as BillingPeriodEnd,
        period_start::TIMESTAMPTZ as BillingPeriodStart,
        'Usage' as ChargeCategory,
        cast(null as VARCHAR) as ChargeClass,
        case when kind in ('gpu', 'cpu') then instance_type || ' instance-hour'
             when kind = 'ebs' then 'EBS gp3 storage' when kind = 's3' then 'S3 Standard storage'
             else 'Data transfer out' end as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        (usage_start + interval 1 hour)::TIMESTAMPTZ as ChargePeriodEnd,
        usage_start::TIMESTAMPTZ as ChargePeriodStart,
        usage_amount::DOUBLE as ConsumedQuantity,
        case when kind in ('gpu', 'cpu') then 'Hours' when kind = 'transfer' then 'GB' else 'GB-Month' end
            as ConsumedUnit,
        cost::DOUBLE as ContractedCost,
        unit_rate::DOUBLE as ContractedUnitPrice,
        cost::DOUBLE as EffectiveCost,
        'Amazon Web Services, Inc.' as InvoiceIssuerName,
        public_cost::DOUBLE as ListCost,
        public_rate::DOUBLE as ListUnitPrice,
        case when kind = 'gpu' and spot then 'Dynamic' else 'Standard' end as PricingCategory,
        usage_amount::DOUBLE as PricingQuantity,
        case when kind in ('gpu', 'cpu') then 'Hours' when kind = 'transfer' then 'GB' else 'GB-Month' end
            as PricingUnit,
        'AWS' as ProviderName,
        'AWS' as PublisherName,
        region_code as RegionId,
        region_name as RegionName,
        'i-' || lpad(format('{{:x}}', h4 % 20000), 17, '0') as ResourceId,
        case when kind in ('gpu', 'cpu') then 'Instance' when kind = 'ebs' then 'Volume'
             when kind = 's3' then 'Bucket' end as ResourceType,
        case when kind in ('gpu', 'cpu') then 'Compute' when kind = 'transfer' then 'Networking'
             else 'Storage' end as ServiceCategory,
        case when kind in ('gpu', 'cpu', 'ebs') then 'Amazon Elastic Compute Cloud'
             when kind = 's3' then 'Amazon Simple Storage Service' else 'AWS Data Transfer' end as ServiceName,
        upper(substr(md5(kind || coalesce(instance_type, '') || region_code), 1, 16)) as SkuId,
        case when kind in ('gpu', 'cpu') then map(['InstanceType'], [instance_type]) end as SkuPriceDetails,
        usage_account_id as SubAccountId,
        usage_account_name as SubAccountName,
        'Account' as SubAccountType,
        map(['team', 'project'], [team, project]) as Tags
    from base
    """


def write_focus(
    out: Path,
    *,
    rows: int,
    seed: int = 42,
    start: date = DEFAULT_START,
    days: int = DEFAULT_DAYS,
    last_month_only: bool = False,
) -> list[Written]:
    """FOCUS 1.2 Parquet holding `rows` line items: one delivery folder of part files per billing period."""
    return _write_months(
        out / "focus",
        rows=rows,
        seed=seed,
        start=start,
        days=days,
        writer=_focus_month,
        last_month_only=last_month_only,
    )


def _focus_month(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    label: str,
    first: int,
    last: int,
    *,
    seed: int,
    start: date,
    per_day: int,
) -> Written:
    root = out / label
    root.mkdir(parents=True, exist_ok=True)
    for part, chunk_first in enumerate(range(first, last, ROWS_PER_PART), start=1):
        sql = _focus_select(_base_sql(seed, start, per_day, chunk_first, min(chunk_first + ROWS_PER_PART, last)))
        target = root / f"focus-{label}-{part:05d}.parquet"
        con.execute(f"COPY ({sql}) TO {_quote(str(target))} (FORMAT parquet, COMPRESSION snappy)")
    return Written("focus", root, last - first, label)


AZURE_GPU_SIZES = (
    "Standard_ND96isr_H100_v5",
    "Standard_ND96amsr_A100_v4",
    "Standard_NC24ads_A100_v4",
    "Standard_NC4as_T4_v3",
)
AZURE_CPU_SIZES = ("Standard_D2s_v5", "Standard_D8s_v5", "Standard_E4s_v5", "Standard_F16s_v2")


def _azure_select(base: str) -> str:
    """Azure EA cost details (actual cost) columns from the base rows, one line per resource-hour as a day row."""
    gpu_sizes = [_quote(size) for size in AZURE_GPU_SIZES]
    cpu_sizes = [_quote(size) for size in AZURE_CPU_SIZES]
    return f"""
    with base as ({base}),
    sized as (
        select *,
            case kind when 'gpu' then {_pick(gpu_sizes, "gpu_no")} when 'cpu' then {_pick(cpu_sizes, "cpu_no")} end
                as vm_size
        from base
    )
    select
        'bench-ea-section' as InvoiceSectionName,
        'Bench EA account' as AccountName,
        strftime(usage_day, '%Y-%m-%d') as "Date",
        '{PAYER_ID[:7]}' as BillingAccountId,
        'Bench Azure EA' as BillingAccountName,
        strftime(period_start, '%Y-%m-%d') as BillingPeriodStartDate,
        strftime(period_end - interval 1 day, '%Y-%m-%d') as BillingPeriodEndDate,
        md5(usage_account_id)::UUID::VARCHAR as SubscriptionId,
        usage_account_name as SubscriptionName,
        'rg-' || team as ResourceGroup,
        case region_code when 'us-east-1' then 'eastus' when 'us-west-2' then 'westus2' else 'westeurope' end
            as ResourceLocation,
        case when kind in ('gpu', 'cpu') then 'Virtual Machines' when kind = 'transfer' then 'Bandwidth'
             else 'Storage' end as MeterCategory,
        case when kind in ('gpu', 'cpu') then vm_size || ' Series' else 'Standard' end as MeterSubCategory,
        case when kind in ('gpu', 'cpu') then replace(vm_size, 'Standard_', '') || case when spot and kind = 'gpu'
             then ' Spot' else '' end when kind = 'transfer' then 'Data Transfer Out' else 'LRS Data Stored' end
            as MeterName,
        case when kind in ('gpu', 'cpu') then '1 Hour' else '1 GB' end as UnitOfMeasure,
        cast(usage_amount as varchar) as Quantity,
        cast(unit_rate as varchar) as EffectivePrice,
        cast(unit_rate as varchar) as UnitPrice,
        cast(public_rate as varchar) as PayGPrice,
        cast(cost as varchar) as CostInBillingCurrency,
        'USD' as BillingCurrencyCode,
        '/subscriptions/' || md5(usage_account_id)::UUID::VARCHAR || '/resourceGroups/rg-' || team
            || '/providers/Microsoft.Compute/virtualMachines/vm-' || cast(h4 % 20000 as varchar) as ResourceId,
        '{{"team": "' || team || '", "project": "' || project || '"}}' as Tags,
        case when kind in ('gpu', 'cpu') then '{{"ServiceType": "' || vm_size || '"}}' end as AdditionalInfo,
        'Usage' as ChargeType,
        'UsageBased' as Frequency,
        case when kind = 'gpu' and spot then 'Spot' else 'OnDemand' end as PricingModel,
        'Azure' as PublisherType
    from sized
    """


def write_azure(
    out: Path,
    *,
    rows: int,
    seed: int = 42,
    start: date = DEFAULT_START,
    days: int = DEFAULT_DAYS,
    last_month_only: bool = False,
) -> list[Written]:
    """Azure EA cost details CSV holding `rows` line items: one file per billing period."""
    return _write_months(
        out / "azure",
        rows=rows,
        seed=seed,
        start=start,
        days=days,
        writer=_azure_month,
        last_month_only=last_month_only,
    )


def _azure_month(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    label: str,
    first: int,
    last: int,
    *,
    seed: int,
    start: date,
    per_day: int,
) -> Written:
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"azure-actual-cost-{label}.csv"
    sql = _azure_select(_base_sql(seed, start, per_day, first, last))
    con.execute(f"COPY ({sql}) TO {_quote(str(target))} (FORMAT csv, HEADER)")
    return Written("azure_actual", target, last - first, label)
