{#-
    One row per GPU and UTC hour of telemetry: how much of the hour was observed and how busy the GPU
    was. Every ratio is normalised to 0–1 (GPU_UTIL is 0–100) and clamped, with a flag, because MIG
    can report SM_ACTIVE above 1. The active ratio is GR_ENGINE_ACTIVE; where a sample lacks it (some
    H100/H200 nodes, DCP module off, nvidia-smi) GPU_UTIL / 100 stands in and util_is_fallback says so.
    Averages are weighted by the seconds each sample stands for; GPU-hours are ratio × coverage, so an
    hour with 10 minutes of samples counts as 1/6 of a GPU-hour observed, never as a full one.
    Energy: the counter's increases (int_telemetry__gpu_samples, resets handled per GPU series) where a sample has
    one, else that sample's power × its seconds, so an hour mixing both (a GPU's first reading) misses nothing.
    The billed resource comes from the metric labels, else from the user's host map for that day.
    A GPU seen by both DCGM and nvidia-smi in an hour keeps DCGM's row only.
    A GPU split into MIG slices is one GPU here: at each sample its active (and SM-, tensor-active) ratio
    is the slice-weighted sum Σ share × slice ratio (each slice's ratio clamped to 0–1; the unpartitioned
    remainder counts as inactive), its GPU_UTIL is never used (not valid under MIG), and its power and
    energy are the parent's device-level readings. util_invalid_samples counts the GPU_UTIL sentinels seen.
-#}

with

instance_samples as (

    select * from {{ ref('int_telemetry__gpu_samples') }}

),

-- one row per GPU and sample time: a MIG GPU's slices (and its device-level row) made one
samples as (

    select
        telemetry_source,
        host,
        gpu_uuid,
        sampled_at,
        max(sample_seconds) as sample_seconds,
        max(hour_start) as hour_start,
        max(gpu_index) as gpu_index,
        max(gpu_model_name) as gpu_model_name,
        max(namespace) as namespace,
        max(pod) as pod,
        max(resource_id_label) as resource_id_label,
        count(gpu_instance_id) as mig_slices,
        case when count(gpu_instance_id) = 0 then max(gr_engine_active) else
            sum({{ decimal_product(['slice_share', 'case when gr_engine_active is not null then least(greatest(gr_engine_active, 0), 1) end']) }})
        end as gr_engine_active,
        case when count(gpu_instance_id) = 0 then max(sm_active) else
            sum({{ decimal_product(['slice_share', 'case when sm_active is not null then least(greatest(sm_active, 0), 1) end']) }})
        end as sm_active,
        case when count(gpu_instance_id) = 0 then max(tensor_active) else
            sum({{ decimal_product(['slice_share', 'case when tensor_active is not null then least(greatest(tensor_active, 0), 1) end']) }})
        end as tensor_active,
        -- GPU_UTIL is not valid under MIG, whatever number the parent's series shows
        case when count(gpu_instance_id) = 0 then max(gpu_util_percent) end as gpu_util_percent,
        coalesce(
            max(case when gpu_instance_id is null then fb_used_mib end),
            sum(case when gpu_instance_id is not null then fb_used_mib end)
        ) as fb_used_mib,
        max(case when gpu_instance_id is null then power_w end) as power_w,
        max(case when gpu_instance_id is null then energy_mj end) as energy_mj,
        max(case when gpu_instance_id is null and energy_counter_reset then 1 else 0 end) = 1 as energy_counter_reset,
        sum(case when util_invalid then 1 else 0 end) as util_invalid,
        max(
            case
                when gpu_instance_id is not null
                    and (gr_engine_active > 1 or gr_engine_active < 0 or sm_active > 1 or sm_active < 0
                        or tensor_active > 1 or tensor_active < 0)
                    then 1
                else 0
            end
        ) as slice_out_of_range
    from instance_samples
    group by telemetry_source, host, gpu_uuid, sampled_at

),

host_map as (

    select * from {{ ref('stg_telemetry__host_map') }}

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

normalised as (

    select
        samples.*,
        cast(hour_start as date) as usage_date,
        {{ decimal_divide('gpu_util_percent', 100, 12) }} as gpu_util_ratio
    from samples

),

sample_ratios as (

    select
        normalised.*,
        case when {{ telemetry_active_is_fallback('gr_engine_active', 'gpu_util_percent') }} then 1 else 0 end
            as used_fallback,
        case
            when gr_engine_active > 1 or gr_engine_active < 0
                or sm_active > 1 or sm_active < 0
                or tensor_active > 1 or tensor_active < 0
                or gpu_util_ratio > 1 or gpu_util_ratio < 0
                or slice_out_of_range = 1
                then 1
            else 0
        end as out_of_range
    from normalised

),

clamped as (

    select
        sample_ratios.*,
        {{ telemetry_active_ratio('gr_engine_active', 'gpu_util_percent') }} as active_ratio_sample,
        -- least/greatest skip nulls on some engines (DuckDB, Postgres): a missing value must stay missing
        case when sm_active is not null then least(greatest(sm_active, 0), 1) end as sm_active_sample,
        case when tensor_active is not null then least(greatest(tensor_active, 0), 1) end as tensor_active_sample
    from sample_ratios

),

hourly as (

    select
        hour_start,
        usage_date,
        telemetry_source,
        host,
        gpu_uuid,
        max(gpu_index) as gpu_index,
        max(gpu_model_name) as gpu_model_name,
        max(resource_id_label) as resource_id_label,
        max(namespace) as namespace,
        max(pod) as pod,
        count(*) as sample_count,
        sum(sample_seconds) as covered_seconds,
        sum(active_ratio_sample * sample_seconds) as active_weighted,
        sum(case when active_ratio_sample is not null then sample_seconds end) as active_seconds,
        sum(sm_active_sample * sample_seconds) as sm_weighted,
        sum(case when sm_active_sample is not null then sample_seconds end) as sm_seconds,
        sum(tensor_active_sample * sample_seconds) as tensor_weighted,
        sum(case when tensor_active_sample is not null then sample_seconds end) as tensor_seconds,
        sum(fb_used_mib * sample_seconds) as memory_weighted,
        sum(case when fb_used_mib is not null then sample_seconds end) as memory_seconds,
        sum(power_w * sample_seconds) as power_weighted,
        sum(case when power_w is not null then sample_seconds end) as power_seconds,
        sum(energy_mj) as energy_mj,
        -- a sample without a counter increase (no counter, or the GPU's first reading) integrates its power
        sum(case when energy_mj is null then power_w * sample_seconds end) as power_only_weighted,
        sum(case when energy_counter_reset then 1 else 0 end) as energy_counter_resets,
        max(used_fallback) as used_fallback,
        max(out_of_range) as out_of_range,
        max(mig_slices) as mig_slices,
        sum(util_invalid) as util_invalid_samples
    from clamped
    group by hour_start, usage_date, telemetry_source, host, gpu_uuid

),

ratios as (

    select
        hourly.*,
        least({{ decimal_divide('covered_seconds', 3600, 12) }}, cast(1 as decimal(38, 12))) as coverage_ratio,
        -- a metric no sample of the hour carried stays null, never 0
        case when active_seconds > 0 then {{ decimal_divide('active_weighted', 'active_seconds', 12) }} end
            as active_ratio,
        case when sm_seconds > 0 then {{ decimal_divide('sm_weighted', 'sm_seconds', 12) }} end as sm_active_ratio,
        case when tensor_seconds > 0 then {{ decimal_divide('tensor_weighted', 'tensor_seconds', 12) }} end
            as tensor_active_ratio,
        case when memory_seconds > 0 then {{ decimal_divide('memory_weighted', 'memory_seconds', 3) }} end
            as memory_used_mib,
        case when power_seconds > 0 then {{ decimal_divide('power_weighted', 'power_seconds', 3) }} end as power_w,
        {{ decimal_divide('energy_mj', 3600000000, 12) }} as counter_energy_kwh,
        {{ decimal_divide('power_only_weighted', 3600000, 12) }} as power_energy_kwh
    from hourly

),

resolved as (

    select
        ratios.*,
        coalesce(ratios.resource_id_label, host_map.resource_id) as resource_id,
        case
            when ratios.resource_id_label is not null then 'label'
            when host_map.resource_id is not null then 'host_map'
        end as resource_id_from,
        coalesce(gpu_model_names.gpu_model, ratios.gpu_model_name) as gpu_model
    from ratios
    left join host_map
        on ratios.host = host_map.host
        and (host_map.valid_from is null or ratios.usage_date >= host_map.valid_from)
        and (host_map.valid_to is null or ratios.usage_date < host_map.valid_to)
    left join gpu_model_names
        on {{ gpu_model_key('ratios.gpu_model_name') }} = gpu_model_names.gpu_model_key

),

-- A GPU watched by both DCGM and an nvidia-smi logger is counted once: DCGM's reading wins (it has
-- the profiling ratios), so its hours are never doubled in the marts.
one_source as (

    select
        resolved.*,
        row_number() over (
            partition by hour_start, gpu_uuid
            order by case when telemetry_source = 'dcgm_prometheus' then 0 else 1 end, telemetry_source, host
        ) as source_rank
    from resolved

),

final as (

    select
        hour_start,
        usage_date,
        telemetry_source,
        host,
        gpu_uuid,
        gpu_index,
        gpu_model_name,
        gpu_model,
        resource_id,
        resource_id_from,
        namespace,
        pod,
        cast(sample_count as bigint) as sample_count,
        cast(covered_seconds as bigint) as covered_seconds,
        coverage_ratio,
        active_ratio,
        used_fallback = 1 as util_is_fallback,
        sm_active_ratio,
        tensor_active_ratio,
        out_of_range = 1 as ratio_clamped,
        cast(mig_slices as bigint) as mig_slices,
        cast(util_invalid_samples as bigint) as util_invalid_samples,
        memory_used_mib,
        power_w,
        case
            when counter_energy_kwh is not null or power_energy_kwh is not null then
                cast(coalesce(counter_energy_kwh, 0) + coalesce(power_energy_kwh, 0) as decimal(38, 12))
        end as energy_kwh,
        counter_energy_kwh,
        cast(energy_counter_resets as bigint) as energy_counter_resets,
        coverage_ratio as telemetry_gpu_hours,
        {{ decimal_product(['active_ratio', 'coverage_ratio']) }} as active_gpu_hours,
        {{ decimal_product(['sm_active_ratio', 'coverage_ratio']) }} as effective_gpu_hours
    from one_source
    where source_rank = 1

)

select * from final
