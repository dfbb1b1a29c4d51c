{#-
    One row per Google Cloud billing export row (raw.gcp_billing_export), the columns the cost lines
    read, renamed: to their FOCUS name where the export's field is the FOCUS column as it stands,
    otherwise kept under the export's (flattened) name. The FOCUS rules, GPU models and commitment
    amortization are int_gcp__billing_cost_lines.
-#}

with

source as (

    select * from {{ source('raw', 'gcp_billing_export') }}

),

renamed as (

    select
        billing_account_id as BillingAccountId,
        billing_period_start as BillingPeriodStart,
        billing_period_end as BillingPeriodEnd,
        currency as BillingCurrency,
        usage_start_time as ChargePeriodStart,
        usage_end_time,
        sku_description as ChargeDescription,
        location_region as RegionId,
        location_zone as AvailabilityZone,
        service_description as ServiceName,
        sku_id as SkuId,
        project_id as SubAccountId,
        project_name as SubAccountName,
        resource_name as ResourceId,
        focus_tags as Tags,
        cost_type,
        adjustment_info_type,
        cost,
        cost_at_list,
        net_cost,
        credits_committed_usage_amount,
        credits_committed_spend_amount,
        commitment_credit_id,
        commitment_credit_name,
        usage_amount,
        usage_unit,
        usage_amount_in_pricing_units,
        usage_pricing_unit,
        price_effective_price,
        subscription_instance_id,
        resource_global_name,
        transaction_type,
        seller_name,
        x_extensions,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row
    from source

)

select * from renamed
