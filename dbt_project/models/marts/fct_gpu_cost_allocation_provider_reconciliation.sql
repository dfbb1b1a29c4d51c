{#-
    Our Kubernetes chargeback against the provider's own split, per node (AWS: the parent EC2 instance id) and day:
    one row per pod either side names, matched on namespace and pod, and one `unallocated` row per node and day
    pairing our unallocated row (with the node's idle MIG slices, which are unused capacity too) with AWS's unused
    cost, each with both amounts and their difference; every row also
    carries the node's totals (our bill-based node cost, AWS's split plus unused) and their difference, so a gap
    between AWS's split and the bill is shown on the node, not absorbed. Only the nodes and days AWS splits
    (int_gpu_allocation__aws_split_daily); a pod only one side names has the other side's amount null.

    Our side is fct_gpu_cost_allocation_daily as built: with the default allocation source (telemetry) the
    differences are where our GPU-hours measurement and AWS's CPU/memory/GPU split disagree; with
    `kubernetes_allocation_source: aws_split` only the cent rounding and the gap between AWS's split and the bill
    remain (allocation_source says which).
-#}

{%- set grain = [
    'matched.usage_date', 'matched.resource_id', 'matched.billing_currency', 'matched.allocation_type',
    'matched.namespace', 'matched.pod',
] -%}

with

aws_split as (

    select
        usage_date,
        resource_id,
        billing_currency,
        case when allocation_type = 'unused' then 'unallocated' else allocation_type end as allocation_type,
        namespace,
        pod,
        cluster_name,
        allocated_cost,
        gpu_split_usage
    from {{ ref('int_gpu_allocation__aws_split_daily') }}

),

split_node_days as (

    select
        usage_date,
        resource_id,
        billing_currency,
        max(cluster_name) as cluster_name,
        sum(allocated_cost) as node_aws_split_cost
    from aws_split
    group by usage_date, resource_id, billing_currency

),

-- our rows of those node-days; idle MIG slices are unused capacity, so they join our unallocated row
chargeback as (

    select
        allocation.usage_date,
        allocation.resource_id,
        allocation.billing_currency,
        case when allocation.allocation_type = 'idle_mig_slice' then 'unallocated' else allocation.allocation_type end
            as allocation_type,
        allocation.namespace,
        allocation.pod,
        max(allocation.team) as team,
        max(allocation.allocation_source) as allocation_source,
        sum(allocation.gpu_hours) as gpu_hours,
        sum(allocation.allocated_cost) as allocated_cost,
        max(allocation.node_effective_cost) as node_effective_cost
    from {{ ref('fct_gpu_cost_allocation_daily') }} as allocation
    inner join split_node_days
        on allocation.usage_date = split_node_days.usage_date
        and allocation.resource_id = split_node_days.resource_id
        and allocation.billing_currency = split_node_days.billing_currency
    group by
        allocation.usage_date,
        allocation.resource_id,
        allocation.billing_currency,
        case when allocation.allocation_type = 'idle_mig_slice' then 'unallocated' else allocation.allocation_type end,
        allocation.namespace,
        allocation.pod

),

node_costs as (

    select usage_date, resource_id, billing_currency, max(node_effective_cost) as node_effective_cost
    from chargeback
    group by usage_date, resource_id, billing_currency

),

matched as (

    select
        coalesce(chargeback.usage_date, aws_split.usage_date) as usage_date,
        coalesce(chargeback.resource_id, aws_split.resource_id) as resource_id,
        coalesce(chargeback.billing_currency, aws_split.billing_currency) as billing_currency,
        coalesce(chargeback.allocation_type, aws_split.allocation_type) as allocation_type,
        coalesce(chargeback.namespace, aws_split.namespace) as namespace,
        coalesce(chargeback.pod, aws_split.pod) as pod,
        chargeback.team,
        chargeback.allocation_source,
        chargeback.gpu_hours,
        aws_split.gpu_split_usage as aws_gpu_split_usage,
        chargeback.allocated_cost,
        aws_split.allocated_cost as aws_allocated_cost,
        case
            when chargeback.allocation_type is null then 'aws_only'
            when aws_split.allocation_type is null then 'chargeback_only'
            else 'matched'
        end as match_status
    from chargeback
    full outer join aws_split
        on chargeback.usage_date = aws_split.usage_date
        and chargeback.resource_id = aws_split.resource_id
        and chargeback.billing_currency = aws_split.billing_currency
        and chargeback.allocation_type = aws_split.allocation_type
        and coalesce(chargeback.namespace, '') = coalesce(aws_split.namespace, '')
        and coalesce(chargeback.pod, '') = coalesce(aws_split.pod, '')

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_cost_allocation_provider_reconciliation_key,
        matched.usage_date,
        'AWS' as split_provider,
        matched.resource_id,
        split_node_days.cluster_name,
        matched.billing_currency,
        matched.allocation_type,
        matched.namespace,
        matched.pod,
        matched.team,
        matched.match_status,
        matched.allocation_source,
        cast(matched.gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(matched.aws_gpu_split_usage as decimal(38, 12)) as aws_gpu_split_usage,
        cast(matched.allocated_cost as decimal(38, 12)) as allocated_cost,
        cast(matched.aws_allocated_cost as decimal(38, 12)) as aws_allocated_cost,
        cast(coalesce(matched.allocated_cost, 0) - coalesce(matched.aws_allocated_cost, 0) as decimal(38, 12))
            as cost_difference,
        cast(node_costs.node_effective_cost as decimal(38, 12)) as node_effective_cost,
        cast(split_node_days.node_aws_split_cost as decimal(38, 12)) as node_aws_split_cost,
        cast(node_costs.node_effective_cost - split_node_days.node_aws_split_cost as decimal(38, 12))
            as node_cost_difference
    from matched
    inner join split_node_days
        on matched.usage_date = split_node_days.usage_date
        and matched.resource_id = split_node_days.resource_id
        and matched.billing_currency = split_node_days.billing_currency
    left join node_costs
        on matched.usage_date = node_costs.usage_date
        and matched.resource_id = node_costs.resource_id
        and matched.billing_currency = node_costs.billing_currency

)

select * from final
