{#-
    Azure Cost Management ActualCost and AmortizedCost exports as FOCUS 1.2 cost lines, combined the
    way Microsoft converts them (finops-toolkit `docs-mslearn/focus/convert.md`):

    Which rows. Per billing account × billing period:
      - both exports loaded: every amortized row, plus the actual rows that buy or refund a
        reservation or savings plan (ChargeType Purchase/Refund, PricingModel Reservation/SavingsPlan).
        The amortized export has no purchase rows; every other actual row has its amortized twin.
      - only the actual export loaded: all its rows. BilledCost = EffectiveCost = the row's cost,
        except reservation/savings plan purchases, whose EffectiveCost is 0: FOCUS counts a prepaid
        commitment in EffectiveCost only as it is used, and without the amortized export the daily
        share is unknown (usage it covered costs 0 in the actual export). Effective spend is therefore
        understated by the commitments bought until the amortized export arrives, never doubled.
      - only the amortized export loaded: all its rows (purchases missing from BilledCost).

    Money. BilledCost (invoice basis) is the cost, except 0 on usage covered by a reservation or savings
    plan and on unused commitment rows (the purchase carries that money). EffectiveCost (amortized) is
    the cost, except 0 on commitment purchases and refunds. ListCost is PayGCostInBillingCurrency, else
    PayGPrice × Quantity, else BilledCost (FOCUS rule for charges without a list price); ContractedCost
    likewise from UnitPrice. MCA prices are in the pricing currency and are converted with
    ExchangeRatePricingToBilling. The FOCUS PricingCurrency* columns keep them in that currency:
    PricingCurrencyEffectiveCost is CostInPricingCurrency (EffectiveCost ÷ the rate where the export has no
    such column, 0 on commitment purchases); with neither, it stays null and the FOCUS export states the
    line in its billing currency (the reader warns).

    Quantities. Azure prices in blocks (`1 Hour`, `10 Hours`, `10K`) and Quantity counts blocks
    (cost = Quantity × EffectivePrice in real EA exports), so hourly meters are turned into hours:
    PricingQuantity = Quantity × block size, PricingUnit `Hours`, unit prices ÷ block size. GPU-hours
    downstream need hours. (Microsoft's convert.md divides instead, calling Quantity the consumed
    quantity; the real EA samples contradict that.) Other units are passed through.

    Also: inclusive Azure end dates + 1 day (FOCUS ends are exclusive); ChargeCategory from ChargeType;
    PricingCategory from PricingModel (OnDemand → Standard, Spot or a ` Spot` / ` Low Priority` meter →
    Dynamic, Reservation / SavingsPlan → Committed, except the commitment's own purchase, which FOCUS
    prices Standard); commitment columns from benefitId (ReservationId in older exports). The reader gives
    every row naming a reservation or savings plan that commitment's PricingModel where the export leaves it
    empty or names another (sources/azure/cost_details.py, with a warning), so usage a commitment covered is
    always Committed, with CommitmentDiscountStatus Used (Unused on UnusedReservation / UnusedSavingsPlan);
    x_instance_type from AdditionalInfo, the VM meter name, or the size a reservation purchase names (so
    a GPU reservation's instalment counts as GPU spend on the billed basis).

    Reconciliation (tests/assert_marts_reconcile_to_raw.sql). Lines carry the export they were read from
    in x_source, and each raw table is stated row by row, per billing period and currency:
      - azure_amortized: every row is one line; EffectiveCost = its cost; BilledCost = its cost except
        the commitment-covered rows above (0).
      - azure_actual: a row is a line when it buys or refunds a commitment, or when its account × period
        has no amortized export; BilledCost = its cost; EffectiveCost = its cost except on those purchases.
    Hence, where both exports exist, Σ EffectiveCost of the Azure lines = the amortized export's total
    exactly, and Σ BilledCost = the actual export's total as long as Azure's two exports agree on the rows
    no commitment touched (Azure's own invariant, checked end to end on the test fixtures).
-#}

{%- set commitment_models = "('reservation', 'savingsplan')" -%}

with

actual as (

    select *, 'azure_actual' as x_source
    from {{ ref('stg_azure__actual_cost') }}

),

amortized as (

    select *, 'azure_amortized' as x_source
    from {{ ref('stg_azure__amortized_cost') }}

),

amortized_periods as (

    select distinct _billing_account_id, _billing_period_start
    from amortized

),

actual_kept as (

    select actual.*
    from actual
    left join amortized_periods
        on actual._billing_account_id = amortized_periods._billing_account_id
        and actual._billing_period_start = amortized_periods._billing_period_start
    where amortized_periods._billing_account_id is null
        or (
            lower(trim(actual.ChargeType)) in ('purchase', 'refund')
            and lower(replace(trim(actual.PricingModel), ' ', '')) in {{ commitment_models }}
        )

),

source as (

    select * from amortized
    union all
    select * from actual_kept

),

classified as (

    select
        *,
        lower(trim(ChargeType)) as charge_type_key,
        lower(replace(trim(PricingModel), ' ', '')) as pricing_model_key,
        lower(coalesce(benefitId, '')) as benefit_key,
        -- `1 Hour`, `10 Hours`, `100 Hours`: the block of hours one unit of Quantity stands for
        {{ regexp_extract_group('lower(trim(UnitOfMeasure))', '^(([0-9]+)?[ /]*hours?)$', 1) }} as hourly_unit,
        cast(
            coalesce({{ regexp_extract_group('lower(trim(UnitOfMeasure))', '^([0-9]+)[ /]*hours?$', 1) }}, '1')
            as integer
        ) as hour_block
    from source

),

flagged as (

    select
        *,
        pricing_model_key in {{ commitment_models }} as is_commitment,
        pricing_model_key in {{ commitment_models }} and charge_type_key in ('purchase', 'refund')
            as is_commitment_purchase,
        pricing_model_key in {{ commitment_models }}
            and charge_type_key in ('usage', 'unusedreservation', 'unusedsavingsplan')
            as is_commitment_covered,
        case
            when charge_type_key is null or charge_type_key = 'usage' then 'Usage'
            when charge_type_key = 'purchase' then 'Purchase'
            when charge_type_key = 'credit' then 'Credit'
            when charge_type_key = 'tax' then 'Tax'
            when charge_type_key in ('unusedreservation', 'unusedsavingsplan') then 'Usage'
            when charge_type_key = 'refund' then 'Purchase'
            else 'Adjustment'
        end as charge_category,
        -- MCA prices (UnitPrice, PayGPrice) are in the pricing currency; EA's in the billing currency
        case
            when PricingCurrency is null or PricingCurrency = BillingCurrencyCode then cast(1 as decimal(38, 12))
            else ExchangeRatePricingToBilling
        end as pricing_to_billing_rate
    from classified

),

costed as (

    select
        *,
        case when is_commitment_covered then cast(0 as decimal(38, 12)) else CostInBillingCurrency end
            as billed_cost,
        case when is_commitment_purchase then cast(0 as decimal(38, 12)) else CostInBillingCurrency end
            as effective_cost,
        case
            when charge_category = 'Tax' then null
            when hourly_unit is not null then Quantity * hour_block
            else Quantity
        end as pricing_quantity,
        case
            when charge_category = 'Tax' or Quantity is null then null
            when hourly_unit is not null then 'Hours'
            -- purchases often carry a quantity but no unit: a count of items
            else coalesce(UnitOfMeasure, 'Units')
        end as pricing_unit,
        case
            when benefit_key like '%/microsoft.capacity/%' then 'Reservation'
            when benefit_key like '%/microsoft.billingbenefits/%' then 'Savings Plan'
            when benefitId is null and ReservationId is not null then 'Reservation'
        end as commitment_discount_type
    from flagged

),

renamed as (

    select
        -- FOCUS 1.2 columns
        AvailabilityZone,
        cast(billed_cost as decimal(38, 12)) as BilledCost,
        coalesce(BillingProfileId, _billing_account_id) as BillingAccountId,
        case when BillingProfileId is not null then BillingProfileName else BillingAccountName end
            as BillingAccountName,
        BillingCurrencyCode as BillingCurrency,
        cast(
            coalesce(
                {{ dbt.dateadd('day', 1, 'BillingPeriodEndDate') }},
                {{ dbt.dateadd('month', 1, '_billing_period_start') }}
            ) as timestamp
        ) as BillingPeriodEnd,
        cast(_billing_period_start as timestamp) as BillingPeriodStart,
        charge_category as ChargeCategory,
        case when charge_type_key = 'refund' then 'Correction' end as ChargeClass,
        -- older pay-as-you-go layouts have no ProductName: the meter, as ProductName words it (FOCUS: SHOULD NOT be null)
        coalesce(
            {{ blank_as_null('ProductName') }},
            case when MeterName is not null then trim({{ dbt.concat([
                "coalesce(MeterCategory, '')", "' '", "coalesce(MeterSubCategory, '')", "' - '", "MeterName",
            ]) }}) end
        ) as ChargeDescription,
        case lower(trim(Frequency))
            when 'onetime' then 'One-Time'
            when 'recurring' then 'Recurring'
            when 'usagebased' then 'Usage-Based'
        end as ChargeFrequency,
        cast({{ dbt.dateadd('day', 1, 'Date') }} as timestamp) as ChargePeriodEnd,
        cast(Date as timestamp) as ChargePeriodStart,
        case commitment_discount_type
            when 'Reservation' then 'Usage'
            when 'Savings Plan' then 'Spend'
        end as CommitmentDiscountCategory,
        case when commitment_discount_type is not null then coalesce(benefitId, ReservationId) end
            as CommitmentDiscountId,
        case when commitment_discount_type is not null then coalesce(benefitName, ReservationName) end
            as CommitmentDiscountName,
        case
            when commitment_discount_type is null then null
            when charge_type_key in ('unusedreservation', 'unusedsavingsplan') then 'Unused'
            when charge_category = 'Usage' and is_commitment then 'Used'
        end as CommitmentDiscountStatus,
        commitment_discount_type as CommitmentDiscountType,
        case
            when charge_category = 'Usage'
                and coalesce(charge_type_key, '') not in ('unusedreservation', 'unusedsavingsplan')
                then cast(pricing_quantity as decimal(38, 12))
        end as ConsumedQuantity,
        case
            when charge_category = 'Usage'
                and coalesce(charge_type_key, '') not in ('unusedreservation', 'unusedsavingsplan')
                then pricing_unit
        end as ConsumedUnit,
        cast(
            coalesce({{ decimal_product(['UnitPrice', 'Quantity', 'pricing_to_billing_rate']) }}, billed_cost)
            as decimal(38, 12)
        ) as ContractedCost,
        {{ decimal_divide('UnitPrice * pricing_to_billing_rate', 'hour_block', 12) }} as ContractedUnitPrice,
        cast(effective_cost as decimal(38, 12)) as EffectiveCost,
        InvoiceId,
        coalesce(PartnerName, 'Microsoft') as InvoiceIssuerName,
        cast(
            coalesce(
                PayGCostInBillingCurrency,
                {{ decimal_product(['PayGPrice', 'Quantity', 'pricing_to_billing_rate']) }},
                billed_cost
            ) as decimal(38, 12)
        ) as ListCost,
        {{ decimal_divide('PayGPrice * pricing_to_billing_rate', 'hour_block', 12) }} as ListUnitPrice,
        case
            when charge_category = 'Tax' then null
            when is_commitment_purchase then 'Standard'
            when is_commitment then 'Committed'
            when pricing_model_key = 'spot' then 'Dynamic'
            when (pricing_model_key is null or pricing_model_key = 'ondemand')
                and (trim(MeterName) like '% Spot' or trim(MeterName) like '% Low Priority') then 'Dynamic'
            when pricing_model_key is null or pricing_model_key = 'ondemand' then 'Standard'
            else 'Other'
        end as PricingCategory,
        PricingCurrency,
        -- UnitPrice and PayGPrice are in PricingCurrency, or in the billing currency where there is none
        {{ decimal_divide('UnitPrice', 'hour_block', 12) }} as PricingCurrencyContractedUnitPrice,
        cast(
            case
                when PricingCurrency is null or PricingCurrency = BillingCurrencyCode then effective_cost
                when is_commitment_purchase then 0
                else coalesce(
                    CostInPricingCurrency, {{ decimal_divide('effective_cost', 'ExchangeRatePricingToBilling', 12) }}
                )
            end as decimal(38, 12)
        ) as PricingCurrencyEffectiveCost,
        {{ decimal_divide('PayGPrice', 'hour_block', 12) }} as PricingCurrencyListUnitPrice,
        cast(pricing_quantity as decimal(38, 12)) as PricingQuantity,
        pricing_unit as PricingUnit,
        'Microsoft' as ProviderName,
        coalesce(PublisherName, 'Microsoft') as PublisherName,
        lower(replace(trim(ResourceLocation), ' ', '')) as RegionId,
        ResourceId,
        coalesce(ResourceName, {{ dbt.split_part('ResourceId', "'/'", -1) }}) as ResourceName,
        case
            when MeterCategory in ('Virtual Machines', 'Virtual Machines Licenses', 'Cloud Services',
                                   'Container Instances', 'Azure App Service', 'Functions', 'Batch')
                then 'Compute'
            when MeterCategory in ('Storage', 'Backup', 'Azure NetApp Files')
                then 'Storage'
            when MeterCategory in ('Virtual Network', 'Bandwidth', 'Load Balancer', 'VPN Gateway',
                                   'Azure DNS', 'Network Watcher', 'Azure Firewall', 'Application Gateway',
                                   'Azure Front Door Service', 'Content Delivery Network', 'ExpressRoute',
                                   'Azure Bastion', 'NAT Gateway')
                then 'Networking'
            when MeterCategory in ('SQL Database', 'SQL Managed Instance', 'Azure Cosmos DB',
                                   'Azure Database for MySQL', 'Azure Database for PostgreSQL', 'Redis Cache')
                then 'Databases'
            when MeterCategory in ('Azure Machine Learning', 'Cognitive Services', 'Azure OpenAI',
                                   'Foundry Models', 'Foundry Tools')
                then 'AI and Machine Learning'
            when MeterCategory in ('Azure Data Factory v2', 'Azure Synapse Analytics', 'Azure Databricks',
                                   'HDInsight', 'Event Hubs', 'Stream Analytics')
                then 'Analytics'
            when MeterCategory in ('Log Analytics', 'Azure Monitor', 'Automation')
                then 'Management and Governance'
            when MeterCategory in ('Advanced Threat Protection', 'Advanced Data Security',
                                   'Microsoft Defender for Cloud', 'Key Vault', 'Sentinel')
                then 'Security'
            when MeterCategory in ('Service Bus', 'Logic Apps', 'API Management', 'Event Grid')
                then 'Integration'
            else 'Other'
        end as ServiceCategory,
        coalesce(MeterCategory, ConsumedService, ProductName) as ServiceName,
        case when MeterCategory = 'Virtual Machines' then 'Virtual Machines' end as ServiceSubcategory,
        ProductId as SkuId,
        MeterName as SkuMeter,
        SubscriptionId as SubAccountId,
        SubscriptionName as SubAccountName,
        Tags,

        -- FOCUS 1.3 additions
        'Microsoft' as ServiceProviderName,
        'Microsoft' as HostProviderName,

        -- project columns
        x_source,
        coalesce(
            {{ azure_instance_type(['AdditionalInfo'], 'MeterCategory', 'MeterName') }},
            -- reservation purchases name the size they reserve: `Reserved VM Instance, Standard_…, US East, 1 Year`
            case
                when is_commitment_purchase
                    then {{ regexp_extract_group('coalesce(ProductOrderName, ProductName)',
                                                  '^Reserved VM Instance, (Standard_[A-Za-z0-9_]+),', 1) }}
            end
        ) as x_instance_type,
        {{ json_object_of_text({
            'MeterCategory': 'MeterCategory',
            'MeterSubCategory': 'MeterSubCategory',
            'MeterName': 'MeterName',
            'MeterId': 'MeterId',
            'UnitOfMeasure': 'UnitOfMeasure',
            'ResourceGroup': 'ResourceGroup',
            'PricingModel': 'PricingModel',
            'ChargeType': 'ChargeType',
            'CostCenter': 'CostCenter',
            'InvoiceSectionName': 'InvoiceSectionName',
        }) }} as x_extensions,
        x_load_id,
        x_source_file,
        x_source_row,
        x_ingested_at

    from costed

)

select * from renamed
