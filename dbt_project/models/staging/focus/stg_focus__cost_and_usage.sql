{#-
    One row per FOCUS cost line as loaded (any FOCUS version, 1.0 to 1.3): the FOCUS columns of the one
    definition (var `focus_columns`) as the loader typed them, and the lineage columns under the
    project's x_ names. int_focus__cost_lines reconciles the versions and derives what real files leave out.
-#}

with

source as (

    select * from {{ source('raw', 'focus_cost_and_usage') }}

),

renamed as (

    select
        {%- for name, type in focus_columns() %}
        {{ name }},
        {%- endfor %}
        x_extensions,
        _focus_version as x_focus_version,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
