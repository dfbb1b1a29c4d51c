{#-
    What the paid GPU-hours did, per day: the GPU cost lines of each billed resource (instance, VM,
    owned server) joined to the telemetry of that resource's GPUs. Provisioned GPU-hours and cost
    come from the bill; telemetry, active (GR-engine) and effective (SM-active) GPU-hours from
    int_telemetry__gpu_hourly. Idle GPU-hours are hours observed but not active; hours billed but
    not observed are unobserved, not idle. The unused part of a commitment (a reservation, savings
    plan or committed use discount no usage used) buys no GPU-hour: it is its own part of the cost,
    and the rest is shared out by the bill's own price per GPU-hour of that day, so that active,
    idle, unobserved and unused commitment cost add up to the cost on every billed row. Resources
    billed without telemetry, and telemetry that names no billed resource, are kept (match_status)
    and listed by the check assert_gpu_telemetry_matches_billing.

    A usage reversal (negative GPU-hours, int_billing__cost_lines) counts on its own charge day, as the bill
    does: it nets with that day's usage of the resource. A day whose GPU-hours net to zero or below (the
    reversal dated a day without the usage) has no price per GPU-hour: no cost is shared out over its
    telemetry, and its net cost, a refund, is unobserved_cost.

    Incremental by usage month: every figure is within one day, so a run rebuilds the months whose inputs changed
    (int_gpu_usage__month_fingerprints: the GPU cost lines charged in the month, its hourly telemetry),
    emptying them first, and leaves the others as they are.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    pre_hook="{{ clear_months_with_changed_inputs('cost_lines_and_telemetry') }}",
    **replace_periods('usage_month')
) }}

{%- set incremental = incremental_by_usage_month() %}

{%- set grain = [
    'usage_date', 'provider_name', 'resource_id', 'host', 'gpu_model', 'team', 'billing_currency',
] -%}

with

{{ usage_month_rebuild_ctes('cost_lines_and_telemetry', incremental) }}

cost_lines as (

    select
        *,
        -- commitment cost no usage used: FOCUS CommitmentDiscountStatus Unused, or a commitment purchase (its
        -- EffectiveCost is 0, or the unused part when the provider keeps it there: the AWS Savings Plan fee)
        coalesce(
            CommitmentDiscountStatus = 'Unused' or (ChargeCategory = 'Purchase' and CommitmentDiscountId is not null),
            false
        ) as is_unused_commitment
    from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
    {%- if incremental %}
        and {{ in_months_to_rebuild('ChargePeriodStart') }}
    {%- endif %}

),

gpu_cost_lines as (

    select
        cost_lines.*,
        -- an unused commitment that names no resource (an Azure UnusedReservation row) is the commitment's own
        case when is_unused_commitment then coalesce(ResourceId, CommitmentDiscountId) else ResourceId end
            as billed_resource_id
    from cost_lines
    where ResourceId is not null
        -- a resource-less purchase that cost nothing (amortized into the usage) adds no row
        or (is_unused_commitment and CommitmentDiscountId is not null and EffectiveCost <> 0)

),

billed as (

    select
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date) as usage_date,
        ProviderName as provider_name,
        billed_resource_id as resource_id,
        x_gpu_model as gpu_model,
        BillingCurrency as billing_currency,
        -- a resource has one owner; if its tags change within a day, the last name in order wins
        max(x_team) as team,
        sum(x_gpu_hours) as provisioned_gpu_hours,
        sum(EffectiveCost) as effective_cost,
        sum(case when is_unused_commitment then coalesce(EffectiveCost, 0) else 0 end) as unused_commitment_cost
    from gpu_cost_lines
    group by
        cast({{ dbt.date_trunc('day', 'ChargePeriodStart') }} as date),
        ProviderName,
        billed_resource_id,
        x_gpu_model,
        BillingCurrency

),

hourly as (

    select * from {{ ref('int_telemetry__gpu_hourly') }}
    {%- if incremental %}
    where {{ in_months_to_rebuild('usage_date') }}
    {%- endif %}

),

seen as (

    select
        usage_date,
        resource_id,
        max(host) as host,
        max(gpu_model) as gpu_model,
        count(distinct gpu_uuid) as gpus_seen,
        sum(telemetry_gpu_hours) as telemetry_gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(effective_gpu_hours) as effective_gpu_hours,
        sum(energy_kwh) as energy_kwh,
        max(case when util_is_fallback then 1 else 0 end) as util_is_fallback,
        max(case when ratio_clamped then 1 else 0 end) as ratio_clamped
    from hourly
    -- telemetry of a host the map does not know stays visible, keyed by its host name
    group by usage_date, resource_id, case when resource_id is null then host end

),

joined as (

    select
        coalesce(billed.usage_date, seen.usage_date) as usage_date,
        billed.provider_name,
        coalesce(billed.resource_id, seen.resource_id) as resource_id,
        seen.host,
        coalesce(billed.gpu_model, seen.gpu_model) as gpu_model,
        billed.team,
        billed.billing_currency,
        case
            when billed.resource_id is null then 'telemetry_without_billing'
            when seen.usage_date is null then 'billed_without_telemetry'
            else 'matched'
        end as match_status,
        coalesce(seen.gpus_seen, 0) as gpus_seen,
        coalesce(billed.provisioned_gpu_hours, 0) as provisioned_gpu_hours,
        coalesce(seen.telemetry_gpu_hours, 0) as telemetry_gpu_hours,
        coalesce(seen.active_gpu_hours, 0) as active_gpu_hours,
        coalesce(seen.effective_gpu_hours, 0) as effective_gpu_hours,
        seen.energy_kwh,
        coalesce(seen.util_is_fallback, 0) = 1 as util_is_fallback,
        coalesce(seen.ratio_clamped, 0) = 1 as ratio_clamped,
        billed.effective_cost,
        billed.unused_commitment_cost,
        -- what the GPU-hours cost: the spend without the unused commitment, which bought no GPU-hour
        billed.effective_cost - billed.unused_commitment_cost as provisioned_cost
    from billed
    full outer join seen
        on billed.usage_date = seen.usage_date
        and billed.resource_id = seen.resource_id

),

hours as (

    select
        joined.*,
        -- observed but not active; never negative, never more than what was paid for
        greatest(telemetry_gpu_hours - active_gpu_hours, 0) as idle_gpu_hours_observed,
        greatest(provisioned_gpu_hours - telemetry_gpu_hours, 0) as unobserved_gpu_hours
    from joined

),

-- The cost of the GPU-hours split by what they did, at the cost of one provisioned GPU-hour; hours are capped at
-- those paid for (a 10-decimal bill can fall a hair short of the observed time). No GPU-hours, no share.
costs as (

    select
        hours.*,
        {%- for name, hours in [
            ('telemetry_cost', 'least(telemetry_gpu_hours, provisioned_gpu_hours)'),
            ('active_cost', 'least(active_gpu_hours, telemetry_gpu_hours, provisioned_gpu_hours)'),
            ('effective_hours_cost', 'least(effective_gpu_hours, provisioned_gpu_hours)'),
        ] %}
        case
            when provisioned_gpu_hours > 0 then
                {{ decimal_divide('provisioned_cost * ' ~ hours, 'provisioned_gpu_hours', 12) }}
            when provisioned_cost is not null then cast(0 as decimal(38, 12))
        end as {{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from hours

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_utilization_daily_key,
        usage_date,
        provider_name,
        resource_id,
        host,
        gpu_model,
        team,
        billing_currency,
        match_status,
        cast(gpus_seen as bigint) as gpus_seen,
        cast(provisioned_gpu_hours as decimal(38, 12)) as provisioned_gpu_hours,
        cast(telemetry_gpu_hours as decimal(38, 12)) as telemetry_gpu_hours,
        cast(active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        cast(effective_gpu_hours as decimal(38, 12)) as effective_gpu_hours,
        cast(idle_gpu_hours_observed as decimal(38, 12)) as idle_gpu_hours,
        cast(unobserved_gpu_hours as decimal(38, 12)) as unobserved_gpu_hours,
        util_is_fallback,
        ratio_clamped,
        cast(energy_kwh as decimal(38, 12)) as energy_kwh,
        cast(effective_cost as decimal(38, 12)) as effective_cost,
        -- telemetry without a bill has no cost: every cost column stays null there
        {{ per_gpu_hour('provisioned_cost', 'provisioned_gpu_hours', 6) }} as cost_per_provisioned_gpu_hour,
        telemetry_cost,
        active_cost,
        effective_hours_cost,
        -- differences of rounded parts, so that active + idle + unobserved + unused commitment cost = effective_cost
        -- exactly on every billed row
        cast(telemetry_cost - active_cost as decimal(38, 12)) as idle_cost,
        cast(provisioned_cost - telemetry_cost as decimal(38, 12)) as unobserved_cost,
        cast(unused_commitment_cost as decimal(38, 12)) as unused_commitment_cost,
        case when effective_cost is not null and active_gpu_hours > 0 and provisioned_gpu_hours >= 0 then
            {{ decimal_divide('effective_cost', 'active_gpu_hours', 6) }}
        end as effective_cost_per_active_gpu_hour,
        case when effective_cost is not null and effective_gpu_hours > 0 and provisioned_gpu_hours >= 0 then
            {{ decimal_divide('effective_cost', 'effective_gpu_hours', 6) }}
        end as effective_cost_per_utilized_gpu_hour,
        {{ usage_month('costs.usage_date') }} as usage_month,
        fingerprints.inputs_fingerprint,
        {{ this_run_started_at() }} as built_at
    from costs
    left join fingerprints
        on {{ usage_month('costs.usage_date') }} = fingerprints.usage_month

)

select * from final
