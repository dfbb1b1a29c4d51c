{#-
    The chargeback must hold the node's whole GPU bill: per node, day and billing currency, the allocated cost of
    the pods plus the unallocated row equals the bill's effective cost of the node (fct_gpu_utilization_daily)
    exactly, and every node and day has exactly one unallocated row. Returns the nodes and days that differ.
-#}

with

allocation as (

    select
        usage_date,
        resource_id,
        billing_currency,
        sum(allocated_cost) as allocated_cost,
        sum(case when allocation_type = 'unallocated' then 1 else 0 end) as unallocated_rows
    from {{ ref('fct_gpu_cost_allocation_daily') }}
    group by usage_date, resource_id, billing_currency

),

billed as (

    select usage_date, resource_id, billing_currency, sum(effective_cost) as effective_cost
    from {{ ref('fct_gpu_utilization_daily') }}
    where effective_cost is not null
        -- every node whose telemetry ever carried a pod label
        and resource_id in (select resource_id from {{ ref('int_gpu_allocation__pod_hourly') }})
    group by usage_date, resource_id, billing_currency

)

select
    coalesce(allocation.usage_date, billed.usage_date) as usage_date,
    coalesce(allocation.resource_id, billed.resource_id) as resource_id,
    coalesce(allocation.billing_currency, billed.billing_currency) as billing_currency,
    allocation.allocated_cost,
    allocation.unallocated_rows,
    billed.effective_cost
from allocation
full outer join billed
    on allocation.usage_date = billed.usage_date
    and allocation.resource_id = billed.resource_id
    and allocation.billing_currency = billed.billing_currency
where allocation.allocated_cost is distinct from billed.effective_cost
    or allocation.unallocated_rows <> 1
