{#-
    GPU spend per day: only cost lines on a known GPU instance type, one row per charge date,
    billing period, provider, billing account, sub account, region, GPU model, instance type,
    pricing category, charge category, team, project and billing currency. Amounts are also shown
    in the reporting currency at the ECB rate of the charge day (null when no rate is loaded).

    Incremental by billing period: a run rebuilds the billing periods whose cost lines were rebuilt
    (int_billing__cost_lines.x_built_at) after this table last summed them (cost_lines_built_at),
    and replaces them whole, emptying them first (a period restated without GPU lines has no new rows to
    replace the old ones by). See int_billing__cost_lines for when a full refresh is needed.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    pre_hook="{{ clear_billing_periods_to_rebuild() }}",
    **replace_periods('billing_period_start')
) }}

{%- set incremental = incremental_with_columns(['cost_lines_built_at']) %}

{%- set grain = [
    'charge_date', 'billing_period_start', 'provider_name', 'billing_account_id', 'sub_account_id',
    'region_id', 'gpu_model', 'instance_type', 'pricing_category', 'charge_category', 'team', 'project',
    'billing_currency',
] -%}

with

gpu_cost_lines as (

    select * from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
    {%- if incremental %}
        and BillingPeriodStart in ({{ billing_periods_to_rebuild() }})
    {%- endif %}

),

daily as (

    select
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date) as charge_date,
        BillingPeriodStart as billing_period_start,
        ProviderName as provider_name,
        BillingAccountId as billing_account_id,
        SubAccountId as sub_account_id,
        RegionId as region_id,
        x_gpu_model as gpu_model,
        x_instance_type as instance_type,
        PricingCategory as pricing_category,
        ChargeCategory as charge_category,
        x_team as team,
        x_project as project,
        BillingCurrency as billing_currency,
        sum(x_gpu_hours) as gpu_hours,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost,
        sum(ListCost) as list_cost,
        count(*) as cost_line_count,
        max(x_built_at) as cost_lines_built_at
    from gpu_cost_lines
    group by
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date),
        BillingPeriodStart,
        ProviderName,
        BillingAccountId,
        SubAccountId,
        RegionId,
        x_gpu_model,
        x_instance_type,
        PricingCategory,
        ChargeCategory,
        x_team,
        x_project,
        BillingCurrency

),

fx as (

    select rate_day, from_currency, rate
    from {{ ref('int_fx__daily_rates') }}
    where to_currency = '{{ reporting_currency() }}'

),

converted as (

    select
        daily.*,
        -- no rate needed, and none may be loaded, when the bill is already in the reporting currency
        case
            when daily.billing_currency = '{{ reporting_currency() }}' then cast(1 as decimal(38, 12))
            else fx.rate
        end as fx_rate
    from daily
    left join fx
        on daily.charge_date = fx.rate_day
        and daily.billing_currency = fx.from_currency

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_spend_daily_key,
        charge_date,
        cast(billing_period_start as timestamp) as billing_period_start,
        provider_name,
        billing_account_id,
        sub_account_id,
        region_id,
        gpu_model,
        instance_type,
        pricing_category,
        charge_category,
        team,
        project,
        billing_currency,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(billed_cost as decimal(38, 12)) as billed_cost,
        cast(effective_cost as decimal(38, 12)) as effective_cost,
        cast(list_cost as decimal(38, 12)) as list_cost,
        {{ per_gpu_hour('effective_cost', 'gpu_hours', 6) }} as effective_cost_per_gpu_hour,
        '{{ reporting_currency() }}' as reporting_currency,
        cast(fx_rate as decimal(38, 12)) as reporting_fx_rate,
        {{ decimal_product(['billed_cost', 'fx_rate']) }} as billed_cost_reporting,
        {{ decimal_product(['effective_cost', 'fx_rate']) }} as effective_cost_reporting,
        {{ decimal_product(['list_cost', 'fx_rate']) }} as list_cost_reporting,
        cast(cost_line_count as bigint) as cost_line_count,
        cast(cost_lines_built_at as timestamp) as cost_lines_built_at,
        {{ this_run_started_at() }} as built_at
    from converted

)

select * from final
