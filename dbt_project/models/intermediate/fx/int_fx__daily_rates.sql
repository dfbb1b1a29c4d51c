{#-
    A conversion rate for every calendar day, from every currency the ECB publishes to each
    reporting currency the project offers (EUR, USD): amount_in_reporting = amount × rate.

    The ECB publishes on TARGET business days only; weekends, holidays and the days since the last
    publication use the latest earlier rate (`published_on` says which). Rates cross through the
    euro: USD→EUR = 1 / units_per_eur(USD), GBP→USD = units_per_eur(USD) / units_per_eur(GBP).
-#}

{%- set reporting_currencies = ['EUR', 'USD'] -%}

with

published as (

    select rate_date, currency, units_per_eur
    from {{ ref('stg_ecb__fx_rates') }}

),

bounds as (

    select
        min(rate_date) as first_day,
        {{ dbt.datediff('min(rate_date)', 'greatest(max(rate_date), current_date)', 'day') }} as day_count
    from published

),

calendar as (

    {{ calendar_days('bounds', 'rate_day') }}

),

currencies as (

    select distinct currency from published

),

filled as (

    select
        calendar.rate_day,
        currencies.currency,
        {{ last_value_ignore_nulls('published.units_per_eur') }} over (
            partition by currencies.currency
            order by calendar.rate_day
            rows between unbounded preceding and current row
        ) as units_per_eur,
        {{ last_value_ignore_nulls('published.rate_date') }} over (
            partition by currencies.currency
            order by calendar.rate_day
            rows between unbounded preceding and current row
        ) as published_on
    from calendar
    cross join currencies
    left join published
        on calendar.rate_day = published.rate_date
        and currencies.currency = published.currency

),

final as (

    select
        source_rates.rate_day,
        source_rates.currency as from_currency,
        target_rates.currency as to_currency,
        {{ decimal_divide('target_rates.units_per_eur', 'source_rates.units_per_eur', 12) }} as rate,
        source_rates.published_on
    from filled as source_rates
    inner join filled as target_rates
        on source_rates.rate_day = target_rates.rate_day
    where target_rates.currency in ('{{ reporting_currencies | join("', '") }}')
        and source_rates.units_per_eur is not null
        and target_rates.units_per_eur is not null

)

select * from final
