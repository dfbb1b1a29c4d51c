{#-
    The GPU-hours each Kubernetes pod held, per pod, GPU (and MIG slice) and UTC hour, from the DCGM exporter's
    pod labels (namespace, pod, container: `exported_*` already coalesced at load). A pod holds a GPU, or a MIG
    slice of it, for the seconds its series has samples, times the share of the GPU it holds, by a written rule
    on each row (allocation_rule):
    - whole_gpu: the pod alone on a whole GPU, share 1;
    - time_sliced_equal: pods sharing a whole GPU by time-slicing or MPS (`nvidia.com/gpu.shared`) each carry the
      device's same sample (one series per GPU and pod): its seconds are split evenly between them, so a
      GPU-hour is never counted twice; the active ratio is the device's, never summed per pod;
    - mig_compute_share / mig_memory_share: the pod holds a MIG slice (`nvidia.com/mig-<g>g.<mem>gb`, series
      labelled GPU_I_ID and GPU_I_PROFILE under the parent UUID), whose share of the GPU is g/7 or its memory
      share (var mig_slice_share); pods time-slicing one slice split its seconds evenly too. The active ratio
      is the slice's own GR_ENGINE_ACTIVE (GPU_UTIL is not valid under MIG), so held × active is in GPU-hours
      of the parent.
    Samples without pod labels are unattributed: they stay out of this model; on a whole GPU they are the
    node's unallocated GPU-hours in fct_gpu_cost_allocation_daily, on a MIG slice idle slice-hours
    (int_gpu_allocation__mig_idle_hourly).
-#}

with

-- one row per GPU (slice), sample time and pod: each metric's series carries the same pod labels
pod_samples as (

    select
        gpu_uuid,
        gpu_instance_id,
        sampled_at,
        namespace,
        pod,
        max(container) as container
    from {{ ref('stg_telemetry__prometheus_gpu_samples') }}
    where pod is not null
    group by gpu_uuid, gpu_instance_id, sampled_at, namespace, pod

),

device_samples as (

    select * from {{ ref('int_telemetry__gpu_samples') }}
    where telemetry_source = 'dcgm_prometheus'

),

gpu_hours as (

    select * from {{ ref('int_telemetry__gpu_hourly') }}

),

joined as (

    select
        pod_samples.gpu_uuid,
        pod_samples.gpu_instance_id,
        device_samples.gpu_instance_profile,
        coalesce(device_samples.slice_share, 1) as gpu_share,
        pod_samples.namespace,
        pod_samples.pod,
        pod_samples.container,
        device_samples.hour_start,
        device_samples.sample_seconds,
        device_samples.gr_engine_active,
        device_samples.gpu_util_percent,
        count(*) over (
            partition by pod_samples.gpu_uuid, pod_samples.gpu_instance_id, pod_samples.sampled_at
        ) as pods_on_gpu
    from pod_samples
    inner join device_samples
        on pod_samples.gpu_uuid = device_samples.gpu_uuid
        and pod_samples.sampled_at = device_samples.sampled_at
        and (
            pod_samples.gpu_instance_id = device_samples.gpu_instance_id
            or (pod_samples.gpu_instance_id is null and device_samples.gpu_instance_id is null)
        )

),

-- a sample several pods hold (time-slicing) is split evenly between them; a slice gives its share of the GPU
shared as (

    select
        joined.*,
        {{ decimal_divide(decimal_product(['sample_seconds', 'gpu_share']), 'pods_on_gpu', 12) }} as held_seconds,
        {{ telemetry_active_ratio('gr_engine_active', 'gpu_util_percent') }} as active_ratio,
        case when {{ telemetry_active_is_fallback('gr_engine_active', 'gpu_util_percent') }} then 1 else 0 end
            as used_fallback
    from joined

),

held as (

    select
        hour_start,
        gpu_uuid,
        gpu_instance_id,
        namespace,
        pod,
        max(container) as container,
        max(gpu_instance_profile) as gpu_instance_profile,
        max(gpu_share) as gpu_share,
        count(*) as sample_count,
        max(pods_on_gpu) as max_pods_on_gpu,
        sum(held_seconds) as held_seconds,
        sum({{ decimal_product(['active_ratio', 'held_seconds']) }}) as active_weighted,
        sum(case when active_ratio is not null then held_seconds end) as active_seconds,
        max(used_fallback) as used_fallback
    from shared
    group by hour_start, gpu_uuid, gpu_instance_id, namespace, pod

),

final as (

    select
        held.hour_start,
        gpu_hours.usage_date,
        gpu_hours.resource_id,
        gpu_hours.host,
        gpu_hours.gpu_model,
        held.gpu_uuid,
        held.gpu_instance_id,
        held.gpu_instance_profile,
        held.gpu_share,
        case
            when held.gpu_instance_id is not null then {{ mig_slice_rule() }}
            when held.max_pods_on_gpu > 1 then 'time_sliced_equal'
            else 'whole_gpu'
        end as allocation_rule,
        held.namespace,
        held.pod,
        held.container,
        cast(held.sample_count as bigint) as sample_count,
        held.max_pods_on_gpu > 1 as is_time_sliced,
        -- an hour's samples can stand for a little more than 3,600 s (irregular scrapes): never more than 1 GPU-hour
        {{ decimal_divide('held.held_seconds', 'greatest(gpu_hours.covered_seconds, 3600)', 12) }} as held_gpu_hours,
        case when held.active_seconds > 0 then
            {{ decimal_divide('held.active_weighted', 'held.active_seconds', 12) }}
        end as active_ratio,
        held.used_fallback = 1 as util_is_fallback
    from held
    inner join gpu_hours
        on held.hour_start = gpu_hours.hour_start
        and held.gpu_uuid = gpu_hours.gpu_uuid

)

select
    final.*,
    {{ decimal_product(['held_gpu_hours', 'active_ratio']) }} as active_gpu_hours
from final
