{#-
    One row per FOCUS cost line as loaded (stg_focus__cost_and_usage; any FOCUS version, 1.0 to 1.3),
    with the FOCUS column names kept, the 1.3 provider rename reconciled, and the few fields the
    warehouse needs pulled out of the JSON columns: instance type, GPU count and model from the SKU.
    Columns FOCUS says must not be null but real files leave empty are derived as the spec defines them (ContractedCost,
    ListCost, ServiceCategory, and PricingCurrencyEffectiveCost where a rate is delivered); so are PricingCategory and
    CommitmentDiscountStatus on usage a commitment discount applied to (sources/focus/deliveries.py DERIVED_VALUES
    records those rows as warnings); enumerated values are spelled as the spec spells them.
-#}

{%- set usage_type_pattern = '^(?:[A-Z0-9]+-)?(BoxUsage|SpotUsage|HostBoxUsage|DedicatedUsage):(.+)$' -%}

with

source as (

    select * from {{ ref('stg_focus__cost_and_usage') }}

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
        {{ focus_enum_value('CapacityReservationStatus', ['Used', 'Unused']) }} as CapacityReservationStatus,
        ChargeCategory,
        ChargeClass,
        ChargeDescription,
        {{ focus_enum_value('ChargeFrequency', ['One-Time', 'Recurring', 'Usage-Based']) }} as ChargeFrequency,
        ChargePeriodEnd,
        ChargePeriodStart,
        {{ focus_enum_value('CommitmentDiscountCategory', ['Spend', 'Usage']) }} as CommitmentDiscountCategory,
        CommitmentDiscountId,
        CommitmentDiscountName,
        CommitmentDiscountQuantity,
        -- FOCUS: a usage line naming its commitment discount is Used, or Unused where ResourceId is the commitment's
        -- own id (how FOCUS marks the unused part); a file that leaves it out is read so (the reader warns)
        coalesce(
            {{ focus_enum_value('CommitmentDiscountStatus', ['Used', 'Unused']) }},
            case
                when ChargeCategory = 'Usage' and CommitmentDiscountId is not null
                    then case when lower(ResourceId) = lower(CommitmentDiscountId) then 'Unused' else 'Used' end
            end
        ) as CommitmentDiscountStatus,
        CommitmentDiscountType,
        CommitmentDiscountUnit,
        ConsumedQuantity,
        ConsumedUnit,
        -- FOCUS: ContractedCost and ListCost must not be null; without them a file states unit price × quantity,
        -- or for a charge without a unit price, BilledCost (Oracle's lines in FOCUS-Sample-Data leave them NULL)
        coalesce(
            ContractedCost, cast(ContractedUnitPrice * PricingQuantity as decimal(38, 12)), BilledCost
        ) as ContractedCost,
        ContractedUnitPrice,
        EffectiveCost,
        InvoiceId,
        InvoiceIssuerName,
        coalesce(ListCost, cast(ListUnitPrice * PricingQuantity as decimal(38, 12)), BilledCost) as ListCost,
        ListUnitPrice,
        -- FOCUS: Committed on a charge a commitment discount applies to (not its purchase), whatever the file says
        case
            when ChargeCategory = 'Usage' and CommitmentDiscountId is not null then 'Committed'
            else {{ focus_enum_value('PricingCategory', ['Standard', 'Dynamic', 'Committed', 'Other']) }}
        end as PricingCategory,
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
        -- FOCUS's own category for what fits no other
        coalesce(ServiceCategory, 'Other') as ServiceCategory,
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
        x_focus_version,
        x_load_id,
        x_source_file,
        x_source_row,
        x_ingested_at

    from source

)

select * from renamed
