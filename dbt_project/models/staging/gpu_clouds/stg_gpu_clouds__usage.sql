{#-
    One FOCUS-shaped cost line per row of the GPU cloud usage CSV (Lambda, CoreWeave, RunPod,
    Vast.ai…; layout in docs/gpu-cloud-usage-contract.md). The file states what FOCUS needs directly:
    the usage row is the charge, its hours are the pricing quantity and what was billed is the cost.
    The one thing made comparable across providers is the GPU model, written as free text: it is
    matched to the GPU model vocabulary (seed `gpu_models`) by name or through the seed
    `gpu_model_aliases`; text that matches neither is kept as written, and the GPU model tests fail
    until an alias is added. The file names GPUs per resource, so the GPU count comes from the row,
    not from an instance type.
-#}

with

source as (

    select * from {{ source('raw', 'gpu_cloud_usage') }}

),

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

with_gpu_model as (

    select
        source.*,
        coalesce(gpu_model_names.gpu_model, trim(source.gpu_model)) as normalised_gpu_model
    from source
    left join gpu_model_names
        on {{ gpu_model_key('source.gpu_model') }} = gpu_model_names.gpu_model_key

),

renamed as (

    select
        cast(null as varchar) as AvailabilityZone,
        cost as BilledCost,
        account_id as BillingAccountId,
        account_name as BillingAccountName,
        cast(null as varchar) as BillingAccountType,
        currency as BillingCurrency,
        cast({{ dbt.dateadd('month', 1, 'billing_period_start') }} as timestamp) as BillingPeriodEnd,
        billing_period_start as BillingPeriodStart,
        cast(null as varchar) as CapacityReservationId,
        cast(null as varchar) as CapacityReservationStatus,
        'Usage' as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        description as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        usage_end as ChargePeriodEnd,
        usage_start as ChargePeriodStart,
        cast(null as varchar) as CommitmentDiscountCategory,
        cast(null as varchar) as CommitmentDiscountId,
        cast(null as varchar) as CommitmentDiscountName,
        cast(null as decimal(38, 12)) as CommitmentDiscountQuantity,
        cast(null as varchar) as CommitmentDiscountStatus,
        cast(null as varchar) as CommitmentDiscountType,
        cast(null as varchar) as CommitmentDiscountUnit,
        usage_hours as ConsumedQuantity,
        'Hours' as ConsumedUnit,
        cost as ContractedCost,
        unit_price as ContractedUnitPrice,
        cost as EffectiveCost,
        cast(null as varchar) as InvoiceId,
        provider as InvoiceIssuerName,
        -- the on-demand price of the same hours, when the file states it (spot and reserved rows)
        coalesce(cast(list_unit_price * usage_hours as decimal(38, 12)), cost) as ListCost,
        coalesce(list_unit_price, unit_price) as ListUnitPrice,
        case pricing_model
            when 'on_demand' then 'Standard'
            when 'spot' then 'Dynamic'
            when 'reserved' then 'Committed'
        end as PricingCategory,
        cast(null as varchar) as PricingCurrency,
        cast(null as decimal(38, 12)) as PricingCurrencyContractedUnitPrice,
        cast(null as decimal(38, 12)) as PricingCurrencyEffectiveCost,
        cast(null as decimal(38, 12)) as PricingCurrencyListUnitPrice,
        usage_hours as PricingQuantity,
        'Hours' as PricingUnit,
        provider as ProviderName,
        provider as PublisherName,
        region as RegionId,
        region as RegionName,
        resource_id as ResourceId,
        resource_name as ResourceName,
        cast(null as varchar) as ResourceType,
        'Compute' as ServiceCategory,
        'GPU Instances' as ServiceName,
        cast(null as varchar) as ServiceSubcategory,
        cast(null as varchar) as SkuId,
        cast(null as varchar) as SkuMeter,
        cast(null as varchar) as SkuPriceDetails,
        cast(null as varchar) as SkuPriceId,
        cast(null as varchar) as SubAccountId,
        cast(null as varchar) as SubAccountName,
        cast(null as varchar) as SubAccountType,
        tags as Tags,

        -- FOCUS 1.3 additions
        provider as ServiceProviderName,
        cast(null as varchar) as HostProviderName,
        cast(null as varchar) as ContractApplied,
        cast(null as varchar) as AllocatedMethodId,
        cast(null as varchar) as AllocatedMethodDetails,
        cast(null as varchar) as AllocatedResourceId,
        cast(null as varchar) as AllocatedResourceName,
        cast(null as varchar) as AllocatedTags,

        -- project columns
        'gpu_cloud_usage' as x_source,
        cast(null as varchar) as x_instance_type,
        cast(gpu_count as decimal(18, 6)) as x_sku_gpu_count,
        normalised_gpu_model as x_sku_gpu_model,
        _extra as x_extensions,
        gpu_model as x_gpu_model_as_delivered,
        pricing_model as x_pricing_model,
        billing_account_key as x_billing_account_key,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at

    from with_gpu_model

)

select * from renamed
