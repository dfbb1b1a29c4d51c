{#-
    Are our commitments (AWS Savings Plans and Reserved Instances, Azure reservations, Google Cloud committed
    use discounts) used, and how much of our usage do they cover? Per billing month, provider, commitment and
    billing currency, from the canonical cost lines (int_billing__cost_lines, FOCUS columns); cost not under any
    commitment is one row per provider and month with no commitment, so rates over the whole bill add up.
    KPIs and sources: gpu-metrics reference section 6 (FinOps Foundation FOCUS use cases, microsoft/finops-toolkit,
    AWS Cost Explorer). Owned servers (provider On-premises) carry no commitments and are left out.

    Incremental by billing month: a run rebuilds the months whose cost lines were rebuilt
    (int_billing__cost_lines.x_built_at) after this table last summed them (cost_lines_built_at), emptying
    them first, and replaces them whole; every figure here is within one month. See int_billing__cost_lines
    for when a full refresh is needed.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    pre_hook="{{ clear_billing_periods_to_rebuild('billing_month', by_month=true) }}",
    **replace_periods('billing_month')
) }}

{%- set incremental = incremental_with_columns(['cost_lines_built_at']) %}

{%- set grain = [
    'billing_month', 'provider_name', 'commitment_discount_id', 'commitment_discount_type',
    'commitment_discount_category', 'billing_currency',
] -%}

with

lines as (

    select
        cast({{ dbt.date_trunc('month', 'BillingPeriodStart') }} as date) as billing_month,
        ProviderName as provider_name,
        CommitmentDiscountId as commitment_discount_id,
        CommitmentDiscountName as commitment_discount_name,
        CommitmentDiscountType as commitment_discount_type,
        CommitmentDiscountCategory as commitment_discount_category,
        BillingCurrency as billing_currency,
        CommitmentDiscountStatus as commitment_status,
        coalesce(BilledCost, 0) as billed_cost,
        coalesce(EffectiveCost, 0) as effective_cost,
        coalesce(ListCost, 0) as list_cost,
        coalesce(ContractedCost, 0) as contracted_cost,
        coalesce(x_gpu_hours, 0) as gpu_hours,
        -- rows that bought no usage at list price: the purchase of a commitment (its EffectiveCost is 0, or the
        -- part no usage used) and the unused part of a commitment. Their list and contracted cost would show as
        -- savings that never happened, so only their effective cost counts in the rates below.
        coalesce(
            (ChargeCategory = 'Purchase' and CommitmentDiscountCategory is not null)
            or CommitmentDiscountStatus = 'Unused',
            false
        ) as is_without_list_value,
        coalesce(ChargeCategory = 'Purchase' and CommitmentDiscountCategory is not null, false) as is_commitment_purchase,
        -- taxes are neither a price nor a discount: they stay out of the savings rates (not out of billed_cost)
        coalesce(ChargeCategory = 'Tax', false) as is_tax,
        -- usage a commitment could have paid for: on-demand or committed compute time (not spot), not the unused
        -- part of a commitment; anything a commitment did pay for counts whatever its service category. Compute
        -- time, not the compute service: FOCUS gives a service one category, so EC2's data transfer (GB) is Compute
        -- too, and no reservation or savings plan covers it. PricingUnit is in FOCUS Unit Format here
        -- (int_billing__cost_lines): Hours, Seconds, GB-Seconds, vCPU-Hours...
        coalesce(
            ChargeCategory = 'Usage'
            and coalesce(PricingCategory, '') <> 'Dynamic'
            and coalesce(CommitmentDiscountStatus, '') <> 'Unused'
            and (
                CommitmentDiscountStatus = 'Used'
                or (
                    ServiceCategory = 'Compute'
                    and (PricingUnit like '%Hours' or PricingUnit like '%Minutes' or PricingUnit like '%Seconds')
                )
            ),
            false
        ) as is_eligible_usage,
        x_built_at
    from {{ ref('int_billing__cost_lines') }}
    where coalesce(ProviderName, '') <> 'On-premises'
    {%- if incremental %}
        and cast({{ dbt.date_trunc('month', 'BillingPeriodStart') }} as date)
            in ({{ billing_periods_to_rebuild('billing_month', by_month=true) }})
    {%- endif %}

),

by_commitment as (

    select
        billing_month,
        provider_name,
        commitment_discount_id,
        max(commitment_discount_name) as commitment_discount_name,
        commitment_discount_type,
        commitment_discount_category,
        billing_currency,
        sum(billed_cost) as billed_cost,
        sum(case when is_commitment_purchase then billed_cost else 0 end) as commitment_purchase_cost,
        sum(case when not is_tax and not is_without_list_value then list_cost else 0 end) as list_cost,
        sum(case when not is_tax and not is_without_list_value then contracted_cost else 0 end) as contracted_cost,
        sum(case when not is_tax then effective_cost else 0 end) as effective_cost,
        sum(case when commitment_discount_id is not null then effective_cost else 0 end) as commitment_cost,
        sum(case when commitment_status = 'Used' then effective_cost else 0 end) as used_commitment_cost,
        sum(case when commitment_status = 'Used' and is_eligible_usage then list_cost else 0 end) as covered_list_cost,
        sum(case when is_eligible_usage then list_cost else 0 end) as eligible_list_cost,
        sum(case when commitment_status = 'Used' and is_eligible_usage then gpu_hours else 0 end) as covered_gpu_hours,
        sum(case when is_eligible_usage then gpu_hours else 0 end) as eligible_gpu_hours,
        sum(
            case
                when not is_tax and not is_without_list_value and list_cost > contracted_cost then list_cost - contracted_cost
                else 0
            end
        ) as negotiated_savings,
        sum(
            case
                when not is_tax and not is_without_list_value and contracted_cost > effective_cost then contracted_cost - effective_cost
                else 0
            end
        ) as commitment_savings,
        count(*) as cost_line_count,
        max(x_built_at) as cost_lines_built_at
    from lines
    group by
        billing_month,
        provider_name,
        commitment_discount_id,
        commitment_discount_type,
        commitment_discount_category,
        billing_currency

),

with_provider_totals as (

    select
        by_commitment.*,
        sum(covered_list_cost) over (partition by billing_month, provider_name, billing_currency)
            as provider_covered_list_cost,
        sum(eligible_list_cost) over (partition by billing_month, provider_name, billing_currency)
            as provider_eligible_list_cost
    from by_commitment

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as commitment_coverage_monthly_key,
        billing_month,
        provider_name,
        commitment_discount_id,
        commitment_discount_name,
        commitment_discount_type,
        commitment_discount_category,
        billing_currency,
        cast(billed_cost as decimal(38, 12)) as billed_cost,
        cast(commitment_purchase_cost as decimal(38, 12)) as commitment_purchase_cost,
        cast(list_cost as decimal(38, 12)) as list_cost,
        cast(contracted_cost as decimal(38, 12)) as contracted_cost,
        cast(effective_cost as decimal(38, 12)) as effective_cost,
        cast(case when commitment_discount_id is not null then commitment_cost end as decimal(38, 12)) as commitment_cost,
        cast(case when commitment_discount_id is not null then used_commitment_cost end as decimal(38, 12))
            as used_commitment_cost,
        cast(
            case when commitment_discount_id is not null then commitment_cost - used_commitment_cost end
            as decimal(38, 12)
        ) as unused_commitment_cost,
        case
            when commitment_discount_id is not null
                then {{ decimal_divide('used_commitment_cost', 'commitment_cost', 6) }}
        end as commitment_utilization,
        cast(covered_list_cost as decimal(38, 12)) as covered_list_cost,
        cast(eligible_list_cost as decimal(38, 12)) as eligible_list_cost,
        case
            when commitment_discount_id is not null
                then {{ decimal_divide('covered_list_cost', 'provider_eligible_list_cost', 6) }}
        end as commitment_coverage,
        {{ decimal_divide('provider_covered_list_cost', 'provider_eligible_list_cost', 6) }} as provider_commitment_coverage,
        cast(covered_gpu_hours as decimal(38, 12)) as covered_gpu_hours,
        cast(eligible_gpu_hours as decimal(38, 12)) as eligible_gpu_hours,
        {{ decimal_divide('list_cost - effective_cost', 'list_cost', 6) }} as effective_savings_rate,
        cast(negotiated_savings as decimal(38, 12)) as negotiated_savings,
        cast(commitment_savings as decimal(38, 12)) as commitment_savings,
        cast(cost_line_count as bigint) as cost_line_count,
        cast(cost_lines_built_at as timestamp) as cost_lines_built_at,
        {{ this_run_started_at() }} as built_at
    from with_provider_totals

)

select * from final
