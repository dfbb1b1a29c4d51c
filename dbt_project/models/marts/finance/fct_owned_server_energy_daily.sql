{#-
    What owned GPU servers' energy cost per day, from measured kWh where their GPUs have telemetry. The inventory's
    Energy cost line (int_onprem__daily_cost_lines: power_draw_kw × PUE × 24 h × price) is an assumption and stays as
    it is in the FOCUS data, which reconciles to the inventory; this mart sets the measured figure beside it:
    facility kWh of the GPU-hours with telemetry (fct_gpu_energy_daily: GPU energy × the chip-to-server factor ×
    PUE), plus the assumed kWh for the share of the day's GPU-hours without telemetry, × the inventory's electricity
    price. `energy_basis` says which: measured, measured_and_assumed, assumed. fct_buy_vs_rent prices ownership's
    energy from the measured days (int_finance__owned_server_costs).
-#}

{%- set grain = ['usage_date', 'resource_id'] %}

with

assets as (

    select asset_id, site, hostname, gpu_model, gpu_count, currency, electricity_price_per_kwh, team
    from {{ ref('int_onprem__gpu_assets') }}

),

cost_lines as (

    select
        ResourceId as resource_id,
        cast(ChargePeriodStart as date) as usage_date,
        SkuMeter as component,
        PricingQuantity as quantity,
        EffectiveCost as cost
    from {{ ref('int_onprem__daily_cost_lines') }}
    where SkuMeter in ('Depreciation', 'Energy')

),

-- every day a server is in service has a depreciation line; the energy line only where the inventory has its inputs
asset_days as (

    select
        resource_id,
        usage_date,
        max(case when component = 'Energy' then quantity end) as assumed_kwh,
        max(case when component = 'Energy' then cost end) as assumed_energy_cost
    from cost_lines
    group by resource_id, usage_date

),

measured as (

    select
        usage_date,
        resource_id,
        sum(gpu_hours) as measured_gpu_hours,
        sum(gpu_kwh) as measured_gpu_kwh,
        sum(facility_kwh) as measured_facility_kwh,
        sum(kgco2e) as measured_kgco2e
    from {{ ref('fct_gpu_energy_daily') }}
    where provider_name = 'On-premises'
        and energy_source in ('measured_counter', 'power_integrated')
    group by usage_date, resource_id

),

joined as (

    select
        asset_days.usage_date,
        asset_days.resource_id,
        assets.hostname,
        assets.site,
        assets.gpu_model,
        assets.team,
        assets.currency,
        assets.electricity_price_per_kwh,
        cast(assets.gpu_count * 24 as decimal(38, 12)) as gpu_hours,
        asset_days.assumed_kwh,
        asset_days.assumed_energy_cost,
        coalesce(measured.measured_gpu_hours, 0) as measured_gpu_hours,
        measured.measured_gpu_kwh,
        measured.measured_facility_kwh,
        measured.measured_kgco2e
    from asset_days
    inner join assets
        on asset_days.resource_id = assets.asset_id
    left join measured
        on asset_days.usage_date = measured.usage_date
        and asset_days.resource_id = measured.resource_id

),

-- the share of the day's GPU-hours no telemetry measured, 0 to 1
shares as (

    select
        joined.*,
        case
            when measured_gpu_hours >= gpu_hours then cast(0 as decimal(38, 12))
            else {{ decimal_divide('gpu_hours - measured_gpu_hours', 'gpu_hours', 12) }}
        end as unmeasured_share
    from joined

),

combined as (

    select
        shares.*,
        case
            when measured_gpu_hours > 0 and unmeasured_share = 0 then 'measured'
            when measured_gpu_hours > 0 and assumed_kwh is not null then 'measured_and_assumed'
            when measured_gpu_hours > 0 then 'measured'
            when assumed_kwh is not null then 'assumed'
        end as energy_basis,
        case
            when measured_gpu_hours > 0 then
                cast(
                    measured_facility_kwh + coalesce({{ decimal_product(['assumed_kwh', 'unmeasured_share']) }}, 0)
                    as decimal(38, 12)
                )
            else assumed_kwh
        end as energy_kwh
    from shares

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as owned_server_energy_daily_key,
        usage_date,
        resource_id,
        hostname,
        site,
        gpu_model,
        team,
        currency,
        gpu_hours,
        cast(measured_gpu_hours as decimal(38, 12)) as measured_gpu_hours,
        cast(measured_gpu_kwh as decimal(38, 12)) as measured_gpu_kwh,
        cast(measured_facility_kwh as decimal(38, 12)) as measured_facility_kwh,
        cast(measured_kgco2e as decimal(38, 12)) as measured_kgco2e,
        cast(assumed_kwh as decimal(38, 12)) as assumed_kwh,
        cast(assumed_energy_cost as decimal(38, 12)) as assumed_energy_cost,
        energy_basis,
        cast(energy_kwh as decimal(38, 12)) as energy_kwh,
        cast(electricity_price_per_kwh as decimal(38, 12)) as electricity_price_per_kwh,
        {{ decimal_product(['energy_kwh', 'electricity_price_per_kwh']) }} as energy_cost,
        cast(
            {{ decimal_product(['energy_kwh', 'electricity_price_per_kwh']) }} - assumed_energy_cost
            as decimal(38, 12)
        ) as energy_cost_vs_assumed
    from combined

)

select * from final
