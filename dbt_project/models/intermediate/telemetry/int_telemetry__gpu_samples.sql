{#-
    Every GPU telemetry sample, DCGM-through-Prometheus and nvidia-smi alike, one row per GPU and
    sample time with the metrics side by side. A sample describes the `sample_seconds` before
    `sampled_at`, so it belongs to the hour its interval starts in. When two loads hold the same
    GPU, metric and time (overlapping log files), the later load wins: nothing is counted twice.
    Values stay in their source units here; int_telemetry__gpu_hourly normalises ratios.
    Under MIG every slice (GPU instance) has its own series under the parent's UUID: a sample is keyed by
    GPU *and* gpu_instance_id (null for a whole GPU and for the parent's device-level metrics, power and
    energy), so slices never collide, and each slice carries its share of the GPU (macro mig_slice_share:
    g/7 by default). A value the loader recognised as a DCGM sentinel (value_invalid, e.g. GPU_UTIL under
    MIG) is null and counted in util_invalid, never averaged in.
    The energy counter (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ since the driver loaded) is read as the raw row's
    PromQL says (promql). Asked bare (promql is the metric), its readings are differenced per GPU series (source,
    host, UUID; the parent's, never a MIG slice's), pod labels ignored since it is the device's: the increase since
    the GPU's previous reading, or the reading itself where it fell (a reboot or driver reload restarted the counter
    from 0: energy_counter_reset). A GPU's first reading has no increase; the hourly roll-up integrates power there.
    Asked as increase(…[step]) (the feed's query before), or with a null promql (rows loaded before the column
    existed, which were all increases), the value is the step's energy as it stands: never differenced, and never
    a previous reading for a bare one.
    A table: samples are the largest input in the warehouse, and the tests and the hourly roll-up
    would otherwise each repeat the de-duplication and pivot.
-#}

{%- set sample_columns = [
    'source', 'host', 'gpu_uuid', 'gpu_index', 'gpu_model_name', 'metric', 'value', 'namespace', 'pod',
    'resource_id', 'gpu_instance_id', 'gpu_instance_profile', 'value_invalid', 'promql', 'sampled_at',
    'sample_seconds',
] %}
{%- set energy_metric = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION' %}

with

-- a Prometheus load replaces whole days, so its rows never overlap another load's
prometheus as (

    select {{ sample_columns | join(', ') }}
    from {{ ref('stg_telemetry__prometheus_gpu_samples') }}

),

-- nvidia-smi logs can overlap (a log rotated mid-day, a host logging to two files): the latest load wins
nvidia_smi as (

    select
        {{ sample_columns | join(', ') }},
        row_number() over (
            partition by host, gpu_uuid, gpu_instance_id, metric, sampled_at
            order by x_ingested_at desc, x_load_id desc
        ) as load_rank
    from {{ ref('stg_telemetry__nvidia_smi_gpu_samples') }}

),

latest as (

    select * from prometheus
    union all
    select {{ sample_columns | join(', ') }} from nvidia_smi
    where load_rank = 1

),

pivoted as (

    select
        source as telemetry_source,
        host,
        gpu_uuid,
        gpu_instance_id,
        sampled_at,
        max(gpu_instance_profile) as gpu_instance_profile,
        max(sample_seconds) as sample_seconds,
        max(gpu_index) as gpu_index,
        max(gpu_model_name) as gpu_model_name,
        max(namespace) as namespace,
        max(pod) as pod,
        max(resource_id) as resource_id_label,
        max(case when metric = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' then value end) as gr_engine_active,
        max(case when metric = 'DCGM_FI_PROF_SM_ACTIVE' then value end) as sm_active,
        max(case when metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE' then value end) as tensor_active,
        max(case when metric = 'DCGM_FI_DEV_GPU_UTIL' then value end) as gpu_util_percent,
        max(case when metric = 'DCGM_FI_DEV_FB_USED' then value end) as fb_used_mib,
        max(case when metric = 'DCGM_FI_DEV_POWER_USAGE' then value end) as power_w,
        max(case when metric = '{{ energy_metric }}' then value end) as energy_mj,
        max(case when metric = '{{ energy_metric }}' then promql end) as energy_promql,
        sum(case when metric = 'DCGM_FI_DEV_GPU_UTIL' and value_invalid then 1 else 0 end) as util_invalid
    from latest
    group by source, host, gpu_uuid, gpu_instance_id, sampled_at

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

-- the GPU's memory, for the memory-share rule (var mig_slice_share: memory)
gpu_memory as (

    select gpu_model_names.gpu_model_key, gpu_models.memory_gb_per_gpu
    from gpu_model_names
    inner join {{ ref('gpu_models') }} as gpu_models
        on gpu_model_names.gpu_model = gpu_models.gpu_model

),

counter_readings as (

    select
        telemetry_source,
        host,
        gpu_uuid,
        sampled_at,
        energy_mj as energy_counter_mj,
        lag(energy_mj) over (
            partition by telemetry_source, host, gpu_uuid order by sampled_at
        ) as previous_counter_mj
    from pivoted
    where energy_mj is not null and gpu_instance_id is null and energy_promql = '{{ energy_metric }}'

),

counter_increases as (

    select
        telemetry_source,
        host,
        gpu_uuid,
        sampled_at,
        energy_counter_mj,
        case
            when previous_counter_mj is null then null
            when energy_counter_mj >= previous_counter_mj then energy_counter_mj - previous_counter_mj
            else energy_counter_mj
        end as energy_increase_mj,
        coalesce(energy_counter_mj < previous_counter_mj, false) as energy_counter_reset
    from counter_readings

),

final as (

    select
        pivoted.telemetry_source,
        pivoted.host,
        pivoted.gpu_uuid,
        pivoted.gpu_instance_id,
        pivoted.gpu_instance_profile,
        case when pivoted.gpu_instance_id is not null then
            {{ mig_slice_share('pivoted.gpu_instance_profile', 'gpu_memory.memory_gb_per_gpu') }}
        end as slice_share,
        pivoted.gpu_index,
        pivoted.gpu_model_name,
        pivoted.namespace,
        pivoted.pod,
        pivoted.resource_id_label,
        pivoted.sampled_at,
        cast(pivoted.sample_seconds as bigint) as sample_seconds,
        {{ dbt.date_trunc('hour', dbt.dateadd('second', '-1 * pivoted.sample_seconds', 'pivoted.sampled_at')) }}
            as hour_start,
        pivoted.gr_engine_active,
        pivoted.sm_active,
        pivoted.tensor_active,
        pivoted.gpu_util_percent,
        pivoted.fb_used_mib,
        pivoted.power_w,
        counter_increases.energy_counter_mj,
        case
            when pivoted.gpu_instance_id is not null then null
            when pivoted.energy_promql is null or pivoted.energy_promql like 'increase(%' then pivoted.energy_mj
            else counter_increases.energy_increase_mj
        end as energy_mj,
        pivoted.energy_promql,
        coalesce(counter_increases.energy_counter_reset, false) as energy_counter_reset,
        pivoted.util_invalid > 0 as util_invalid
    from pivoted
    left join gpu_memory
        on {{ gpu_model_key('pivoted.gpu_model_name') }} = gpu_memory.gpu_model_key
    left join counter_increases
        on pivoted.telemetry_source = counter_increases.telemetry_source
        and pivoted.host = counter_increases.host
        and pivoted.gpu_uuid = counter_increases.gpu_uuid
        and pivoted.sampled_at = counter_increases.sampled_at
        and pivoted.gpu_instance_id is null

)

select * from final
