{#-
    Our effective rate per GPU-hour each day beside the market's on-demand price (cheapest and median
    offer over every provider tracked), in the reporting currency, for the four GPU models we use most
    (usage_rank 1-4 by GPU-hours over the whole history). A day has our rate, the market's, or both.
-#}

with

ranked_models as (

    select
        gpu_model,
        row_number() over (order by sum(gpu_hours) desc, gpu_model) as usage_rank
    from {{ ref('fct_market_benchmark') }}
    where gpu_hours > 0
    group by gpu_model

),

ours as (

    select
        benchmark.charge_date as rate_date,
        benchmark.gpu_model,
        max(benchmark.reporting_currency) as reporting_currency,
        sum(benchmark.effective_cost_reporting) as effective_cost_reporting,
        sum(benchmark.gpu_hours) as gpu_hours
    from {{ ref('fct_market_benchmark') }} as benchmark
    inner join ranked_models on benchmark.gpu_model = ranked_models.gpu_model
    where ranked_models.usage_rank <= 4
        and benchmark.gpu_hours > 0
        and benchmark.effective_cost_reporting is not null
    group by benchmark.charge_date, benchmark.gpu_model

),

market as (

    select
        price_date as rate_date,
        gpu_model,
        max(reporting_currency) as reporting_currency,
        min(min_price_per_gpu_hour_reporting) as market_cheapest_per_gpu_hour,
        {{ median('median_price_per_gpu_hour_reporting') }} as market_median_per_gpu_hour
    from {{ ref('fct_gpu_price_index') }}
    where pricing_model = 'on_demand'
        and gpu_model in (select gpu_model from ours)
    group by price_date, gpu_model

)

select
    cast(coalesce(ours.rate_date, market.rate_date) as date) as rate_date,
    cast(coalesce(ours.gpu_model, market.gpu_model) as string) as gpu_model,
    cast(ranked_models.usage_rank as integer) as usage_rank,
    cast(coalesce(ours.reporting_currency, market.reporting_currency) as string) as reporting_currency,
    cast(ours.effective_cost_reporting as decimal(38, 12)) as effective_cost_reporting,
    cast(ours.gpu_hours as decimal(38, 12)) as gpu_hours,
    {{ decimal_divide('ours.effective_cost_reporting', 'ours.gpu_hours', 12) }} as effective_rate_per_gpu_hour,
    cast(market.market_cheapest_per_gpu_hour as decimal(38, 12)) as market_cheapest_per_gpu_hour,
    cast(market.market_median_per_gpu_hour as decimal(38, 12)) as market_median_per_gpu_hour
from ours
full outer join market on ours.rate_date = market.rate_date and ours.gpu_model = market.gpu_model
inner join ranked_models on coalesce(ours.gpu_model, market.gpu_model) = ranked_models.gpu_model
