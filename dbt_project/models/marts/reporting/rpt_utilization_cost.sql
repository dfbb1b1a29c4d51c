{#-
    The GPU spend of each billing currency split into the parts that add up to it (active, idle,
    unobserved, unused commitment cost), and what one effective GPU-hour cost.
-#}

with

per_currency as (

    select
        billing_currency,
        sum(effective_cost) as effective_cost,
        sum(active_cost) as active_cost,
        sum(idle_cost) as idle_cost,
        sum(unobserved_cost) as unobserved_cost,
        sum(unused_commitment_cost) as unused_commitment_cost,
        sum(idle_gpu_hours) as idle_gpu_hours,
        sum(effective_gpu_hours) as effective_gpu_hours
    from {{ ref('fct_gpu_utilization_daily') }}
    where billing_currency is not null
    group by billing_currency

)

select
    cast(billing_currency as string) as billing_currency,
    cast(effective_cost as decimal(38, 12)) as effective_cost,
    cast(active_cost as decimal(38, 12)) as active_cost,
    cast(idle_cost as decimal(38, 12)) as idle_cost,
    cast(unobserved_cost as decimal(38, 12)) as unobserved_cost,
    cast(unused_commitment_cost as decimal(38, 12)) as unused_commitment_cost,
    cast(idle_gpu_hours as decimal(38, 12)) as idle_gpu_hours,
    cast(effective_gpu_hours as decimal(38, 12)) as effective_gpu_hours,
    {{ decimal_divide('effective_cost', 'effective_gpu_hours', 12) }} as cost_per_effective_gpu_hour
from per_currency
