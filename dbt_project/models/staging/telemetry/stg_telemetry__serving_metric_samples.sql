{#- vLLM and SGLang serving counters, one row per series and sample, the value as the server reported it. -#}

with

source as (

    select * from {{ source('raw', 'serving_metric_samples') }}

),

renamed as (

    select
        sample_date,
        sampled_at,
        source as telemetry_source,
        engine,
        metric,
        model_name,
        namespace,
        pod,
        engine_index,
        finished_reason,
        value,
        source_ref,
        _load_id as x_load_id,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
