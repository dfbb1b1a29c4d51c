{#-
    AWS Spot Advisor as captured each day: per region, OS and GPU/accelerator instance type, the
    average spot saving against on-demand and the interruption-frequency band. Kept apart from the
    price offers because it is advice about spot, not a price: it says how often spot capacity is
    reclaimed, which the spot price alone does not. savings_ratio (a fraction) is what a spot
    estimate multiplies: estimated spot price = on-demand price × (1 − savings_ratio).
-#}

with

source as (

    select * from {{ source('prices', 'aws_spot_advisor') }}

),

final as (

    select
        price_day,
        observed_at,
        region,
        os,
        instance_type,
        cast(savings_pct as decimal(38, 12)) as savings_pct,
        {{ decimal_divide('savings_pct', 100, 6) }} as savings_ratio,
        interruption_band,
        interruption_label,
        cast(interruption_max_pct as decimal(38, 12)) as interruption_max_pct,
        source_url,
        _load_id as load_id
    from source

)

select * from final
