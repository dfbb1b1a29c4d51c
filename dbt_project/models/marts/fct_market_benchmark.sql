{#-
    Are we paying more than the market for the same GPU? For each day, provider, GPU model and pricing
    category we used: our effective price per GPU-hour against the cheapest and the median market price
    of the same GPU on the same day, in the comparable pricing models (seed market_pricing_models: our
    on-demand usage against on-demand offers, spot against spot and interruptible, committed against
    one-year commitments), the overpay per GPU-hour and what moving that usage would have saved.
    Everything in the reporting currency, so EUR bills and USD price lists meet. A usage reversal (negative
    GPU-hours) nets into its own charge day; a day whose GPU-hours net to zero or below has no price of ours to
    compare and is left out.
-#}

with

usage as (

    select
        charge_date,
        provider_name,
        gpu_model,
        pricing_category,
        sum(gpu_hours) as gpu_hours,
        sum(effective_cost_reporting) as effective_cost_reporting,
        count(*) - count(effective_cost_reporting) as unconverted_rows
    from {{ ref('fct_gpu_spend_daily') }}
    where charge_category = 'Usage'
        and gpu_hours <> 0
    group by charge_date, provider_name, gpu_model, pricing_category
    having sum(gpu_hours) > 0

),

comparable as (

    select pricing_category, pricing_model from {{ ref('market_pricing_models') }}

),

offers as (

    select
        offers.price_date,
        offers.gpu_model,
        comparable.pricing_category,
        offers.provider,
        offers.price_per_gpu_hour_reporting
    from {{ ref('int_prices__offers_by_day') }} as offers
    inner join comparable
        on offers.pricing_model = comparable.pricing_model
    where offers.price_per_gpu_hour_reporting is not null

),

market as (

    select
        price_date,
        gpu_model,
        pricing_category,
        count(*) as market_offers,
        min(price_per_gpu_hour_reporting) as market_min_price_per_gpu_hour,
        {{ median('price_per_gpu_hour_reporting') }} as market_median_price_per_gpu_hour
    from offers
    group by price_date, gpu_model, pricing_category

),

cheapest as (

    select
        price_date,
        gpu_model,
        pricing_category,
        provider as cheapest_market_provider,
        row_number() over (
            partition by price_date, gpu_model, pricing_category
            order by price_per_gpu_hour_reporting, provider
        ) as price_rank
    from offers

),

compared as (

    select
        usage.*,
        {{ decimal_divide('usage.effective_cost_reporting', 'usage.gpu_hours', 12) }} as our_price_per_gpu_hour,
        market.market_offers,
        market.market_min_price_per_gpu_hour,
        market.market_median_price_per_gpu_hour,
        cheapest.cheapest_market_provider
    from usage
    left join market
        on usage.charge_date = market.price_date
        and usage.gpu_model = market.gpu_model
        and usage.pricing_category = market.pricing_category
    left join cheapest
        on market.price_date = cheapest.price_date
        and market.gpu_model = cheapest.gpu_model
        and market.pricing_category = cheapest.pricing_category
        and cheapest.price_rank = 1

),

final as (

    select
        charge_date,
        provider_name,
        gpu_model,
        pricing_category,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        '{{ reporting_currency() }}' as reporting_currency,
        cast(effective_cost_reporting as decimal(38, 12)) as effective_cost_reporting,
        cast(unconverted_rows as integer) as unconverted_rows,
        our_price_per_gpu_hour,
        cast(coalesce(market_offers, 0) as integer) as market_offers,
        cast(market_min_price_per_gpu_hour as decimal(38, 12)) as market_min_price_per_gpu_hour,
        cast(market_median_price_per_gpu_hour as decimal(38, 12)) as market_median_price_per_gpu_hour,
        cheapest_market_provider,
        cast(our_price_per_gpu_hour - market_median_price_per_gpu_hour as decimal(38, 12))
            as overpay_per_gpu_hour_vs_median,
        cast(our_price_per_gpu_hour - market_min_price_per_gpu_hour as decimal(38, 12))
            as overpay_per_gpu_hour_vs_cheapest,
        cast(
            case
                when our_price_per_gpu_hour > market_median_price_per_gpu_hour
                    then {{ decimal_product(['our_price_per_gpu_hour - market_median_price_per_gpu_hour', 'gpu_hours']) }}
                when market_median_price_per_gpu_hour is not null then 0
            end as decimal(38, 12)
        ) as savings_moving_to_median,
        cast(
            case
                when our_price_per_gpu_hour > market_min_price_per_gpu_hour
                    then {{ decimal_product(['our_price_per_gpu_hour - market_min_price_per_gpu_hour', 'gpu_hours']) }}
                when market_min_price_per_gpu_hour is not null then 0
            end as decimal(38, 12)
        ) as savings_moving_to_cheapest
    from compared

)

select * from final
