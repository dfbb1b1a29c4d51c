{#-
    How good the month-end forecast is: the method of fct_gpu_spend_forecast replayed as of each day of
    `forecast_backtest_days` (default the 10th and 20th) of every month the warehouse holds whole, against what the
    month then cost. docs/spend-anomalies-and-forecast.md "Forecast and budgets" publishes the demo's error.
-#}

{%- set month_series = ['grain', 'provider_name', 'team', 'billing_currency', 'billing_month'] %}

with

daily as (

    select * from {{ ref('int_forecast__daily_series') }}

),

-- months the warehouse holds from their first day to their last
complete_months as (

    select grain, provider_name, team, billing_currency, billing_month
    from daily
    group by grain, provider_name, team, billing_currency, billing_month
    having min(days_elapsed) = 1 and min(days_remaining) = 0

)

select
    daily.billing_month,
    cast(daily.days_elapsed as integer) as cutoff_day,
    daily.charge_date as as_of_date,
    daily.grain,
    daily.provider_name,
    daily.team,
    daily.billing_currency,
    daily.month_to_date_cost,
    daily.forecast_cost,
    daily.forecast_low,
    daily.forecast_high,
    daily.month_cost_in_warehouse as actual_month_cost,
    cast(daily.forecast_cost - daily.month_cost_in_warehouse as decimal(38, 12)) as forecast_error,
    case
        when daily.month_cost_in_warehouse > 0
            then {{ decimal_divide('abs(daily.forecast_cost - daily.month_cost_in_warehouse)', 'daily.month_cost_in_warehouse', 4) }}
    end as absolute_percentage_error,
    daily.month_cost_in_warehouse between daily.forecast_low and daily.forecast_high as actual_within_range
from daily
inner join complete_months
    on {{ keys_match('daily', 'complete_months', month_series) }}
where daily.days_elapsed in ({{ var('forecast_backtest_days') | join(', ') }})
