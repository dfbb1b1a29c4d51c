{#-
    One row per Google Cloud billing export row (raw.gcp_billing_export), in FOCUS 1.2 terms.

    Google bills a row's `cost` before credits; the invoice charges `cost + credits`, so that net
    amount is BilledCost. Resource-based committed use discounts (CUDs) are billed twice over: a
    recurring fee on `Commitment v1: …` SKUs (a Purchase here) and, on the usage they cover, a
    COMMITTED_USAGE_DISCOUNT credit that cancels the on-demand cost. EffectiveCost follows FOCUS
    amortization: within each hour, region and GPU model, the hour's GPU commitment fee moves onto
    the usage its credits covered, in proportion to the GPU-hours covered; the fee row keeps only
    the part no usage consumed (the unused commitment). Money only moves inside one billing period
    and currency, so EffectiveCost still sums to the invoice. Other commitments (vCPU, memory,
    spend-based) are not amortized: their fee rows keep their billed cost.

    One commitment, one CommitmentDiscountId: the fee row names the commitment (subscription, then the
    commitment resource, then the SKU) but the credits on the usage it covers carry only a credit id
    (`CommittedUsageDiscount-…`, or a project/region/name path), so without care a CUD shows up twice in
    fct_commitment_coverage_monthly. Covered GPU usage takes the id and name of the fee in its pool (the
    lowest id when an hour holds several commitments of one GPU model and region: credits do not say which
    one paid); a covered row in an hour without a fee takes the id its credit id was matched to elsewhere
    in the billing period; only a credit never seen beside a fee keeps its own id.

    GPUs are billed as their own per-GPU-hour SKUs (`Nvidia H100 80GB GPU running in Americas`),
    separate from the host's core and RAM SKUs, so GPU SKU lines carry one GPU per pricing unit
    (x_sku_gpu_count 1) and no instance type: the machine type from system labels would make the
    host's core and RAM lines count as GPU lines too. It is kept in x_extensions instead.
-#}

{%- set pool = [
    'BillingAccountId', 'BillingPeriodStart', 'BillingCurrency', "coalesce(RegionId, '')",
    'x_commitment_family', 'ChargePeriodStart',
] -%}
{%- set pool_window = 'partition by ' ~ pool | join(', ') -%}

with

source as (

    select * from {{ source('raw', 'gcp_billing_export') }}

),

gpu_sku_descriptions as (

    select
        lower(description_pattern) as pattern,
        gpu_model
    from {{ ref('gpu_sku_descriptions') }}

),

-- The GPU model of GPU SKU lines (usage and commitment fees alike), longest pattern first as in
-- int_billing__cost_lines: it keys the commitment amortization below.
gpu_models as (

    select
        source._load_id,
        source._source_file,
        source._source_row,
        gpu_sku_descriptions.gpu_model,
        row_number() over (
            partition by source._load_id, source._source_file, source._source_row
            order by length(gpu_sku_descriptions.pattern) desc
        ) as match_rank
    from source
    inner join gpu_sku_descriptions
        on lower(source.sku_description) like {{ dbt.concat(["'%'", "gpu_sku_descriptions.pattern", "'%'"]) }}
    where lower(source.sku_description) like '%gpu%'

),

renamed as (

    select
        source.billing_account_id as BillingAccountId,
        source.billing_period_start as BillingPeriodStart,
        source.billing_period_end as BillingPeriodEnd,
        source.currency as BillingCurrency,
        source.usage_start_time as ChargePeriodStart,
        coalesce(source.usage_end_time, source.usage_start_time) as ChargePeriodEnd,
        source.sku_description as ChargeDescription,
        source.location_region as RegionId,
        source.location_zone as AvailabilityZone,
        source.service_description as ServiceName,
        source.sku_id as SkuId,
        source.project_id as SubAccountId,
        source.project_name as SubAccountName,
        source.resource_name as ResourceId,
        source.focus_tags as Tags,
        source.cost,
        source.cost_at_list,
        source.net_cost,
        source.credits_committed_usage_amount,
        source.credits_committed_spend_amount,
        source.commitment_credit_id,
        source.commitment_credit_name,
        source.usage_amount,
        source.usage_unit,
        source.usage_amount_in_pricing_units,
        source.usage_pricing_unit,
        source.price_effective_price,
        source.subscription_instance_id,
        source.resource_global_name,
        source.transaction_type,
        source.seller_name,
        -- cost_type arrives lower case, `rounding error` spelled one way (the loader sees to it)
        case
            when source.cost_type = 'tax' then 'Tax'
            -- goodwill is a credit Google grants; other adjustments correct earlier charges
            when source.cost_type = 'adjustment' and upper(source.adjustment_info_type) = 'GOODWILL' then 'Credit'
            when source.cost_type in ('adjustment', 'rounding error') then 'Adjustment'
            when lower(source.sku_description) like 'commitment%' then 'Purchase'
            else 'Usage'
        end as ChargeCategory,
        -- FOCUS marks only corrections of an earlier, already invoiced period
        coalesce(source.cost_type = 'adjustment' and source.usage_start_time < source.billing_period_start, false)
            as is_prior_period_correction,
        lower(source.sku_description) like 'commitment%dollar%' as is_spend_commitment_fee,
        lower(source.sku_description) like '%preemptible%' as is_spot,
        lower(source.sku_description) like '%gpu%' as is_gpu_sku,
        gpu_models.gpu_model as x_commitment_family,
        coalesce(
            source.subscription_instance_id, source.resource_global_name, source.resource_name, source.sku_id
        ) as commitment_fee_id,
        -- GPU-hours (or other pricing units) of the row that a resource commitment paid for: the
        -- credit cancels the on-demand cost of exactly that share of the row
        case
            when source.credits_committed_usage_amount < 0 and source.cost > 0
                then cast(
                    source.usage_amount_in_pricing_units
                    * least(
                        cast(1 as decimal(38, 12)),
                        {{ decimal_divide('-source.credits_committed_usage_amount', 'source.cost', 12) }}
                    )
                    as decimal(38, 12)
                )
        end as covered_quantity,
        source.x_extensions,
        source._load_id as x_load_id,
        source._source_file as x_source_file,
        source._source_row as x_source_row
    from source
    left join gpu_models
        on source._load_id = gpu_models._load_id
        and source._source_file = gpu_models._source_file
        and source._source_row = gpu_models._source_row
        and gpu_models.match_rank = 1

),

commitment_roles as (

    select
        renamed.*,
        coalesce(
            ChargeCategory = 'Purchase' and not is_spend_commitment_fee and x_commitment_family is not null, false
        ) as is_commitment_fee,
        coalesce(
            ChargeCategory = 'Usage' and x_commitment_family is not null and covered_quantity > 0, false
        ) as is_covered_usage
    from renamed

),

commitment_pools as (

    select
        commitment_roles.*,
        sum(case when is_commitment_fee then net_cost end) over ({{ pool_window }}) as pool_fee,
        sum(case when is_commitment_fee then usage_amount_in_pricing_units end) over ({{ pool_window }})
            as pool_committed_quantity,
        sum(case when is_covered_usage then covered_quantity end) over ({{ pool_window }}) as pool_covered_quantity,
        min(case when is_commitment_fee then commitment_fee_id end) over ({{ pool_window }}) as pool_commitment_id
    from commitment_roles

),

-- The commitment a covered row's credit belongs to: its pool's fee, else the fee that credit id met in
-- another hour of the billing period (the fee and the usage then carry one CommitmentDiscountId).
commitment_ids as (

    select
        commitment_pools.*,
        case when is_covered_usage then pool_commitment_id end as covered_by_id,
        min(case when is_covered_usage then pool_commitment_id end) over (
            partition by BillingAccountId, BillingPeriodStart, BillingCurrency, commitment_credit_id
        ) as credit_commitment_id
    from commitment_pools

),

fee_names as (

    select
        BillingAccountId,
        BillingPeriodStart,
        BillingCurrency,
        commitment_fee_id,
        min(ChargeDescription) as fee_commitment_name
    from commitment_roles
    where is_commitment_fee
    group by BillingAccountId, BillingPeriodStart, BillingCurrency, commitment_fee_id

),

commitment_names as (

    select
        commitment_ids.*,
        coalesce(
            commitment_ids.covered_by_id,
            case when commitment_ids.is_covered_usage then commitment_ids.credit_commitment_id end
        ) as usage_commitment_id,
        fee_names.fee_commitment_name
    from commitment_ids
    left join fee_names
        on commitment_ids.BillingAccountId = fee_names.BillingAccountId
        and commitment_ids.BillingPeriodStart = fee_names.BillingPeriodStart
        and commitment_ids.BillingCurrency = fee_names.BillingCurrency
        and coalesce(
            commitment_ids.covered_by_id,
            case when commitment_ids.is_covered_usage then commitment_ids.credit_commitment_id end
        ) = fee_names.commitment_fee_id

),

-- Each covered row's share of the hour's fee: its covered quantity over what was committed (or
-- over what was covered, should the credits ever cover more than the fee bought).
fee_allocated as (

    select
        commitment_names.*,
        case
            when is_covered_usage and pool_fee is not null
                and greatest(coalesce(pool_committed_quantity, 0), pool_covered_quantity) > 0
                then cast(
                    pool_fee * {{ decimal_divide(
                        'covered_quantity',
                        'greatest(coalesce(pool_committed_quantity, 0), pool_covered_quantity)',
                        12,
                    ) }}
                    as decimal(38, 12)
                )
            else cast(0 as decimal(38, 12))
        end as allocated_fee
    from commitment_names

),

fee_kept as (

    select
        fee_allocated.*,
        sum(allocated_fee) over ({{ pool_window }}) as pool_allocated_fee,
        case
            when is_commitment_fee
                then row_number() over ({{ pool_window }}, is_commitment_fee order by x_source_file, x_source_row)
        end as fee_rank
    from fee_allocated

),

-- A fee row keeps its share of the unused commitment; the first fee row of the pool takes the
-- rounding remainder so that the pool's EffectiveCost equals its BilledCost exactly.
fee_unused as (

    select
        fee_kept.*,
        case
            when is_commitment_fee
                then net_cost - cast(
                    pool_allocated_fee * coalesce({{ decimal_divide('net_cost', 'pool_fee', 12) }}, 0)
                    as decimal(38, 12)
                )
        end as fee_unused_share
    from fee_kept

),

amortized as (

    select
        fee_unused.*,
        case
            when is_covered_usage then net_cost + allocated_fee
            when fee_rank = 1
                then pool_fee - pool_allocated_fee
                - coalesce(sum(case when fee_rank > 1 then fee_unused_share end) over ({{ pool_window }}), 0)
            when is_commitment_fee then fee_unused_share
            else net_cost
        end as amortized_cost
    from fee_unused

),

final as (

    select
        AvailabilityZone,
        cast(net_cost as decimal(38, 12)) as BilledCost,
        BillingAccountId,
        cast(null as varchar) as BillingAccountName,
        cast(null as varchar) as BillingAccountType,
        BillingCurrency,
        BillingPeriodEnd,
        BillingPeriodStart,
        cast(null as varchar) as CapacityReservationId,
        cast(null as varchar) as CapacityReservationStatus,
        ChargeCategory,
        case when is_prior_period_correction then 'Correction' end as ChargeClass,
        ChargeDescription,
        case ChargeCategory
            when 'Usage' then 'Usage-Based'
            when 'Purchase' then 'Recurring'
            else 'One-Time'
        end as ChargeFrequency,
        ChargePeriodEnd,
        ChargePeriodStart,
        case
            when ChargeCategory = 'Purchase' and is_spend_commitment_fee then 'Spend'
            when ChargeCategory = 'Purchase' then 'Usage'
            when credits_committed_usage_amount <> 0 then 'Usage'
            when credits_committed_spend_amount <> 0 then 'Spend'
        end as CommitmentDiscountCategory,
        case
            when ChargeCategory = 'Purchase' then commitment_fee_id
            when credits_committed_usage_amount <> 0 or credits_committed_spend_amount <> 0
                then coalesce(usage_commitment_id, commitment_credit_id)
        end as CommitmentDiscountId,
        case
            when ChargeCategory = 'Purchase' then ChargeDescription
            when usage_commitment_id is not null then fee_commitment_name
            when credits_committed_usage_amount <> 0 or credits_committed_spend_amount <> 0
                then commitment_credit_name
        end as CommitmentDiscountName,
        case
            when ChargeCategory = 'Purchase' and not is_spend_commitment_fee then usage_amount_in_pricing_units
            when ChargeCategory = 'Usage' then covered_quantity
        end as CommitmentDiscountQuantity,
        case
            when ChargeCategory = 'Usage'
                and commitment_credit_id is not null
                and (credits_committed_usage_amount <> 0 or credits_committed_spend_amount <> 0)
                then 'Used'
        end as CommitmentDiscountStatus,
        case
            when ChargeCategory = 'Purchase'
                or credits_committed_usage_amount <> 0
                or credits_committed_spend_amount <> 0
                then 'Committed Use Discount'
        end as CommitmentDiscountType,
        case
            when (ChargeCategory = 'Purchase' and not is_spend_commitment_fee and usage_amount_in_pricing_units is not null)
                or (ChargeCategory = 'Usage' and covered_quantity is not null)
                then usage_pricing_unit
        end as CommitmentDiscountUnit,
        case when ChargeCategory = 'Usage' then usage_amount end as ConsumedQuantity,
        case when ChargeCategory = 'Usage' and usage_amount is not null then usage_unit end as ConsumedUnit,
        cast(cost as decimal(38, 12)) as ContractedCost,
        cast(price_effective_price as decimal(38, 12)) as ContractedUnitPrice,
        cast(amortized_cost as decimal(38, 12)) as EffectiveCost,
        cast(null as varchar) as InvoiceId,
        'Google Cloud' as InvoiceIssuerName,
        cast(coalesce(cost_at_list, cost) as decimal(38, 12)) as ListCost,
        cast(null as decimal(38, 12)) as ListUnitPrice,
        case
            when ChargeCategory = 'Tax' then null
            when ChargeCategory = 'Purchase' then 'Standard'
            when is_spot then 'Dynamic'
            when credits_committed_usage_amount <> 0 or credits_committed_spend_amount <> 0 then 'Committed'
            else 'Standard'
        end as PricingCategory,
        cast(null as varchar) as PricingCurrency,
        cast(null as decimal(38, 12)) as PricingCurrencyContractedUnitPrice,
        cast(null as decimal(38, 12)) as PricingCurrencyEffectiveCost,
        cast(null as decimal(38, 12)) as PricingCurrencyListUnitPrice,
        case
            when ChargeCategory <> 'Tax' and usage_pricing_unit is not null then usage_amount_in_pricing_units
        end as PricingQuantity,
        case
            when ChargeCategory <> 'Tax' and usage_amount_in_pricing_units is not null then usage_pricing_unit
        end as PricingUnit,
        'Google Cloud' as ProviderName,
        case
            when upper(transaction_type) like 'THIRD_PARTY%' and seller_name is not null then seller_name
            else 'Google Cloud'
        end as PublisherName,
        RegionId,
        cast(null as varchar) as RegionName,
        ResourceId,
        ResourceId as ResourceName,
        cast(null as varchar) as ResourceType,
        case
            when ServiceName in ('Compute Engine', 'Kubernetes Engine', 'Cloud Run', 'Cloud Run Functions',
                'Cloud Functions', 'App Engine') then 'Compute'
            when ServiceName in ('Vertex AI', 'Cloud TPU', 'Gemini API') then 'AI and Machine Learning'
            when ServiceName in ('Cloud Storage', 'Filestore') then 'Storage'
            when ServiceName in ('BigQuery', 'Cloud SQL', 'Cloud Spanner', 'Cloud Bigtable', 'Firestore', 'Memorystore')
                then 'Databases'
            when ServiceName in ('Networking', 'Cloud DNS', 'Cloud CDN') then 'Networking'
            when ServiceName in ('Cloud Logging', 'Cloud Monitoring') then 'Management and Governance'
            else 'Other'
        end as ServiceCategory,
        ServiceName,
        case
            when ServiceName = 'Compute Engine' then 'Virtual Machines'
            when ServiceName = 'Kubernetes Engine' then 'Containers'
            when ServiceName in ('Cloud Run', 'Cloud Run Functions', 'Cloud Functions', 'App Engine')
                then 'Serverless Compute'
            when ServiceName in ('Vertex AI', 'Cloud TPU') then 'AI Platforms'
            when ServiceName = 'Gemini API' then 'Generative AI'
            when ServiceName = 'Cloud Storage' then 'Object Storage'
            when ServiceName = 'Filestore' then 'File Storage'
            when ServiceName = 'BigQuery' then 'Data Warehouses'
            when ServiceName in ('Cloud SQL', 'Cloud Spanner') then 'Relational Databases'
            when ServiceName in ('Cloud Bigtable', 'Firestore') then 'NoSQL Databases'
            when ServiceName = 'Memorystore' then 'Caching'
            when ServiceName in ('Networking', 'Cloud DNS') then 'Network Connectivity'
            when ServiceName = 'Cloud CDN' then 'Content Delivery'
            when ServiceName in ('Cloud Logging', 'Cloud Monitoring') then 'Observability'
            else 'Other (Other)'
        end as ServiceSubcategory,
        SkuId,
        cast(null as varchar) as SkuMeter,
        cast(null as varchar) as SkuPriceDetails,
        cast(null as varchar) as SkuPriceId,
        SubAccountId,
        SubAccountName,
        case when SubAccountId is not null then 'Project' end as SubAccountType,
        Tags,

        -- FOCUS 1.3 additions
        'Google Cloud' as ServiceProviderName,
        cast(null as varchar) as HostProviderName,
        cast(null as varchar) as ContractApplied,
        cast(null as varchar) as AllocatedMethodId,
        cast(null as varchar) as AllocatedMethodDetails,
        cast(null as varchar) as AllocatedResourceId,
        cast(null as varchar) as AllocatedResourceName,
        cast(null as varchar) as AllocatedTags,

        -- project columns
        'gcp_billing' as x_source,
        cast(null as varchar) as x_instance_type,
        cast(case when is_gpu_sku then 1 end as decimal(18, 6)) as x_sku_gpu_count,
        x_commitment_family as x_sku_gpu_model,
        x_extensions,
        x_load_id,
        x_source_file,
        x_source_row
    from amortized

)

select * from final
