{#-
    One row per FOCUS cost line as loaded (any FOCUS version, 1.0 to 1.3), with the FOCUS column
    names kept, the 1.3 provider rename reconciled, and the few fields the warehouse needs pulled
    out of the JSON columns: instance type, GPU count and model from the SKU.
-#}

{%- set usage_type_pattern = '^(?:[A-Z0-9]+-)?(BoxUsage|SpotUsage|HostBoxUsage|DedicatedUsage):(.+)$' -%}

with

source as (

    select * from {{ source('raw', 'focus_cost_and_usage') }}

),

renamed as (

    select
        -- FOCUS 1.2 columns (1.0 and 1.1 files leave the newer ones null)
        AvailabilityZone,
        BilledCost,
        BillingAccountId,
        BillingAccountName,
        BillingAccountType,
        BillingCurrency,
        BillingPeriodEnd,
        BillingPeriodStart,
        CapacityReservationId,
        CapacityReservationStatus,
        ChargeCategory,
        ChargeClass,
        ChargeDescription,
        ChargeFrequency,
        ChargePeriodEnd,
        ChargePeriodStart,
        CommitmentDiscountCategory,
        CommitmentDiscountId,
        CommitmentDiscountName,
        CommitmentDiscountQuantity,
        CommitmentDiscountStatus,
        CommitmentDiscountType,
        CommitmentDiscountUnit,
        ConsumedQuantity,
        ConsumedUnit,
        ContractedCost,
        ContractedUnitPrice,
        EffectiveCost,
        InvoiceId,
        InvoiceIssuerName,
        ListCost,
        ListUnitPrice,
        PricingCategory,
        PricingCurrency,
        PricingCurrencyContractedUnitPrice,
        -- Microsoft's FocusCost 1.2 has PricingCurrency but no PricingCurrencyEffectiveCost: its x_BillingExchangeRate
        -- converts pricing to billing currency
        coalesce(
            PricingCurrencyEffectiveCost,
            case
                when PricingCurrency <> BillingCurrency
                    then {{ decimal_divide(
                        'EffectiveCost',
                        dbt.safe_cast(json_extract_string('x_extensions', 'x_BillingExchangeRate'), 'decimal(38, 12)'),
                        12,
                    ) }}
            end
        ) as PricingCurrencyEffectiveCost,
        PricingCurrencyListUnitPrice,
        PricingQuantity,
        PricingUnit,
        -- FOCUS 1.3 renames ProviderName to ServiceProviderName: a file may fill either one
        coalesce(ServiceProviderName, ProviderName) as ProviderName,
        coalesce(PublisherName, ServiceProviderName, ProviderName) as PublisherName,
        RegionId,
        RegionName,
        ResourceId,
        ResourceName,
        ResourceType,
        ServiceCategory,
        ServiceName,
        ServiceSubcategory,
        SkuId,
        SkuMeter,
        SkuPriceDetails,
        SkuPriceId,
        SubAccountId,
        SubAccountName,
        SubAccountType,
        Tags,

        -- FOCUS 1.3 additions (null in older files)
        ServiceProviderName,
        HostProviderName,
        ContractApplied,
        AllocatedMethodId,
        AllocatedMethodDetails,
        AllocatedResourceId,
        AllocatedResourceName,
        AllocatedTags,

        -- project columns
        'focus' as x_source,
        coalesce(
            nullif(trim({{ json_extract_string('SkuPriceDetails', 'InstanceType') }}), ''),
            {{ regexp_extract_group(json_extract_string('x_extensions', 'x_UsageType'), usage_type_pattern, 2) }},
            -- AWS FOCUS 1.2 (FOCUS_1_2_AWS) dropped x_UsageType: the usage type is its SkuMeter
            {{ regexp_extract_group('SkuMeter', usage_type_pattern, 2) }},
            nullif(trim({{ json_extract_string('x_extensions', 'x_InstanceType') }}), ''),
            -- Microsoft FocusCost: the VM size in SkuPriceDetails (1.2-preview) or x_SkuDetails (1.0), else the meter name
            case
                when coalesce(ServiceProviderName, ProviderName) = 'Microsoft'
                    then {{ azure_instance_type(
                        ['SkuPriceDetails', json_extract_string('x_extensions', 'x_SkuDetails')],
                        json_extract_string('x_extensions', 'x_SkuMeterCategory'),
                        json_extract_string('x_extensions', 'x_SkuMeterName'),
                    ) }}
            end
        ) as x_instance_type,
        {{ dbt.safe_cast(json_extract_string('SkuPriceDetails', 'GpuCount'), 'decimal(18, 6)') }} as x_sku_gpu_count,
        nullif(trim({{ json_extract_string('SkuPriceDetails', 'x_GpuModel') }}), '') as x_sku_gpu_model,
        x_extensions,
        _focus_version as x_focus_version,
        _load_id as x_load_id,
        _source_file as x_source_file,
        _source_row as x_source_row,
        _ingested_at as x_ingested_at

    from source

)

select * from renamed
