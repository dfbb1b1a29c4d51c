{#-
    What one GPU-hour cost us, per provider, GPU model and billing currency, over the whole history:
    effective cost ÷ GPU-hours of fct_gpu_spend_daily.
-#}

with

spend as (

    select
        provider_name,
        gpu_model,
        billing_currency,
        sum(effective_cost) as effective_cost,
        sum(billed_cost) as billed_cost,
        sum(gpu_hours) as gpu_hours
    from {{ ref('fct_gpu_spend_daily') }}
    group by provider_name, gpu_model, billing_currency

)

select
    cast(provider_name as string) as provider_name,
    cast(gpu_model as string) as gpu_model,
    cast(billing_currency as string) as billing_currency,
    cast(effective_cost as decimal(38, 12)) as effective_cost,
    cast(billed_cost as decimal(38, 12)) as billed_cost,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    {{ per_gpu_hour('effective_cost', 'gpu_hours', 12) }} as cost_per_gpu_hour
from spend
