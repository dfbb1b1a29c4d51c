{#-
    Kubernetes GPU chargeback: per day, billed node (resource), namespace and pod, the GPU-hours the pod held
    (int_gpu_allocation__pod_hourly) and the node's GPU cost of the day from the bill (fct_gpu_utilization_daily,
    which joins the telemetry to the billed resource) allocated by those GPU-hours, at the bill's own cost per
    provisioned GPU-hour. Each pod's cost is rounded to the cent (half away from zero); one `unallocated` row
    per node and day holds the GPU-hours no pod held (idle GPUs, GPUs without pod labels, hours without
    telemetry), the unused part of a commitment, and the rounding remainder, so allocated + unallocated = the
    node's effective_cost exactly. A node is a resource whose telemetry ever carried a pod label; each of its
    billed days has rows, with or without pods. Team: the namespace's in the seed kubernetes_namespace_teams,
    where the dbt var kubernetes_namespace_team_overrides replaces or adds mappings for one run, e.g.
    dbt build --select fct_gpu_cost_allocation_daily --vars '{kubernetes_namespace_team_overrides: {notebooks: research}}'
    Shared GPUs: a pod on a MIG slice holds the slice's share of the GPU (g/7 by default), pods time-slicing a
    GPU split its samples evenly; each pod row names its rule (allocation_rule) and slice profile (mig_profile).
    MIG slices no pod held and the unpartitioned rest of a MIG GPU (int_gpu_allocation__mig_idle_hourly) are
    `idle_mig_slice` rows, one per node, day and profile (the remainder's with mig_profile null), priced like
    the pods and left to the node's owner (node_team); the unallocated row still takes the remainder.

    Allocation source (dbt var kubernetes_allocation_source, the last CTEs): `telemetry` (the default) allocates
    every node as above; `aws_split` charges the pods of a node and day that AWS's split cost allocation data
    covers (int_gpu_allocation__aws_split_daily) what AWS's split charges them, rounded to the cent, with the
    GPU-hours the telemetry saw for the same pod, and leaves the rest of the node's bill (AWS's unused cost and
    any gap between AWS's split and the bill, shown by fct_gpu_cost_allocation_provider_reconciliation) on the
    unallocated row, so the node still adds up to its bill. Other nodes and days keep the telemetry allocation.
-#}

{%- set overrides = var('kubernetes_namespace_team_overrides', {}) or {} %}
{%- if overrides is not mapping %}
    {{ exceptions.raise_compiler_error("dbt var kubernetes_namespace_team_overrides: a mapping of namespace to team, e.g. {notebooks: research}") }}
{%- endif %}
{%- set allocation_source = var('kubernetes_allocation_source', 'telemetry') %}
{%- if allocation_source not in ('telemetry', 'aws_split') %}
    {{ exceptions.raise_compiler_error("dbt var kubernetes_allocation_source: telemetry or aws_split, not " ~ allocation_source) }}
{%- endif %}
{%- set grain = [
    'unioned.usage_date', 'unioned.resource_id', 'unioned.billing_currency', 'unioned.allocation_type',
    'unioned.namespace', 'unioned.pod', 'unioned.mig_profile',
] -%}

with

namespace_teams as (

    select namespace, team
    from {{ ref('kubernetes_namespace_teams') }}
    {%- if overrides %}
    where namespace not in (
        {%- for namespace in overrides %}'{{ namespace | string | replace("'", "''") }}'{{ ', ' if not loop.last }}{% endfor -%}
    )
    {%- for namespace, team in overrides.items() %}
    union all
    select '{{ namespace | string | replace("'", "''") }}' as namespace, '{{ team | string | replace("'", "''") }}' as team
    {%- endfor %}
    {%- endif %}

),

pod_hours as (

    select * from {{ ref('int_gpu_allocation__pod_hourly') }}

),

kubernetes_nodes as (

    select distinct resource_id from pod_hours where resource_id is not null

),

-- the node's GPU spend of the day, as fct_gpu_utilization_daily splits it from the bill
nodes as (

    select
        utilization.usage_date,
        utilization.resource_id,
        utilization.billing_currency,
        max(utilization.provider_name) as provider_name,
        max(utilization.host) as host,
        max(utilization.gpu_model) as gpu_model,
        max(utilization.team) as node_team,
        sum(utilization.provisioned_gpu_hours) as provisioned_gpu_hours,
        sum(utilization.active_gpu_hours) as active_gpu_hours,
        sum(utilization.effective_cost) as effective_cost,
        sum(utilization.effective_cost - utilization.unused_commitment_cost) as provisioned_cost
    from {{ ref('fct_gpu_utilization_daily') }} as utilization
    inner join kubernetes_nodes
        on utilization.resource_id = kubernetes_nodes.resource_id
    where utilization.effective_cost is not null
    group by utilization.usage_date, utilization.resource_id, utilization.billing_currency

),

pods as (

    select
        usage_date,
        resource_id,
        namespace,
        pod,
        count(distinct gpu_uuid) as gpus,
        sum(held_gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        max(case when is_time_sliced then 1 else 0 end) as is_time_sliced,
        max(case when util_is_fallback then 1 else 0 end) as util_is_fallback,
        max(gpu_instance_profile) as mig_profile,
        -- the most specific rule of the pod's hours: a MIG slice, then time-slicing, then a whole GPU
        coalesce(
            max(case when gpu_instance_id is not null then allocation_rule end),
            max(case when allocation_rule = 'time_sliced_equal' then allocation_rule end),
            'whole_gpu'
        ) as allocation_rule
    from pod_hours
    group by usage_date, resource_id, namespace, pod

),

-- idle MIG slices per node, day and profile (the unpartitioned remainder: profile null)
idle_slices as (

    select
        usage_date,
        resource_id,
        gpu_instance_profile as mig_profile,
        allocation_rule,
        count(distinct gpu_uuid) as gpus,
        sum(idle_gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours
    from {{ ref('int_gpu_allocation__mig_idle_hourly') }}
    where resource_id is not null
    group by usage_date, resource_id, gpu_instance_profile, allocation_rule

),

-- the GPU-hours pods and idle slices account for, per node and day
node_held as (

    select
        usage_date,
        resource_id,
        sum(gpu_hours) as held_gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours
    from (
        select usage_date, resource_id, gpu_hours, active_gpu_hours from pods
        union all
        select usage_date, resource_id, gpu_hours, active_gpu_hours from idle_slices
    ) as accounted
    group by usage_date, resource_id

),

allocated as (

    select
        nodes.*,
        pods.namespace,
        pods.pod,
        pods.gpus,
        pods.gpu_hours,
        pods.active_gpu_hours as pod_active_gpu_hours,
        pods.is_time_sliced,
        pods.util_is_fallback,
        pods.mig_profile,
        pods.allocation_rule,
        -- GPU-hours held share the GPU-hours paid for; should telemetry exceed the bill by a hair, they share what was
        -- paid. A day a usage reversal brings below zero GPU-hours refunds hours of another day: no pod held those.
        case when nodes.provisioned_gpu_hours >= 0 then
            {{ decimal_divide(
                decimal_product(['nodes.provisioned_cost', 'pods.gpu_hours']),
                'greatest(nodes.provisioned_gpu_hours, node_held.held_gpu_hours)',
                2,
            ) }}
        end as allocated_cost
    from nodes
    inner join pods
        on nodes.usage_date = pods.usage_date
        and nodes.resource_id = pods.resource_id
    inner join node_held
        on pods.usage_date = node_held.usage_date
        and pods.resource_id = node_held.resource_id

),

pod_rows as (

    select
        usage_date,
        provider_name,
        resource_id,
        host,
        gpu_model,
        billing_currency,
        'pod' as allocation_type,
        namespace,
        pod,
        node_team,
        cast(gpus as bigint) as gpus,
        gpu_hours,
        pod_active_gpu_hours as active_gpu_hours,
        is_time_sliced = 1 as is_time_sliced,
        util_is_fallback = 1 as util_is_fallback,
        provisioned_gpu_hours,
        effective_cost,
        provisioned_cost,
        mig_profile,
        allocation_rule,
        -- 12 decimals like the unallocated row's, so the union keeps the remainder's every decimal
        cast(coalesce(allocated_cost, 0) as decimal(38, 12)) as allocated_cost
    from allocated

),

-- idle slices are priced like the pods: the node's owner pays them, on their own rows
idle_rows as (

    select
        nodes.usage_date,
        nodes.provider_name,
        nodes.resource_id,
        nodes.host,
        nodes.gpu_model,
        nodes.billing_currency,
        'idle_mig_slice' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        nodes.node_team,
        cast(idle_slices.gpus as bigint) as gpus,
        idle_slices.gpu_hours,
        idle_slices.active_gpu_hours,
        false as is_time_sliced,
        false as util_is_fallback,
        nodes.provisioned_gpu_hours,
        nodes.effective_cost,
        nodes.provisioned_cost,
        idle_slices.mig_profile,
        idle_slices.allocation_rule,
        cast(coalesce(
            case when nodes.provisioned_gpu_hours >= 0 then
                {{ decimal_divide(
                    decimal_product(['nodes.provisioned_cost', 'idle_slices.gpu_hours']),
                    'greatest(nodes.provisioned_gpu_hours, node_held.held_gpu_hours)',
                    2,
                ) }}
            end, 0) as decimal(38, 12)) as allocated_cost
    from nodes
    inner join idle_slices
        on nodes.usage_date = idle_slices.usage_date
        and nodes.resource_id = idle_slices.resource_id
    inner join node_held
        on idle_slices.usage_date = node_held.usage_date
        and idle_slices.resource_id = node_held.resource_id

),

charged_rows as (

    select * from pod_rows
    union all
    select * from idle_rows

),

unallocated_rows as (

    select
        nodes.usage_date,
        nodes.provider_name,
        nodes.resource_id,
        nodes.host,
        nodes.gpu_model,
        nodes.billing_currency,
        'unallocated' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        nodes.node_team,
        cast(null as bigint) as gpus,
        greatest(nodes.provisioned_gpu_hours - coalesce(node_held.held_gpu_hours, 0), 0) as gpu_hours,
        -- activity on GPUs no pod held (a workload outside Kubernetes, a GPU the exporter could not map)
        greatest(nodes.active_gpu_hours - coalesce(node_held.active_gpu_hours, 0), 0) as active_gpu_hours,
        false as is_time_sliced,
        false as util_is_fallback,
        nodes.provisioned_gpu_hours,
        nodes.effective_cost,
        nodes.provisioned_cost,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        cast(null as {{ dbt.type_string() }}) as allocation_rule,
        -- the remainder: the hours no pod held, the unused commitment and the pods' rounding
        cast(nodes.effective_cost - coalesce(pod_costs.allocated_cost, 0) as decimal(38, 12)) as allocated_cost
    from nodes
    left join node_held
        on nodes.usage_date = node_held.usage_date
        and nodes.resource_id = node_held.resource_id
    left join (
        select usage_date, resource_id, billing_currency, sum(allocated_cost) as allocated_cost
        from charged_rows
        group by usage_date, resource_id, billing_currency
    ) as pod_costs
        on nodes.usage_date = pod_costs.usage_date
        and nodes.resource_id = pod_costs.resource_id
        and nodes.billing_currency = pod_costs.billing_currency

),

unioned as (

    select * from charged_rows
    union all
    select * from unallocated_rows

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_cost_allocation_daily_key,
        unioned.usage_date,
        unioned.provider_name,
        unioned.resource_id,
        unioned.host,
        unioned.gpu_model,
        unioned.billing_currency,
        unioned.allocation_type,
        unioned.namespace,
        unioned.pod,
        namespace_teams.team,
        unioned.node_team,
        unioned.gpus,
        cast(unioned.gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(unioned.active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        case when unioned.gpu_hours > 0 then
            {{ decimal_divide('unioned.active_gpu_hours', 'unioned.gpu_hours', 6) }}
        end as active_share,
        unioned.is_time_sliced,
        unioned.util_is_fallback,
        cast(unioned.allocation_rule as {{ dbt.type_string() }}) as allocation_rule,
        cast(unioned.mig_profile as {{ dbt.type_string() }}) as mig_profile,
        cast(unioned.provisioned_gpu_hours as decimal(38, 12)) as node_provisioned_gpu_hours,
        cast(unioned.effective_cost as decimal(38, 12)) as node_effective_cost,
        {{ per_gpu_hour('unioned.provisioned_cost', 'unioned.provisioned_gpu_hours', 6) }} as cost_per_gpu_hour,
        cast(unioned.allocated_cost as decimal(38, 12)) as allocated_cost,
        {{ decimal_divide('unioned.allocated_cost', 'unioned.effective_cost', 6) }} as cost_share,
        'telemetry' as allocation_source
    from unioned
    left join namespace_teams
        on unioned.namespace = namespace_teams.namespace

)
{%- if allocation_source == 'aws_split' %},

-- The allocation-source choice: reads only `final`'s columns, AWS's split and the namespace teams.
{%- set split_grain = [] %}
{%- for column in grain %}{% do split_grain.append(column | replace('unioned.', 'split_unioned.', 1)) %}{% endfor %}
aws_split as (

    select * from {{ ref('int_gpu_allocation__aws_split_daily') }}

),

split_node_days as (

    select final.usage_date, final.resource_id, final.billing_currency
    from final
    where final.allocation_type = 'unallocated'
        and exists (
            select 1 from aws_split
            where aws_split.usage_date = final.usage_date
                and aws_split.resource_id = final.resource_id
                and aws_split.billing_currency = final.billing_currency
        )

),

split_nodes as (

    select
        final.*,
        node_activity.node_active_gpu_hours
    from final
    inner join split_node_days
        on final.usage_date = split_node_days.usage_date
        and final.resource_id = split_node_days.resource_id
        and final.billing_currency = split_node_days.billing_currency
    inner join (
        select usage_date, resource_id, billing_currency, sum(active_gpu_hours) as node_active_gpu_hours
        from final
        group by usage_date, resource_id, billing_currency
    ) as node_activity
        on final.usage_date = node_activity.usage_date
        and final.resource_id = node_activity.resource_id
        and final.billing_currency = node_activity.billing_currency
    where final.allocation_type = 'unallocated'

),

split_pods as (

    select
        split_nodes.usage_date,
        split_nodes.provider_name,
        split_nodes.resource_id,
        split_nodes.host,
        split_nodes.gpu_model,
        split_nodes.billing_currency,
        'pod' as allocation_type,
        aws_split.namespace,
        aws_split.pod,
        namespace_teams.team,
        split_nodes.node_team,
        telemetry.gpus,
        coalesce(telemetry.gpu_hours, 0) as gpu_hours,
        coalesce(telemetry.active_gpu_hours, 0) as active_gpu_hours,
        coalesce(telemetry.is_time_sliced, false) as is_time_sliced,
        coalesce(telemetry.util_is_fallback, false) as util_is_fallback,
        'aws_split_cost' as allocation_rule,
        telemetry.mig_profile,
        split_nodes.node_provisioned_gpu_hours,
        split_nodes.node_effective_cost,
        split_nodes.cost_per_gpu_hour,
        split_nodes.node_active_gpu_hours,
        cast({{ decimal_divide('aws_split.allocated_cost', '1', 2) }} as decimal(38, 12)) as allocated_cost
    from split_nodes
    inner join aws_split
        on split_nodes.usage_date = aws_split.usage_date
        and split_nodes.resource_id = aws_split.resource_id
        and split_nodes.billing_currency = aws_split.billing_currency
        and aws_split.allocation_type = 'pod'
    left join final as telemetry
        on aws_split.usage_date = telemetry.usage_date
        and aws_split.resource_id = telemetry.resource_id
        and aws_split.billing_currency = telemetry.billing_currency
        and telemetry.allocation_type = 'pod'
        and aws_split.namespace = telemetry.namespace
        and aws_split.pod = telemetry.pod
    left join namespace_teams
        on aws_split.namespace = namespace_teams.namespace

),

split_unallocated as (

    select
        split_nodes.usage_date,
        split_nodes.provider_name,
        split_nodes.resource_id,
        split_nodes.host,
        split_nodes.gpu_model,
        split_nodes.billing_currency,
        'unallocated' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        cast(null as {{ dbt.type_string() }}) as team,
        split_nodes.node_team,
        cast(null as bigint) as gpus,
        greatest(split_nodes.node_provisioned_gpu_hours - coalesce(pod_totals.gpu_hours, 0), 0) as gpu_hours,
        greatest(split_nodes.node_active_gpu_hours - coalesce(pod_totals.active_gpu_hours, 0), 0) as active_gpu_hours,
        false as is_time_sliced,
        false as util_is_fallback,
        cast(null as {{ dbt.type_string() }}) as allocation_rule,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        split_nodes.node_provisioned_gpu_hours,
        split_nodes.node_effective_cost,
        split_nodes.cost_per_gpu_hour,
        split_nodes.node_active_gpu_hours,
        -- AWS's unused cost, the gap between AWS's split and the bill, and the pods' rounding
        cast(split_nodes.node_effective_cost - coalesce(pod_totals.allocated_cost, 0) as decimal(38, 12))
            as allocated_cost
    from split_nodes
    left join (
        select
            usage_date, resource_id, billing_currency,
            sum(gpu_hours) as gpu_hours, sum(active_gpu_hours) as active_gpu_hours, sum(allocated_cost) as allocated_cost
        from split_pods
        group by usage_date, resource_id, billing_currency
    ) as pod_totals
        on split_nodes.usage_date = pod_totals.usage_date
        and split_nodes.resource_id = pod_totals.resource_id
        and split_nodes.billing_currency = pod_totals.billing_currency

),

split_unioned as (

    select * from split_pods
    union all
    select * from split_unallocated

),

chosen as (

    select final.*
    from final
    where not exists (
        select 1 from split_node_days
        where split_node_days.usage_date = final.usage_date
            and split_node_days.resource_id = final.resource_id
            and split_node_days.billing_currency = final.billing_currency
    )
    union all
    select
        {{ generate_surrogate_key(split_grain) }} as gpu_cost_allocation_daily_key,
        split_unioned.usage_date,
        split_unioned.provider_name,
        split_unioned.resource_id,
        split_unioned.host,
        split_unioned.gpu_model,
        split_unioned.billing_currency,
        split_unioned.allocation_type,
        split_unioned.namespace,
        split_unioned.pod,
        split_unioned.team,
        split_unioned.node_team,
        split_unioned.gpus,
        cast(split_unioned.gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(split_unioned.active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        case when split_unioned.gpu_hours > 0 then
            {{ decimal_divide('split_unioned.active_gpu_hours', 'split_unioned.gpu_hours', 6) }}
        end as active_share,
        split_unioned.is_time_sliced,
        split_unioned.util_is_fallback,
        cast(split_unioned.allocation_rule as {{ dbt.type_string() }}) as allocation_rule,
        cast(split_unioned.mig_profile as {{ dbt.type_string() }}) as mig_profile,
        split_unioned.node_provisioned_gpu_hours,
        split_unioned.node_effective_cost,
        split_unioned.cost_per_gpu_hour,
        split_unioned.allocated_cost,
        {{ decimal_divide('split_unioned.allocated_cost', 'split_unioned.node_effective_cost', 6) }} as cost_share,
        'aws_split' as allocation_source
    from split_unioned

)

select * from chosen
{%- else %}

select * from final
{%- endif %}
