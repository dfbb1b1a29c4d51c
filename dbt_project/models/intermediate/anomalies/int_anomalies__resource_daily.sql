{#-
    GPU effective cost per charge day, resource and pricing category, with the anomaly marts' series keys
    (provider, GPU model, team, billing currency): the one place anomalies read cost lines, so a series and
    the resources that explain it always add up to the same money. A line without a resource id is keyed
    by its SKU; untagged lines belong to team '(untagged)'.

    Incremental by the charge day's month (usage_month): a run rebuilds the months whose GPU cost lines changed
    (int_gpu_usage__month_fingerprints), emptying them first, and leaves the others as they are.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    pre_hook="{{ clear_months_with_changed_inputs('cost_lines') }}",
    **replace_periods('usage_month')
) }}

{%- set incremental = incremental_by_usage_month() %}

with

{{ usage_month_rebuild_ctes('cost_lines', incremental) }}

daily as (

    select
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date) as charge_date,
        BillingCurrency as billing_currency,
        ProviderName as provider_name,
        x_gpu_model as gpu_model,
        coalesce(x_team, '(untagged)') as team,
        coalesce(ResourceId, SkuId, '(no resource id)') as resource_id,
        max(ResourceName) as resource_name,
        coalesce(PricingCategory, '(none)') as pricing_category,
        cast(sum(EffectiveCost) as decimal(38, 12)) as effective_cost,
        cast(sum(coalesce(x_gpu_hours, 0)) as decimal(38, 12)) as gpu_hours,
        count(*) as cost_line_count
    from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
    {%- if incremental %}
        and {{ in_months_to_rebuild('ChargePeriodStart') }}
    {%- endif %}
    group by
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date),
        BillingCurrency,
        ProviderName,
        x_gpu_model,
        coalesce(x_team, '(untagged)'),
        coalesce(ResourceId, SkuId, '(no resource id)'),
        coalesce(PricingCategory, '(none)')

)

select
    daily.*,
    {{ usage_month('daily.charge_date') }} as usage_month,
    fingerprints.inputs_fingerprint,
    {{ this_run_started_at() }} as built_at
from daily
left join fingerprints
    on {{ usage_month('daily.charge_date') }} = fingerprints.usage_month
