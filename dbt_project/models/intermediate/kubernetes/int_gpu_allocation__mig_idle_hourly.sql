{#-
    The idle parts of GPUs split into MIG slices, per GPU, slice and UTC hour: the seconds a slice the GPU is
    partitioned into (seen in telemetry through its own series, GPU_I_ID and GPU_I_PROFILE under the parent's
    UUID) had no pod holding it, times its share of the GPU (macro mig_slice_share, g/7 by default); and, per
    GPU, the unpartitioned remainder: 1 − the shares of the slices seen at a sample (a GPU split 3g + 1g + 1g
    leaves 2/7 that no slice covers). Both are idle cost of the node's owner in fct_gpu_cost_allocation_daily.
    A slice's activity while no pod held it (a process outside Kubernetes) is kept as active_gpu_hours.
-#}

with

slice_samples as (

    select * from {{ ref('int_telemetry__gpu_samples') }}
    where telemetry_source = 'dcgm_prometheus' and gpu_instance_id is not null

),

held_slices as (

    select distinct gpu_uuid, gpu_instance_id, sampled_at
    from {{ ref('stg_telemetry__prometheus_gpu_samples') }}
    where pod is not null and gpu_instance_id is not null

),

gpu_hours as (

    select * from {{ ref('int_telemetry__gpu_hourly') }}

),

unheld as (

    select
        slice_samples.hour_start,
        slice_samples.gpu_uuid,
        slice_samples.gpu_instance_id,
        max(slice_samples.gpu_instance_profile) as gpu_instance_profile,
        max(slice_samples.slice_share) as gpu_share,
        sum({{ decimal_product(['slice_samples.sample_seconds', 'slice_samples.slice_share']) }}) as idle_seconds,
        sum(
            {{ decimal_product([
                'slice_samples.sample_seconds', 'slice_samples.slice_share',
                'case when slice_samples.gr_engine_active is not null then '
                ~ 'least(greatest(slice_samples.gr_engine_active, 0), 1) end',
            ]) }}
        ) as active_seconds
    from slice_samples
    left join held_slices
        on slice_samples.gpu_uuid = held_slices.gpu_uuid
        and slice_samples.gpu_instance_id = held_slices.gpu_instance_id
        and slice_samples.sampled_at = held_slices.sampled_at
    where held_slices.gpu_uuid is null
    group by slice_samples.hour_start, slice_samples.gpu_uuid, slice_samples.gpu_instance_id

),

-- per GPU and sample: the share no slice covers
partitioned as (

    select
        hour_start,
        gpu_uuid,
        sampled_at,
        max(sample_seconds) as sample_seconds,
        sum(slice_share) as sliced_share
    from slice_samples
    group by hour_start, gpu_uuid, sampled_at

),

unpartitioned as (

    select
        hour_start,
        gpu_uuid,
        cast(null as {{ dbt.type_string() }}) as gpu_instance_id,
        cast(null as {{ dbt.type_string() }}) as gpu_instance_profile,
        cast(null as decimal(38, 12)) as gpu_share,
        sum({{ decimal_product(['sample_seconds', '1 - sliced_share']) }}) as idle_seconds,
        cast(0 as decimal(38, 12)) as active_seconds
    from partitioned
    where sliced_share < 1
    group by hour_start, gpu_uuid

),

unioned as (

    select *, {{ mig_slice_rule() }} as allocation_rule from unheld
    union all
    select *, 'mig_unpartitioned' as allocation_rule from unpartitioned

),

final as (

    select
        unioned.hour_start,
        gpu_hours.usage_date,
        gpu_hours.resource_id,
        gpu_hours.host,
        gpu_hours.gpu_model,
        unioned.gpu_uuid,
        unioned.gpu_instance_id,
        unioned.gpu_instance_profile,
        unioned.gpu_share,
        unioned.allocation_rule,
        {{ decimal_divide('unioned.idle_seconds', 'greatest(gpu_hours.covered_seconds, 3600)', 12) }}
            as idle_gpu_hours,
        {{ decimal_divide('unioned.active_seconds', 'greatest(gpu_hours.covered_seconds, 3600)', 12) }}
            as active_gpu_hours
    from unioned
    inner join gpu_hours
        on unioned.hour_start = gpu_hours.hour_start
        and unioned.gpu_uuid = gpu_hours.gpu_uuid

)

select * from final
