{#-
    One row per owned GPU server in the latest inventory delivery (each delivery replaces the whole
    inventory). The inventory states purchase and running-cost facts, not charges: the daily cost
    lines are worked out in int_onprem__daily_cost_lines. Here the dates become dates and the
    free-text GPU model is matched to the GPU model vocabulary (seed `gpu_models`) by name or through
    the seed `gpu_model_aliases`; text that matches neither is kept as written, and the GPU model
    tests fail until an alias is added.
-#}

with

source as (

    select * from {{ source('raw', 'onprem_gpu_assets') }}

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

renamed as (

    select
        source.asset_id,
        source.site,
        source.hostname,
        coalesce(gpu_model_names.gpu_model, trim(source.gpu_model)) as gpu_model,
        source.gpu_model as gpu_model_as_delivered,
        source.gpu_count,
        cast(source.purchase_date as date) as purchase_date,
        source.purchase_price,
        source.currency,
        source.depreciation_years,
        source.residual_value,
        source.power_draw_kw,
        source.pue,
        source.electricity_price_per_kwh,
        source.colocation_price_per_kw_month,
        source.maintenance_per_year,
        source.team,
        source.project,
        source.tags,
        cast(source.retired_date as date) as retired_date,
        source._extra as x_extensions,
        source._load_id as x_load_id,
        source._source_file as x_source_file,
        source._source_row as x_source_row,
        source._ingested_at as x_ingested_at
    from source
    left join gpu_model_names
        on {{ gpu_model_key('source.gpu_model') }} = gpu_model_names.gpu_model_key

)

select * from renamed
