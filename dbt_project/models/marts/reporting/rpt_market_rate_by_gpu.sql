{#-
    Our GPU-hours against the market over the whole history, per GPU model and pricing category, in the
    reporting currency: our effective rate per GPU-hour and what paying the median or cheapest offer saves.
-#}

with

usage as (

    select
        gpu_model,
        pricing_category,
        max(reporting_currency) as reporting_currency,
        sum(gpu_hours) as gpu_hours,
        sum(effective_cost_reporting) as effective_cost_reporting,
        sum(savings_moving_to_median) as savings_moving_to_median,
        sum(savings_moving_to_cheapest) as savings_moving_to_cheapest
    from {{ ref('fct_market_benchmark') }}
    where gpu_hours > 0
    group by gpu_model, pricing_category

)

select
    cast(gpu_model as string) as gpu_model,
    cast(pricing_category as string) as pricing_category,
    cast(reporting_currency as string) as reporting_currency,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(effective_cost_reporting as decimal(38, 12)) as effective_cost_reporting,
    {{ decimal_divide('effective_cost_reporting', 'gpu_hours', 12) }} as effective_rate_per_gpu_hour,
    cast(savings_moving_to_median as decimal(38, 12)) as savings_moving_to_median,
    cast(savings_moving_to_cheapest as decimal(38, 12)) as savings_moving_to_cheapest
from usage
