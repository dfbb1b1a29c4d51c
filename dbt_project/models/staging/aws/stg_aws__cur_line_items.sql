{#-
    One row per AWS Cost and Usage Report line item as loaded (raw.aws_cur_line_items): the columns the
    cost lines read, under their CUR 2.0 names (the loader gives CUR 2.0, legacy CUR CSV and legacy
    Athena/Parquet that one shape), with the load's lineage columns renamed to the project's. The FOCUS
    rules and the amortization are int_aws__cur_cost_lines.
-#}

with

source as (

    select * from {{ source('raw', 'aws_cur_line_items') }}

),

renamed as (

    select
        identity_line_item_id,
        bill_invoice_id,
        bill_invoicing_entity,
        bill_billing_entity,
        bill_bill_type,
        bill_payer_account_id,
        bill_payer_account_name,
        bill_billing_period_start_date,
        bill_billing_period_end_date,
        line_item_usage_account_id,
        line_item_usage_account_name,
        line_item_line_item_type,
        line_item_usage_start_date,
        line_item_usage_end_date,
        line_item_product_code,
        line_item_usage_type,
        line_item_operation,
        line_item_availability_zone,
        line_item_resource_id,
        line_item_usage_amount,
        line_item_currency_code,
        line_item_unblended_cost,
        line_item_net_unblended_cost,
        line_item_line_item_description,
        line_item_legal_entity,
        pricing_public_on_demand_cost,
        pricing_public_on_demand_rate,
        pricing_unit,
        pricing_purchase_option,
        pricing_rate_code,
        product_servicecode,
        product_sku,
        product_instance_type,
        product_region_code,
        product_location,
        reservation_reservation_a_r_n,
        reservation_effective_cost,
        reservation_net_effective_cost,
        reservation_unused_amortized_upfront_fee_for_billing_period,
        reservation_net_unused_amortized_upfront_fee_for_billing_period,
        reservation_unused_recurring_fee,
        reservation_net_unused_recurring_fee,
        savings_plan_savings_plan_a_r_n,
        savings_plan_savings_plan_effective_cost,
        savings_plan_net_savings_plan_effective_cost,
        savings_plan_used_commitment,
        savings_plan_total_commitment_to_date,
        capacity_reservation_capacity_reservation_arn,
        capacity_reservation_capacity_reservation_status,
        split_line_item_parent_resource_id,
        split_line_item_reserved_usage,
        split_line_item_actual_usage,
        split_line_item_split_usage,
        split_line_item_split_usage_ratio,
        split_line_item_split_cost,
        split_line_item_unused_cost,
        split_line_item_net_split_cost,
        split_line_item_net_unused_cost,
        split_line_item_public_on_demand_split_cost,
        split_line_item_public_on_demand_unused_cost,
        product,
        resource_tags,
        _cur_format as x_cur_format,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at
    from source

)

select * from renamed
