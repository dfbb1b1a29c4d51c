{#-
    One row per row of the loaded GPU cloud usage CSVs (raw.gpu_cloud_usage; layout in
    docs/gpu-cloud-usage-contract.md), under the contract's names, with the load's lineage columns
    (and the columns beyond the contract, `_extra`) renamed to the project's. Matching the free-text
    GPU model and the FOCUS columns are int_gpu_clouds__usage.
-#}

with

source as (

    select * from {{ source('raw', 'gpu_cloud_usage') }}

),

renamed as (

    select
        provider,
        account_id,
        account_name,
        resource_id,
        resource_name,
        region,
        gpu_model,
        gpu_count,
        pricing_model,
        usage_start,
        usage_end,
        usage_hours,
        unit_price,
        list_unit_price,
        cost,
        currency,
        description,
        tags,
        billing_account_key,
        billing_period_start,
        _extra as x_extensions,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
