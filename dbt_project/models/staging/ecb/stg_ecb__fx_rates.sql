{#-
    ECB euro reference rates, one row per publication day and currency, named for what they are:
    units of `currency` per 1 EUR. The euro itself is added at 1 so every currency, EUR included,
    converts through the same formula downstream.
-#}

with

source as (

    select * from {{ source('raw', 'ecb_fx_rates') }}

),

published as (

    select
        rate_date,
        quote_currency as currency,
        cast(rate as decimal(38, 12)) as units_per_eur,
        source_url,
        _load_id as load_id
    from source

),

euro as (

    select distinct
        rate_date,
        'EUR' as currency,
        cast(1 as decimal(38, 12)) as units_per_eur,
        source_url,
        load_id
    from published

),

final as (

    select * from published
    union all
    select * from euro

)

select * from final
