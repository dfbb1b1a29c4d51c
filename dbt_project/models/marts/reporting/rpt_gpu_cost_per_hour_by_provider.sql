{#-
    What one GPU-hour cost us per provider and billing currency, all GPU models together (the CLI
    summary's table), ranked by spend within the currency.
-#}

with

spend as (

    select
        provider_name,
        billing_currency,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from {{ ref('fct_gpu_spend_daily') }}
    group by provider_name, billing_currency

)

select
    cast(provider_name as string) as provider_name,
    cast(billing_currency as string) as billing_currency,
    cast(effective_cost as decimal(38, 12)) as effective_cost,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    {{ per_gpu_hour('effective_cost', 'gpu_hours', 12) }} as cost_per_gpu_hour
from spend
