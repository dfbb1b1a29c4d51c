{#-
    The hours behind fct_gpu_utilization_daily: per UTC hour and billed resource (all of its GPUs),
    the telemetry GPU-hours, active, effective and idle GPU-hours, and what they cost at the bill's
    price per provisioned GPU-hour of that day. Only hours with telemetry appear: an hour billed but
    never observed has nothing to show here (fct_gpu_utilization_daily counts it as unobserved).
-#}

{%- set grain = ['hour_start', 'resource_id', 'host', 'gpu_model'] -%}

with

hourly as (

    select * from {{ ref('int_telemetry__gpu_hourly') }}

),

daily as (

    select
        usage_date,
        resource_id,
        provider_name,
        team,
        billing_currency,
        cost_per_provisioned_gpu_hour
    from {{ ref('fct_gpu_utilization_daily') }}
    where match_status = 'matched'

),

per_resource as (

    select
        hour_start,
        usage_date,
        resource_id,
        host,
        max(gpu_model) as gpu_model,
        count(distinct gpu_uuid) as gpus_seen,
        sum(sample_count) as sample_count,
        sum(telemetry_gpu_hours) as telemetry_gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(effective_gpu_hours) as effective_gpu_hours,
        sum(energy_kwh) as energy_kwh,
        max(case when util_is_fallback then 1 else 0 end) as util_is_fallback,
        max(case when ratio_clamped then 1 else 0 end) as ratio_clamped
    from hourly
    group by hour_start, usage_date, resource_id, host

),

joined as (

    select
        per_resource.hour_start,
        per_resource.usage_date,
        daily.provider_name,
        per_resource.resource_id,
        per_resource.host,
        per_resource.gpu_model,
        daily.team,
        daily.billing_currency,
        cast(per_resource.gpus_seen as bigint) as gpus_seen,
        cast(per_resource.sample_count as bigint) as sample_count,
        cast(per_resource.telemetry_gpu_hours as decimal(38, 12)) as telemetry_gpu_hours,
        cast(per_resource.active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        cast(per_resource.effective_gpu_hours as decimal(38, 12)) as effective_gpu_hours,
        cast(
            greatest(per_resource.telemetry_gpu_hours - per_resource.active_gpu_hours, 0) as decimal(38, 12)
        ) as idle_gpu_hours,
        per_resource.util_is_fallback = 1 as util_is_fallback,
        per_resource.ratio_clamped = 1 as ratio_clamped,
        cast(per_resource.energy_kwh as decimal(38, 12)) as energy_kwh,
        daily.cost_per_provisioned_gpu_hour,
        {{ decimal_product(['per_resource.active_gpu_hours', 'daily.cost_per_provisioned_gpu_hour']) }} as active_cost,
        {{ decimal_product([
            'greatest(per_resource.telemetry_gpu_hours - per_resource.active_gpu_hours, 0)',
            'daily.cost_per_provisioned_gpu_hour',
        ]) }} as idle_cost
    from per_resource
    left join daily
        on per_resource.usage_date = daily.usage_date
        and per_resource.resource_id = daily.resource_id

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_utilization_hourly_key,
        joined.*
    from joined

)

select * from final
