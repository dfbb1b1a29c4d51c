{#-
    Owned servers' depreciation must add up: every asset has exactly one depreciation line per day in
    service (from purchase_date, before retired_date, through the var onprem_costs_through), and for an
    asset whose whole depreciation life lies inside that window the lines sum to exactly
    purchase_price - residual_value (the daily amounts are rounded; the last day takes the remainder).
    The inventory is not a bill, so this replaces the raw-to-mart money reconciliation for on-premises
    lines. Returns the assets that do not add up.
-#}

{%- set day_after_window = 'cast(' ~ dbt.dateadd('day', 1, onprem_costs_through()) ~ ' as date)' -%}

with

assets as (

    select
        asset_id,
        cast(ceil(depreciation_years * 365) as integer) as life_days,
        purchase_price - coalesce(residual_value, 0) as depreciable_amount,
        {{ dbt.datediff(
            'purchase_date',
            'least(coalesce(retired_date, ' ~ day_after_window ~ '), ' ~ day_after_window ~ ')',
            'day',
        ) }} as service_days
    from {{ ref('int_onprem__gpu_assets') }}

),

depreciation_lines as (

    select
        ResourceId as asset_id,
        count(*) as line_count,
        sum(EffectiveCost) as depreciated_amount
    from {{ ref('int_onprem__daily_cost_lines') }}
    where SkuMeter = 'Depreciation'
    group by ResourceId

)

select
    assets.asset_id,
    assets.service_days,
    assets.life_days,
    coalesce(depreciation_lines.line_count, 0) as line_count,
    assets.depreciable_amount,
    depreciation_lines.depreciated_amount
from assets
left join depreciation_lines
    on assets.asset_id = depreciation_lines.asset_id
where coalesce(depreciation_lines.line_count, 0) <> greatest(assets.service_days, 0)
    or (assets.service_days >= assets.life_days and depreciation_lines.depreciated_amount <> assets.depreciable_amount)
