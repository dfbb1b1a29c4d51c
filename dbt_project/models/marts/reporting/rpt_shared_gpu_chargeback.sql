{#-
    The chargeback of shared GPUs for the report, over the whole history: per billing currency, team, rule and MIG
    profile the GPU-hours and cost of pods on MIG slices or time-sliced GPUs, and the idle MIG slices (and the
    unpartitioned rest of MIG GPUs) as the node owners' (fct_gpu_cost_allocation_daily's node_team), each row's
    share of the currency's shared-GPU cost. Whole GPUs held by one pod and the nodes' unallocated rows are left
    out: they are in rpt_gpu_cost_allocation.
-#}

with

shared as (

    select
        billing_currency,
        allocation_type,
        allocation_rule,
        mig_profile,
        case when allocation_type = 'idle_mig_slice' then node_team else team end as team,
        pod,
        resource_id,
        gpu_hours,
        active_gpu_hours,
        allocated_cost
    from {{ ref('fct_gpu_cost_allocation_daily') }}
    where allocation_type = 'idle_mig_slice'
        or (allocation_type = 'pod' and allocation_rule <> 'whole_gpu')

),

grouped as (

    select
        billing_currency,
        allocation_type,
        allocation_rule,
        mig_profile,
        team,
        count(distinct pod) as pods,
        count(distinct resource_id) as nodes,
        sum(gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(allocated_cost) as allocated_cost
    from shared
    group by billing_currency, allocation_type, allocation_rule, mig_profile, team

),

shares as (

    select
        grouped.*,
        sum(allocated_cost) over (partition by billing_currency) as currency_cost
    from grouped

)

select
    cast(billing_currency as {{ dbt.type_string() }}) as billing_currency,
    cast(allocation_type as {{ dbt.type_string() }}) as allocation_type,
    cast(allocation_rule as {{ dbt.type_string() }}) as allocation_rule,
    cast(mig_profile as {{ dbt.type_string() }}) as mig_profile,
    cast(team as {{ dbt.type_string() }}) as team,
    cast(pods as bigint) as pods,
    cast(nodes as bigint) as nodes,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
    case when gpu_hours > 0 then {{ decimal_divide('active_gpu_hours', 'gpu_hours', 6) }} end as active_share,
    cast(allocated_cost as decimal(38, 12)) as allocated_cost,
    {{ decimal_divide('allocated_cost', 'currency_cost', 6) }} as cost_share
from shares
