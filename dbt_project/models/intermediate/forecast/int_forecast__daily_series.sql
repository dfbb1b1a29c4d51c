{#-
    Every day of every GPU spend series with what a month-end forecast made that evening would say (docs/spend-anomalies-and-forecast.md "Forecast
    and budgets"): month-to-date effective cost, the run rate (mean daily cost of the last `forecast_run_rate_days`
    days, days without spend counted as 0, the previous month's days included early in a month) and its range (the
    cheapest and dearest of those days), projected over the days left in the month. Series: provider × team ×
    billing currency (grain provider_team), each team (provider '(all)', grain team) and each provider (team '(all)',
    grain provider). The forecast mart reads the latest day of each month, the backtest the days of
    `forecast_backtest_days`; both therefore use one method.
-#}

{%- set days = var('forecast_run_rate_days') | int %}
{%- set keys = ['grain', 'provider_name', 'team', 'billing_currency'] %}

with

resource_daily as (

    select * from {{ ref('int_anomalies__resource_daily') }}

),

series_daily as (

    select
        'provider_team' as grain, provider_name, team, billing_currency, charge_date, sum(effective_cost) as daily_cost
    from resource_daily
    group by provider_name, team, billing_currency, charge_date

    union all

    select 'team' as grain, '(all)' as provider_name, team, billing_currency, charge_date, sum(effective_cost) as daily_cost
    from resource_daily
    group by team, billing_currency, charge_date

    union all

    select
        'provider' as grain, provider_name, '(all)' as team, billing_currency, charge_date, sum(effective_cost) as daily_cost
    from resource_daily
    group by provider_name, billing_currency, charge_date

),

dense_days as (

    {{ dense_daily_series('series_daily', keys, 'daily_cost') }}

),

dense as (

    select
        dense_days.*,
        cast({{ dbt.date_trunc('month', 'charge_date') }} as date) as billing_month
    from dense_days

),

windowed as (

    select
        dense.*,
        sum(daily_cost) over (
            partition by {{ keys | join(', ') }}, billing_month order by charge_date rows between unbounded preceding and current row
        ) as month_to_date_cost,
        sum(daily_cost) over (partition by {{ keys | join(', ') }}, billing_month) as month_cost_in_warehouse,
        sum(daily_cost) over (
            partition by {{ keys | join(', ') }} order by charge_date rows between {{ days - 1 }} preceding and current row
        ) as run_rate_window_cost,
        min(daily_cost) over (
            partition by {{ keys | join(', ') }} order by charge_date rows between {{ days - 1 }} preceding and current row
        ) as run_rate_low,
        max(daily_cost) over (
            partition by {{ keys | join(', ') }} order by charge_date rows between {{ days - 1 }} preceding and current row
        ) as run_rate_high,
        count(*) over (
            partition by {{ keys | join(', ') }} order by charge_date rows between {{ days - 1 }} preceding and current row
        ) as run_rate_days,
        {{ dbt.datediff('billing_month', 'charge_date', 'day') }} + 1 as days_elapsed,
        {{ dbt.datediff('billing_month', dbt.dateadd('month', 1, 'billing_month'), 'day') }} as days_in_month
    from dense

),

projected as (

    select
        windowed.*,
        {{ decimal_divide('run_rate_window_cost', 'run_rate_days', 12) }} as run_rate,
        days_in_month - days_elapsed as days_remaining
    from windowed

)

select
    {{ keys | join(', ') }},
    billing_month,
    charge_date,
    cast(daily_cost as decimal(38, 12)) as daily_cost,
    cast(month_to_date_cost as decimal(38, 12)) as month_to_date_cost,
    cast(month_cost_in_warehouse as decimal(38, 12)) as month_cost_in_warehouse,
    cast(days_elapsed as integer) as days_elapsed,
    cast(days_in_month as integer) as days_in_month,
    cast(days_remaining as integer) as days_remaining,
    cast(run_rate_days as integer) as run_rate_days,
    run_rate,
    cast(run_rate_low as decimal(38, 12)) as run_rate_low,
    cast(run_rate_high as decimal(38, 12)) as run_rate_high,
    cast(month_to_date_cost + run_rate * days_remaining as decimal(38, 12)) as forecast_cost,
    cast(month_to_date_cost + run_rate_low * days_remaining as decimal(38, 12)) as forecast_low,
    cast(month_to_date_cost + run_rate_high * days_remaining as decimal(38, 12)) as forecast_high
from projected
