{#-
    All spend per day: one row per charge date, billing period, provider, billing account,
    sub account, service category, charge category and billing currency.
    A charge counts on the date its charge period starts (multi-day charges are not spread),
    so every amount is an exact sum of cost lines and the table reconciles to the invoice.

    Incremental by billing period: a run rebuilds the billing periods whose cost lines were rebuilt
    (int_billing__cost_lines.x_built_at) after this table last summed them (cost_lines_built_at),
    and replaces them whole. See int_billing__cost_lines for when a full refresh is needed.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    **replace_periods('billing_period_start')
) }}

{%- set incremental = incremental_with_columns(['cost_lines_built_at']) %}

{%- set grain = [
    'charge_date', 'billing_period_start', 'provider_name', 'billing_account_id', 'sub_account_id',
    'sub_account_name', 'service_category', 'charge_category', 'billing_currency',
] -%}

with

cost_lines as (

    select * from {{ ref('int_billing__cost_lines') }}
    {%- if incremental %}
    where BillingPeriodStart in ({{ billing_periods_to_rebuild() }})
    {%- endif %}

),

daily as (

    select
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date) as charge_date,
        BillingPeriodStart as billing_period_start,
        ProviderName as provider_name,
        BillingAccountId as billing_account_id,
        SubAccountId as sub_account_id,
        SubAccountName as sub_account_name,
        ServiceCategory as service_category,
        ChargeCategory as charge_category,
        BillingCurrency as billing_currency,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost,
        sum(ListCost) as list_cost,
        sum(ContractedCost) as contracted_cost,
        sum(case when x_gpu_model is not null then BilledCost else 0 end) as gpu_billed_cost,
        sum(case when x_gpu_model is not null then EffectiveCost else 0 end) as gpu_effective_cost,
        sum(x_gpu_hours) as gpu_hours,
        count(*) as cost_line_count,
        max(x_built_at) as cost_lines_built_at
    from cost_lines
    group by
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date),
        BillingPeriodStart,
        ProviderName,
        BillingAccountId,
        SubAccountId,
        SubAccountName,
        ServiceCategory,
        ChargeCategory,
        BillingCurrency

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as cost_daily_key,
        charge_date,
        cast(billing_period_start as timestamp) as billing_period_start,
        provider_name,
        billing_account_id,
        sub_account_id,
        sub_account_name,
        service_category,
        charge_category,
        billing_currency,
        cast(billed_cost as decimal(38, 12)) as billed_cost,
        cast(effective_cost as decimal(38, 12)) as effective_cost,
        cast(list_cost as decimal(38, 12)) as list_cost,
        cast(contracted_cost as decimal(38, 12)) as contracted_cost,
        cast(gpu_billed_cost as decimal(38, 12)) as gpu_billed_cost,
        cast(gpu_effective_cost as decimal(38, 12)) as gpu_effective_cost,
        cast(coalesce(gpu_hours, 0) as decimal(38, 12)) as gpu_hours,
        cast(cost_line_count as bigint) as cost_line_count,
        cast(cost_lines_built_at as timestamp) as cost_lines_built_at,
        {{ this_run_started_at() }} as built_at
    from daily

)

select * from final
