{#-
    One row per owned GPU server in the latest inventory delivery (each delivery replaces the whole
    inventory), with its dates as dates. The inventory states purchase and running-cost facts, not
    charges; int_onprem__gpu_assets resolves the free-text GPU model and int_onprem__daily_cost_lines
    works out the daily cost lines.
-#}

with

source as (

    select * from {{ source('raw', 'onprem_gpu_assets') }}

),

renamed as (

    select
        asset_id,
        site,
        hostname,
        gpu_model as gpu_model_as_delivered,
        gpu_count,
        cast(purchase_date as date) as purchase_date,
        purchase_price,
        currency,
        depreciation_years,
        residual_value,
        power_draw_kw,
        pue,
        electricity_price_per_kwh,
        colocation_price_per_kw_month,
        maintenance_per_year,
        team,
        project,
        tags,
        cast(retired_date as date) as retired_date,
        _extra as x_extensions,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
