{#-
    The owned GPU servers of the latest inventory, with the free-text GPU model matched to the GPU
    model vocabulary (seed `gpu_models`) by name or through the seed `gpu_model_aliases`; text that
    matches neither is kept as written, and the GPU model tests fail until an alias is added.
-#}

with

assets as (

    select * from {{ ref('stg_onprem__gpu_assets') }}

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

resolved as (

    select
        assets.asset_id,
        assets.site,
        assets.hostname,
        coalesce(gpu_model_names.gpu_model, trim(assets.gpu_model_as_delivered)) as gpu_model,
        assets.gpu_model_as_delivered,
        assets.gpu_count,
        assets.purchase_date,
        assets.purchase_price,
        assets.currency,
        assets.depreciation_years,
        assets.residual_value,
        assets.power_draw_kw,
        assets.pue,
        assets.electricity_price_per_kwh,
        assets.colocation_price_per_kw_month,
        assets.maintenance_per_year,
        assets.team,
        assets.project,
        assets.tags,
        assets.retired_date,
        assets.x_extensions,
        assets.x_load_id,
        assets.x_source_file,
        assets.x_source_row,
        assets.x_ingested_at
    from assets
    left join gpu_model_names
        on {{ gpu_model_key('assets.gpu_model_as_delivered') }} = gpu_model_names.gpu_model_key

)

select * from resolved
