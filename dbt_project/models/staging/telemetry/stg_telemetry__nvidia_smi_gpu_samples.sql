{#- nvidia-smi logs, one row per GPU, metric and sample, in the metric's own unit. -#}

with

source as (

    select * from {{ source('raw', 'nvidia_smi_gpu_samples') }}

),

renamed as (

    select
        source,
        host,
        gpu_uuid,
        gpu_index,
        gpu_model_name,
        metric,
        value,
        namespace,
        pod,
        resource_id,
        sampled_at,
        sample_seconds,
        _load_id as x_load_id,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
