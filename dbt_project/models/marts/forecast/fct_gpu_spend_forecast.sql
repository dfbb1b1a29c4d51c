{#-
    Month-end GPU spend forecast and budget status: per billing month and series (provider × team × currency, each
    team, each provider), the forecast as of the month's latest day in the warehouse (int_forecast__daily_series), and
    where a budget covers the series (int_forecast__budgets: scope team or provider, same month and currency) the
    share used, projected overrun and the day the budget runs out at the current burn rate. docs/spend-anomalies-and-forecast.md "Forecast and
    budgets".
-#}

{%- set month_series = ['grain', 'provider_name', 'team', 'billing_currency', 'billing_month'] %}

with

daily as (

    select * from {{ ref('int_forecast__daily_series') }}

),

budgets as (

    select * from {{ ref('int_forecast__budgets') }}

),

latest as (

    select *
    from (
        select
            daily.*,
            row_number() over (
                partition by grain, provider_name, team, billing_currency, billing_month order by charge_date desc
            ) as day_rank
        from daily
    ) as ranked
    where day_rank = 1

),

budgeted as (

    select
        latest.*,
        budgets.amount as budget_amount,
        budgets.is_overridden as budget_is_overridden
    from latest
    left join budgets
        on latest.billing_month = budgets.budget_month
        and latest.billing_currency = budgets.billing_currency
        and (
            (latest.grain = 'team' and budgets.scope = 'team' and latest.team = budgets.scope_name)
            or (latest.grain = 'provider' and budgets.scope = 'provider' and latest.provider_name = budgets.scope_name)
        )

),

-- the day month-to-date spend first reached the budget, where it already has
reached as (

    select budgeted.grain, budgeted.provider_name, budgeted.team, budgeted.billing_currency, budgeted.billing_month,
        min(daily.charge_date) as reached_on
    from budgeted
    inner join daily
        on {{ keys_match('budgeted', 'daily', month_series) }}
        and daily.month_to_date_cost >= budgeted.budget_amount
    group by budgeted.grain, budgeted.provider_name, budgeted.team, budgeted.billing_currency, budgeted.billing_month

),

projected as (

    select
        budgeted.*,
        reached.reached_on,
        case
            when budgeted.run_rate > 0 and budgeted.budget_amount > budgeted.month_to_date_cost
                then cast(ceil({{ decimal_divide('budgeted.budget_amount - budgeted.month_to_date_cost', 'budgeted.run_rate', 6) }}) as integer)
        end as days_until_budget_spent
    from budgeted
    left join reached
        on {{ keys_match('budgeted', 'reached', month_series) }}

)

select
    billing_month,
    charge_date as as_of_date,
    grain,
    provider_name,
    team,
    billing_currency,
    month_to_date_cost,
    days_elapsed,
    days_in_month,
    days_remaining,
    days_remaining = 0 as is_month_complete,
    run_rate as burn_rate_per_day,
    run_rate_low as burn_rate_low,
    run_rate_high as burn_rate_high,
    forecast_cost,
    forecast_low,
    forecast_high,
    budget_amount,
    budget_is_overridden,
    case when budget_amount > 0 then {{ decimal_divide('month_to_date_cost', 'budget_amount', 4) }} end as budget_used_share,
    cast(forecast_cost - budget_amount as decimal(38, 12)) as projected_overrun,
    coalesce(forecast_cost > budget_amount, false) as is_projected_over_budget,
    case
        when reached_on is not null then reached_on
        when days_until_budget_spent <= days_remaining
            then cast({{ dbt.dateadd('day', 'days_until_budget_spent', 'charge_date') }} as date)
    end as budget_runout_date
from projected
