{#-
    The GPU offers in effect on each day: for every calendar day and feed, that feed's latest capture
    on or before the day — so a price can be looked up as it was on any day, and a day a provider could
    not be fetched still shows its last known prices. A capture older than the dbt var
    `price_max_capture_age_days` (default 7) no longer counts: a feed that stopped delivering drops out
    of the market instead of quoting stale prices forever.

    The history itself is raw.price_observations: append-only per (feed, capture day), each row with
    its observed_at, so this model can be rebuilt for any past day.
-#}

{%- set max_age_days = var('price_max_capture_age_days', 7) -%}

with

offers as (

    select * from {{ ref('int_prices__gpu_offers') }}

),

captures as (

    select distinct feed, price_day from offers

),

bounds as (

    select
        min(price_day) as first_day,
        {{ dbt.datediff('min(price_day)', 'max(price_day)', 'day') }} as day_count
    from captures

),

calendar as (

    {{ calendar_days('bounds', 'price_date') }}

),

capture_in_effect as (

    select
        calendar.price_date,
        captures.feed,
        max(captures.price_day) as price_day
    from calendar
    inner join captures
        on captures.price_day <= calendar.price_date
        and captures.price_day > {{ dbt.dateadd('day', -max_age_days, 'calendar.price_date') }}
    group by calendar.price_date, captures.feed

),

final as (

    select
        capture_in_effect.price_date,
        cast({{ dbt.datediff('capture_in_effect.price_day', 'capture_in_effect.price_date', 'day') }} as bigint) as capture_age_days,
        offers.*
    from capture_in_effect
    inner join offers
        on capture_in_effect.feed = offers.feed
        and capture_in_effect.price_day = offers.price_day

)

select * from final
