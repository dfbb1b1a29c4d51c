{#-
    Performance per euro (and per dollar) of our own serving, per month, served model, GPU model and provider: the
    tokens our servers produced per second of GPU time held, divided by what a GPU-hour cost us (allocation basis,
    idle included), so GPUs compare by what a euro buys rather than by hourly rate. Next to it, the same measured
    throughput priced at the cheapest on-demand offer of the same GPU model each day (int_prices__offers_by_day):
    what the tokens would have cost, and what a euro would buy, on the market's cheapest GPU of that model.

    tokens per second per euro = tokens ÷ (GPU-hours × 3600) ÷ (cost ÷ GPU-hours) = tokens ÷ (3600 × cost): the tokens
    per second that one euro per hour of GPU buys. Amounts convert at each day's ECB rate (int_fx__daily_rates).
-#}

{%- set grain = ['usage_month', 'model_name', 'gpu_model', 'provider_name'] %}

with

model_days as (

    select * from {{ ref('int_serving__model_costs_daily') }}
    where allocation_cost is not null

),

rates as (

    select rate_day, from_currency, to_currency, rate from {{ ref('int_fx__daily_rates') }}

),

-- the cheapest on-demand offer of each GPU model and day, in dollars
market as (

    select price_date, gpu_model, min(price_per_gpu_hour_usd) as cheapest_price_per_gpu_hour_usd
    from {{ ref('int_prices__offers_by_day') }}
    where pricing_model = 'on_demand'
        and price_per_gpu_hour_usd is not null
    group by price_date, gpu_model

),

providers as (

    select provider, provider_class from {{ ref('price_providers') }}

),

converted as (

    select
        model_days.*,
        {{ dbt.date_trunc('month', 'model_days.usage_date') }} as usage_month,
        {{ amount_in_currency('model_days.allocation_cost', 'model_days.billing_currency', 'EUR', 'to_eur.rate') }}
            as cost_eur,
        {{ amount_in_currency('model_days.allocation_cost', 'model_days.billing_currency', 'USD', 'to_usd.rate') }}
            as cost_usd,
        {{ decimal_product(['model_days.gpu_hours', 'market.cheapest_price_per_gpu_hour_usd']) }} as market_cost_usd,
        {{ decimal_product(['model_days.gpu_hours', 'market.cheapest_price_per_gpu_hour_usd', 'usd_to_eur.rate']) }}
            as market_cost_eur,
        case when market.cheapest_price_per_gpu_hour_usd is null then 1 else 0 end as unpriced_day
    from model_days
    left join rates as to_eur
        on model_days.usage_date = to_eur.rate_day
        and model_days.billing_currency = to_eur.from_currency
        and to_eur.to_currency = 'EUR'
    left join rates as to_usd
        on model_days.usage_date = to_usd.rate_day
        and model_days.billing_currency = to_usd.from_currency
        and to_usd.to_currency = 'USD'
    left join rates as usd_to_eur
        on model_days.usage_date = usd_to_eur.rate_day
        and usd_to_eur.from_currency = 'USD'
        and usd_to_eur.to_currency = 'EUR'
    left join market
        on model_days.usage_date = market.price_date
        and model_days.gpu_model = market.gpu_model

),

summed as (

    select
        cast(usage_month as date) as usage_month,
        model_name,
        gpu_model,
        provider_name,
        count(distinct usage_date) as serving_days,
        sum(gpu_hours) as gpu_hours,
        sum(active_gpu_hours) as active_gpu_hours,
        sum(coalesce(prompt_tokens, 0) + coalesce(generation_tokens, 0)) as total_tokens,
        sum(coalesce(generation_tokens, 0)) as generation_tokens,
        sum(cost_eur) as cost_eur,
        sum(cost_usd) as cost_usd,
        count(*) - count(cost_eur) as unconverted_rows,
        -- market cost only over fully priced months: a partial sum would flatter the market
        case when sum(unpriced_day) = 0 then sum(market_cost_usd) end as market_cost_usd,
        case when sum(unpriced_day) = 0 then sum(market_cost_eur) end as market_cost_eur
    from converted
    group by usage_month, model_name, gpu_model, provider_name

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as inference_performance_per_euro_key,
        summed.usage_month,
        summed.model_name,
        summed.gpu_model,
        summed.provider_name,
        coalesce(
            providers.provider_class,
            case when summed.provider_name = 'On-premises' then 'owned' else 'other' end
        ) as provider_class,
        cast(summed.serving_days as bigint) as serving_days,
        cast(summed.gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(summed.active_gpu_hours as decimal(38, 12)) as active_gpu_hours,
        cast(summed.total_tokens as decimal(38, 0)) as total_tokens,
        cast(summed.generation_tokens as decimal(38, 0)) as generation_tokens,
        {{ decimal_divide('summed.total_tokens', decimal_product(['summed.gpu_hours', 3600]), 6) }}
            as tokens_per_gpu_second,
        {{ decimal_divide('summed.generation_tokens', decimal_product(['summed.gpu_hours', 3600]), 6) }}
            as generation_tokens_per_gpu_second,
        cast(summed.cost_eur as decimal(38, 12)) as cost_eur,
        cast(summed.cost_usd as decimal(38, 12)) as cost_usd,
        cast(summed.unconverted_rows as integer) as unconverted_rows,
        {{ per_gpu_hour('summed.cost_eur', 'summed.gpu_hours', 6) }} as eur_per_gpu_hour,
        {{ decimal_divide('summed.total_tokens', decimal_product(['summed.cost_eur', 3600]), 6) }}
            as tokens_per_second_per_eur,
        {{ decimal_divide('summed.total_tokens', decimal_product(['summed.cost_usd', 3600]), 6) }}
            as tokens_per_second_per_usd,
        {{ decimal_divide('summed.cost_eur', decimal_divide('summed.total_tokens', 1000000, 12), 6) }}
            as eur_per_million_tokens,
        cast(summed.market_cost_usd as decimal(38, 12)) as market_cost_usd,
        cast(summed.market_cost_eur as decimal(38, 12)) as market_cost_eur,
        {{ decimal_divide('summed.total_tokens', decimal_product(['summed.market_cost_eur', 3600]), 6) }}
            as market_tokens_per_second_per_eur,
        {{ decimal_divide('summed.total_tokens', decimal_product(['summed.market_cost_usd', 3600]), 6) }}
            as market_tokens_per_second_per_usd,
        {{ decimal_divide('summed.market_cost_eur', decimal_divide('summed.total_tokens', 1000000, 12), 6) }}
            as market_eur_per_million_tokens
    from summed
    left join providers
        on summed.provider_name = providers.provider

)

select * from final
