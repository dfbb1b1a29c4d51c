{#-
    The Kubernetes GPU chargeback for the report, over the whole history: per billing currency, team and
    namespace the GPU-hours held and the cost allocated (fct_gpu_cost_allocation_daily), the nodes' unallocated
    cost as its own row, and each row's share of the currency's Kubernetes GPU spend.
-#}

with

per_namespace as (

    select
        billing_currency,
        allocation_type,
        team,
        namespace,
        count(distinct pod) as pods,
        count(distinct resource_id) as nodes,
        sum(gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(allocated_cost) as allocated_cost
    from {{ ref('fct_gpu_cost_allocation_daily') }}
    group by billing_currency, allocation_type, team, namespace

),

shares as (

    select
        per_namespace.*,
        sum(allocated_cost) over (partition by billing_currency) as currency_cost
    from per_namespace

)

select
    cast(billing_currency as {{ dbt.type_string() }}) as billing_currency,
    cast(allocation_type as {{ dbt.type_string() }}) as allocation_type,
    cast(team as {{ dbt.type_string() }}) as team,
    cast(namespace as {{ dbt.type_string() }}) as namespace,
    cast(pods as bigint) as pods,
    cast(nodes as bigint) as nodes,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
    case when gpu_hours > 0 then {{ decimal_divide('active_gpu_hours', 'gpu_hours', 6) }} end as active_share,
    cast(allocated_cost as decimal(38, 12)) as allocated_cost,
    {{ decimal_divide('allocated_cost', 'currency_cost', 6) }} as cost_share
from shares
