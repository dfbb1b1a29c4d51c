{#-
    The user's host → billed resource map, one row per host and validity window (valid_to exclusive).
    Used only for hosts whose metric labels name no resource.
-#}

with

source as (

    select * from {{ source('raw', 'telemetry_host_map') }}

),

final as (

    select
        trim(host) as host,
        trim(resource_id) as resource_id,
        provider_name,
        cast(valid_from as date) as valid_from,
        cast(valid_to as date) as valid_to,
        source_file,
        source_row,
        _load_id as load_id
    from source

)

select * from final
