{#-
    What spot saved us, and what it could still save. Per billing month, provider and GPU model:

    - realized savings: on spot usage (PricingCategory Dynamic), its on-demand equivalent (ListCost)
      minus what it cost (EffectiveCost);
    - spot coverage: spot GPU-hours / all GPU-hours;
    - forgone savings: our on-demand GPU-hours (cloud only; owned servers cannot run on spot) priced at
      the market spot price of that month — the provider's own spot offers for that GPU where it has
      any, else every spot and interruptible offer for it — against what they cost;
    - the same, interruption-adjusted: spot hours stretch by the checkpoint-and-restart overhead of
      macro spot_checkpoint_overhead at the reclaim rate of the instance's Spot Advisor band (AWS) or
      var spot_default_reclaim_pct, and a share var spot_fallback_share of hours still runs on-demand.

    Amounts in the reporting currency. Assumptions are dbt vars with documented defaults (dbt_project/README.md).

    A usage reversal (negative GPU-hours) nets with the month's usage of its kind (provider, GPU model, region,
    instance type, pricing category); a kind whose month nets to zero GPU-hours or below (a reversal of an earlier
    month's usage) bought no GPU-hour to price and is left out.
-#}

{%- set checkpoint_hours = var('spot_checkpoint_hours', 0.1) -%}
{%- set restart_hours = var('spot_restart_hours', 0.5) -%}
{%- set fallback_share = var('spot_fallback_share', 0) -%}
{%- set job_nodes = var('spot_job_nodes', 1) -%}
{%- set band_reclaim_pct = var('spot_band_reclaim_pct', [5, 10, 15, 20, 25]) -%}
{%- set default_reclaim_pct = var('spot_default_reclaim_pct', 15) -%}

with

usage as (

    select
        billing_period_start,
        provider_name,
        gpu_model,
        region_id,
        instance_type,
        pricing_category,
        sum(gpu_hours) as gpu_hours,
        sum(effective_cost_reporting) as effective_cost,
        sum(list_cost_reporting) as list_cost
    from {{ ref('fct_gpu_spend_daily') }}
    where charge_category = 'Usage'
        and gpu_hours <> 0
        and provider_name <> 'On-premises'
    group by billing_period_start, provider_name, gpu_model, region_id, instance_type, pricing_category
    having sum(gpu_hours) > 0

),

spot_offers as (

    select
        cast({{ dbt.date_trunc('month', 'offers.price_date') }} as timestamp) as billing_period_start,
        offers.provider,
        offers.gpu_model,
        offers.price_per_gpu_hour_reporting
    from {{ ref('int_prices__offers_by_day') }} as offers
    inner join {{ ref('market_pricing_models') }} as comparable
        on offers.pricing_model = comparable.pricing_model
    where comparable.pricing_category = 'Dynamic'
        and offers.price_per_gpu_hour_reporting is not null

),

provider_spot as (

    select
        billing_period_start,
        provider,
        gpu_model,
        {{ median('price_per_gpu_hour_reporting') }} as spot_price
    from spot_offers
    group by billing_period_start, provider, gpu_model

),

market_spot as (

    select
        billing_period_start,
        gpu_model,
        {{ median('price_per_gpu_hour_reporting') }} as spot_price
    from spot_offers
    group by billing_period_start, gpu_model

),

advisor_ranked as (

    select
        cast({{ dbt.date_trunc('month', 'price_day') }} as timestamp) as billing_period_start,
        region,
        lower(instance_type) as instance_type_key,
        interruption_band,
        row_number() over (
            partition by {{ dbt.date_trunc('month', 'price_day') }}, region, lower(instance_type)
            order by price_day desc
        ) as recency
    from {{ ref('stg_aws__spot_advisor') }}
    where os = 'Linux'

),

advisor as (

    select
        billing_period_start,
        region,
        instance_type_key,
        case interruption_band
            {%- for pct in band_reclaim_pct %}
            when {{ loop.index0 }} then {{ pct }}
            {%- endfor %}
        end as reclaim_pct
    from advisor_ranked
    where recency = 1

),

on_demand as (

    select
        usage.billing_period_start,
        usage.provider_name,
        usage.gpu_model,
        usage.gpu_hours,
        usage.effective_cost,
        coalesce(provider_spot.spot_price, market_spot.spot_price) as spot_price,
        case when provider_spot.spot_price is not null then 'provider' when market_spot.spot_price is not null then 'market' end
            as spot_price_basis,
        coalesce(advisor.reclaim_pct, {{ default_reclaim_pct }}) as reclaim_pct
    from usage
    left join provider_spot
        on usage.billing_period_start = provider_spot.billing_period_start
        and usage.provider_name = provider_spot.provider
        and usage.gpu_model = provider_spot.gpu_model
    left join market_spot
        on usage.billing_period_start = market_spot.billing_period_start
        and usage.gpu_model = market_spot.gpu_model
    left join advisor
        on usage.provider_name = 'AWS'
        and usage.billing_period_start = advisor.billing_period_start
        and usage.region_id = advisor.region
        and lower(usage.instance_type) = advisor.instance_type_key
    where usage.pricing_category = 'Standard'

),

on_demand_priced as (

    select
        on_demand.*,
        cast(
            {{ spot_checkpoint_overhead('cast(reclaim_pct as double) / 100', checkpoint_hours, restart_hours, job_nodes) }}
            as decimal(38, 12)
        ) as spot_overhead,
        {{ decimal_product(['gpu_hours', 'spot_price']) }} as cost_at_spot
    from on_demand

),

on_demand_stretched as (

    -- decimal_product rounds each product back to 12 decimals: chained DECIMAL(38, 12) products would overflow 38 digits
    select
        on_demand_priced.*,
        {{ decimal_product(['gpu_hours', '1 + spot_overhead', '1 - ' ~ fallback_share]) }} as hours_on_spot,
        {{ decimal_product(['effective_cost', '1 + spot_overhead', fallback_share]) }} as cost_of_fallback
    from on_demand_priced

),

on_demand_adjusted as (

    select
        on_demand_stretched.*,
        {{ decimal_product(['hours_on_spot', 'spot_price']) }} + cost_of_fallback as cost_at_spot_adjusted
    from on_demand_stretched

),

on_demand_monthly as (

    select
        billing_period_start,
        provider_name,
        gpu_model,
        sum(gpu_hours) as on_demand_gpu_hours,
        sum(effective_cost) as on_demand_effective_cost,
        sum(case when spot_price is not null then gpu_hours end) as priced_on_demand_gpu_hours,
        sum(cost_at_spot) as on_demand_cost_at_market_spot,
        -- null (not 0) where the market showed no spot price for the GPU that month
        sum(
            case
                when cost_at_spot is null then null
                when effective_cost > cost_at_spot then effective_cost - cost_at_spot
                else 0
            end
        ) as forgone_savings,
        sum(
            case
                when cost_at_spot_adjusted is null then null
                when effective_cost > cost_at_spot_adjusted then effective_cost - cost_at_spot_adjusted
                else 0
            end
        ) as forgone_savings_interruption_adjusted,
        min(spot_price_basis) as spot_price_basis,
        sum(gpu_hours * reclaim_pct) as reclaim_pct_hours
    from on_demand_adjusted
    group by billing_period_start, provider_name, gpu_model

),

totals as (

    select
        billing_period_start,
        provider_name,
        gpu_model,
        sum(gpu_hours) as gpu_hours,
        sum(case when pricing_category = 'Dynamic' then gpu_hours else 0 end) as spot_gpu_hours,
        sum(case when pricing_category = 'Dynamic' then effective_cost else 0 end) as spot_effective_cost,
        sum(case when pricing_category = 'Dynamic' then list_cost else 0 end) as spot_list_cost
    from usage
    group by billing_period_start, provider_name, gpu_model

),

final as (

    select
        totals.billing_period_start,
        totals.provider_name,
        totals.gpu_model,
        '{{ reporting_currency() }}' as reporting_currency,
        cast(totals.gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(totals.spot_gpu_hours as decimal(38, 12)) as spot_gpu_hours,
        {{ decimal_divide('totals.spot_gpu_hours', 'totals.gpu_hours', 6) }} as spot_coverage,
        cast(totals.spot_effective_cost as decimal(38, 12)) as spot_effective_cost,
        cast(totals.spot_list_cost as decimal(38, 12)) as spot_on_demand_equivalent_cost,
        cast(totals.spot_list_cost - totals.spot_effective_cost as decimal(38, 12)) as realized_savings,
        {{ decimal_divide('totals.spot_list_cost - totals.spot_effective_cost', 'totals.spot_list_cost', 6) }}
            as realized_savings_rate,
        cast(coalesce(on_demand_monthly.on_demand_gpu_hours, 0) as decimal(38, 12)) as on_demand_gpu_hours,
        cast(coalesce(on_demand_monthly.on_demand_effective_cost, 0) as decimal(38, 12)) as on_demand_effective_cost,
        {{ decimal_divide('on_demand_monthly.on_demand_cost_at_market_spot', 'on_demand_monthly.priced_on_demand_gpu_hours', 12) }}
            as market_spot_price_per_gpu_hour,
        on_demand_monthly.spot_price_basis as market_spot_price_basis,
        cast(on_demand_monthly.forgone_savings as decimal(38, 12)) as forgone_savings,
        {{ decimal_divide('on_demand_monthly.reclaim_pct_hours', 'on_demand_monthly.on_demand_gpu_hours', 2) }}
            as assumed_monthly_reclaim_pct,
        cast(on_demand_monthly.forgone_savings_interruption_adjusted as decimal(38, 12))
            as forgone_savings_interruption_adjusted
    from totals
    left join on_demand_monthly
        on totals.billing_period_start = on_demand_monthly.billing_period_start
        and totals.provider_name = on_demand_monthly.provider_name
        and totals.gpu_model = on_demand_monthly.gpu_model

)

select * from final
