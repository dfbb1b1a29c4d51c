{#-
    One cost line per Google Cloud billing export row (stg_gcp__billing_export), in FOCUS 1.2 terms.

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

billing_export as (

    select * from {{ ref('stg_gcp__billing_export') }}

),

-- The GPU model of GPU SKU lines (usage and commitment fees alike), as int_billing__cost_lines matches it:
-- it keys the commitment amortization below.
gpu_models as (

    {{ gpu_sku_description_matches('billing_export', ['x_load_id', 'x_source_file', 'x_source_row'], 'ChargeDescription') }}

),

renamed as (

    select
        billing_export.BillingAccountId,
        billing_export.BillingPeriodStart,
        billing_export.BillingPeriodEnd,
        billing_export.BillingCurrency,
        billing_export.ChargePeriodStart,
        coalesce(billing_export.usage_end_time, billing_export.ChargePeriodStart) as ChargePeriodEnd,
        billing_export.ChargeDescription,
        billing_export.RegionId,
        billing_export.AvailabilityZone,
        billing_export.ServiceName,
        billing_export.SkuId,
        billing_export.SubAccountId,
        billing_export.SubAccountName,
        billing_export.ResourceId,
        billing_export.Tags,
        billing_export.cost,
        billing_export.cost_at_list,
        billing_export.net_cost,
        billing_export.credits_committed_usage_amount,
        billing_export.credits_committed_spend_amount,
        billing_export.commitment_credit_id,
        billing_export.commitment_credit_name,
        billing_export.usage_amount,
        billing_export.usage_unit,
        billing_export.usage_amount_in_pricing_units,
        billing_export.usage_pricing_unit,
        billing_export.price_effective_price,
        billing_export.subscription_instance_id,
        billing_export.resource_global_name,
        billing_export.transaction_type,
        billing_export.seller_name,
        -- cost_type arrives lower case, `rounding error` spelled one way (the loader sees to it)
        case
            when billing_export.cost_type = 'tax' then 'Tax'
            -- goodwill is a credit Google grants; other adjustments correct earlier charges
            when billing_export.cost_type = 'adjustment' and upper(billing_export.adjustment_info_type) = 'GOODWILL'
                then 'Credit'
            when billing_export.cost_type in ('adjustment', 'rounding error') then 'Adjustment'
            when lower(billing_export.ChargeDescription) like 'commitment%' then 'Purchase'
            else 'Usage'
        end as ChargeCategory,
        -- FOCUS marks only corrections of an earlier, already invoiced period
        coalesce(
            billing_export.cost_type = 'adjustment' and billing_export.ChargePeriodStart < billing_export.BillingPeriodStart,
            false
        ) as is_prior_period_correction,
        lower(billing_export.ChargeDescription) like 'commitment%dollar%' as is_spend_commitment_fee,
        lower(billing_export.ChargeDescription) like '%preemptible%' as is_spot,
        lower(billing_export.ChargeDescription) like '%gpu%' as is_gpu_sku,
        gpu_models.gpu_model as x_commitment_family,
        coalesce(
            billing_export.subscription_instance_id,
            billing_export.resource_global_name,
            billing_export.ResourceId,
            billing_export.SkuId
        ) as commitment_fee_id,
        -- GPU-hours (or other pricing units) of the row that a resource commitment paid for: the
        -- credit cancels the on-demand cost of exactly that share of the row
        case
            when billing_export.credits_committed_usage_amount < 0 and billing_export.cost > 0
                then cast(
                    billing_export.usage_amount_in_pricing_units
                    * least(
                        cast(1 as decimal(38, 12)),
                        {{ decimal_divide('-billing_export.credits_committed_usage_amount', 'billing_export.cost', 12) }}
                    )
                    as decimal(38, 12)
                )
        end as covered_quantity,
        billing_export.x_extensions,
        billing_export.x_load_id,
        billing_export.x_source_file,
        billing_export.x_source_row
    from billing_export
    left join gpu_models
        on billing_export.x_load_id = gpu_models.x_load_id
        and billing_export.x_source_file = gpu_models.x_source_file
        and billing_export.x_source_row = gpu_models.x_source_row

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
                then net_cost - {{ decimal_product([
                    'pool_allocated_fee', 'coalesce(' ~ decimal_divide('net_cost', 'pool_fee', 12) ~ ', 0)'
                ]) }}
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
        BillingCurrency,
        BillingPeriodEnd,
        BillingPeriodStart,
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
        'Google Cloud' as InvoiceIssuerName,
        cast(coalesce(cost_at_list, cost) as decimal(38, 12)) as ListCost,
        case
            when ChargeCategory = 'Tax' then null
            when ChargeCategory = 'Purchase' then 'Standard'
            when is_spot then 'Dynamic'
            when credits_committed_usage_amount <> 0 or credits_committed_spend_amount <> 0 then 'Committed'
            else 'Standard'
        end as PricingCategory,
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
        ResourceId,
        ResourceId as ResourceName,
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
        SubAccountId,
        SubAccountName,
        case when SubAccountId is not null then 'Project' end as SubAccountType,
        Tags,

        -- FOCUS 1.3 additions
        'Google Cloud' as ServiceProviderName,

        -- project columns
        'gcp_billing' as x_source,
        cast(case when is_gpu_sku then 1 end as decimal(18, 6)) as x_sku_gpu_count,
        x_commitment_family as x_sku_gpu_model,
        x_extensions,
        x_load_id,
        x_source_file,
        x_source_row
    from amortized

)

select * from final
