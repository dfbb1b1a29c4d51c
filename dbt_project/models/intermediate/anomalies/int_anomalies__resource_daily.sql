{#-
    GPU effective cost per charge day, resource and pricing category, with the anomaly marts' series keys
    (provider, GPU model, team, billing currency): the one place anomalies read cost lines, so a series and
    the resources that explain it always add up to the same money. A line without a resource id is keyed
    by its SKU; untagged lines belong to team '(untagged)'.
-#}

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
group by
    cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date),
    BillingCurrency,
    ProviderName,
    x_gpu_model,
    coalesce(x_team, '(untagged)'),
    coalesce(ResourceId, SkuId, '(no resource id)'),
    coalesce(PricingCategory, '(none)')
