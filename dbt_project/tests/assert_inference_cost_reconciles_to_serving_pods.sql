{#-
    Cost per million tokens must hold the serving pods' whole GPU cost: per day and billing currency, the allocation
    cost of fct_inference_cost_per_million_tokens equals the allocated cost of the chargeback's pods that served
    tokens that day (fct_gpu_cost_allocation_daily) to the cent. Returns the days that differ.
-#}

with

serving_pods as (

    select distinct usage_date, namespace, pod from {{ ref('int_serving__token_increases_hourly') }}

),

chargeback as (

    select allocation.usage_date, allocation.billing_currency, sum(allocation.allocated_cost) as allocated_cost
    from {{ ref('fct_gpu_cost_allocation_daily') }} as allocation
    inner join serving_pods
        on allocation.usage_date = serving_pods.usage_date
        and allocation.namespace = serving_pods.namespace
        and allocation.pod = serving_pods.pod
    where allocation.allocation_type = 'pod'
    group by allocation.usage_date, allocation.billing_currency

),

inference as (

    select usage_date, billing_currency, sum(allocation_cost) as allocation_cost
    from {{ ref('fct_inference_cost_per_million_tokens') }}
    where billing_currency is not null
    group by usage_date, billing_currency

)

select
    coalesce(inference.usage_date, chargeback.usage_date) as usage_date,
    coalesce(inference.billing_currency, chargeback.billing_currency) as billing_currency,
    inference.allocation_cost,
    chargeback.allocated_cost
from inference
full outer join chargeback
    on inference.usage_date = chargeback.usage_date
    and inference.billing_currency = chargeback.billing_currency
where inference.allocation_cost is distinct from chargeback.allocated_cost
