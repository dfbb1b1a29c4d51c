{#-
    One FOCUS-shaped cost line per row of the GPU cloud usage CSV (stg_gpu_clouds__usage: Lambda,
    CoreWeave, RunPod, Vast.ai…; layout in docs/gpu-cloud-usage-contract.md). The file states what FOCUS needs directly:
    the usage row is the charge, its hours are the pricing quantity and what was billed is the cost.
    The one thing made comparable across providers is the GPU model, written as free text: it is
    matched to the GPU model vocabulary (seed `gpu_models`) by name or through the seed
    `gpu_model_aliases`; text that matches neither is kept as written, and the GPU model tests fail
    until an alias is added. The file names GPUs per resource, so the GPU count comes from the row,
    not from an instance type.
-#}

with

usage_rows as (

    select * from {{ ref('stg_gpu_clouds__usage') }}

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

with_gpu_model as (

    select
        usage_rows.*,
        coalesce(gpu_model_names.gpu_model, trim(usage_rows.gpu_model)) as normalised_gpu_model
    from usage_rows
    left join gpu_model_names
        on {{ gpu_model_key('usage_rows.gpu_model') }} = gpu_model_names.gpu_model_key

),

renamed as (

    select
        cost as BilledCost,
        account_id as BillingAccountId,
        account_name as BillingAccountName,
        currency as BillingCurrency,
        cast({{ dbt.dateadd('month', 1, 'billing_period_start') }} as timestamp) as BillingPeriodEnd,
        billing_period_start as BillingPeriodStart,
        'Usage' as ChargeCategory,
        description as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        usage_end as ChargePeriodEnd,
        usage_start as ChargePeriodStart,
        usage_hours as ConsumedQuantity,
        'Hours' as ConsumedUnit,
        cost as ContractedCost,
        unit_price as ContractedUnitPrice,
        cost as EffectiveCost,
        provider as InvoiceIssuerName,
        -- the on-demand price of the same hours, when the file states it (spot and reserved rows)
        coalesce({{ decimal_product(['list_unit_price', 'usage_hours']) }}, cost) as ListCost,
        coalesce(list_unit_price, unit_price) as ListUnitPrice,
        case pricing_model
            when 'on_demand' then 'Standard'
            when 'spot' then 'Dynamic'
            when 'reserved' then 'Committed'
        end as PricingCategory,
        usage_hours as PricingQuantity,
        'Hours' as PricingUnit,
        provider as ProviderName,
        provider as PublisherName,
        region as RegionId,
        region as RegionName,
        resource_id as ResourceId,
        resource_name as ResourceName,
        'Compute' as ServiceCategory,
        'GPU Instances' as ServiceName,
        tags as Tags,

        -- FOCUS 1.3 additions
        provider as ServiceProviderName,

        -- project columns
        'gpu_cloud_usage' as x_source,
        cast(gpu_count as decimal(18, 6)) as x_sku_gpu_count,
        normalised_gpu_model as x_sku_gpu_model,
        x_extensions,
        gpu_model as x_gpu_model_as_delivered,
        pricing_model as x_pricing_model,
        billing_account_key as x_billing_account_key,
        x_load_id,
        x_source_file,
        x_source_row,
        x_ingested_at

    from with_gpu_model

)

select * from renamed
