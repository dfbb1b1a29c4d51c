{#-
    One row per line of the loaded Oracle Cloud Infrastructure cost reports, as the loader typed them;
    the lineage columns get the project's x_ names. int_oci__cost_lines maps them to FOCUS.
-#}

with

source as (

    select * from {{ source('raw', 'oci_cost_report') }}

),

renamed as (

    select
        line_item_reference_no,
        line_item_tenant_id,
        line_item_interval_usage_start,
        line_item_interval_usage_end,
        product_service,
        product_compartment_id,
        product_compartment_name,
        product_region,
        product_availability_domain,
        product_resource_id,
        usage_billed_quantity,
        usage_billed_quantity_overage,
        cost_subscription_id,
        cost_product_sku,
        product_description,
        cost_unit_price,
        cost_unit_price_overage,
        cost_my_cost,
        cost_my_cost_overage,
        cost_currency_code,
        cost_billing_unit_readable,
        cost_sku_unit_description,
        cost_overage_flag,
        line_item_is_correction,
        line_item_backreference_no,
        tags,
        extra_columns,
        billing_period_start,
        billing_period_end,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _load_id as x_load_id,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
