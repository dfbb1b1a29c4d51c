{#-
    What owned GPU servers cost, as FOCUS-shaped daily cost lines, so they sit beside cloud bills in
    every mart: one line per asset, day in service and cost component.

      Depreciation  straight line: (purchase_price - residual_value) / (depreciation_years x 365) a day
                    during the depreciation life, 0 after it. The line carries the server's GPUs
                    (24 Hours x gpu_count = GPU-hours), so fully depreciated servers still count them.
      Energy        power_draw_kw x PUE x 24 h x electricity_price_per_kwh (PUE 1 when not given).
      Colocation    power_draw_kw x colocation_price_per_kw_month x 12 / 365.
      Maintenance   maintenance_per_year / 365.

    Days run from purchase_date up to, not including, retired_date, and at most through the var
    `onprem_costs_through` (inclusive; default yesterday, UTC). Exact decimals: divisions are rounded
    to 6 decimals (half away from zero), and the last day of the depreciation life takes the
    remainder, so the depreciation lines of a whole life sum to exactly purchase_price - residual_value.
    Energy is a product of the inputs and is not rounded. A component whose inputs are missing has no
    lines.
-#}

{#- Days generated per asset at most (100 years); assert_onprem_depreciation_reconciles catches more. -#}
{%- set max_service_days = 36525 -%}

with

assets as (

    select
        *,
        cast(ceil(depreciation_years * 365) as integer) as life_days,
        purchase_price - coalesce(residual_value, 0) as depreciable_amount,
        least(
            coalesce(retired_date, cast({{ dbt.dateadd('day', 1, onprem_costs_through()) }} as date)),
            cast({{ dbt.dateadd('day', 1, onprem_costs_through()) }} as date)
        ) as service_end
    from {{ ref('int_onprem__gpu_assets') }}

),

assets_with_rates as (

    select
        *,
        {{ dbt.datediff('purchase_date', 'service_end', 'day') }} as service_days,
        {{ decimal_divide('depreciable_amount', 'life_days', 6) }} as daily_depreciation
    from assets

),

day_numbers as (

    {{ dbt.generate_series(max_service_days) }}

),

asset_days as (

    select
        assets_with_rates.*,
        day_numbers.generated_number - 1 as day_index,
        cast({{ dbt.dateadd('day', 'day_numbers.generated_number - 1', 'assets_with_rates.purchase_date') }} as date)
            as charge_date
    from assets_with_rates
    inner join day_numbers
        on day_numbers.generated_number <= assets_with_rates.service_days

),

components as (

    select
        asset_days.*,
        'Depreciation' as component,
        case
            when day_index < life_days - 1 then daily_depreciation
            when day_index = life_days - 1 then depreciable_amount - daily_depreciation * (life_days - 1)
            else 0
        end as amount,
        cast(24 as decimal(38, 12)) as quantity,
        'Hours' as unit,
        case when day_index >= life_days then ' (fully depreciated)' else '' end as note
    from asset_days

    union all

    select
        asset_days.*,
        'Energy' as component,
        cast(
            cast(cast(power_draw_kw * coalesce(pue, 1) as decimal(38, 12)) * 24 as decimal(38, 12))
            * electricity_price_per_kwh
            as decimal(38, 12)
        ) as amount,
        cast(cast(power_draw_kw * coalesce(pue, 1) as decimal(38, 12)) * 24 as decimal(38, 12)) as quantity,
        'kWh' as unit,
        '' as note
    from asset_days
    where power_draw_kw is not null
        and electricity_price_per_kwh is not null

    union all

    select
        asset_days.*,
        'Colocation' as component,
        {{ decimal_divide('power_draw_kw * colocation_price_per_kw_month * 12', 365, 6) }} as amount,
        power_draw_kw as quantity,
        'kW-Days' as unit,
        '' as note
    from asset_days
    where power_draw_kw is not null
        and colocation_price_per_kw_month is not null

    union all

    select
        asset_days.*,
        'Maintenance' as component,
        {{ decimal_divide('maintenance_per_year', 365, 6) }} as amount,
        cast(1 as decimal(38, 12)) as quantity,
        'Days' as unit,
        '' as note
    from asset_days
    where maintenance_per_year is not null

),

final as (

    select
        cast(amount as decimal(38, 12)) as BilledCost,
        site as BillingAccountId,
        site as BillingAccountName,
        currency as BillingCurrency,
        cast({{ dbt.dateadd('month', 1, dbt.date_trunc('month', 'charge_date')) }} as timestamp) as BillingPeriodEnd,
        cast({{ dbt.date_trunc('month', 'charge_date') }} as timestamp) as BillingPeriodStart,
        'Usage' as ChargeCategory,
        {{ dbt.concat([
            'component', "' of owned server '", 'asset_id', "' ('", 'cast(gpu_count as string)', "' x '",
            'gpu_model', "')'", 'note',
        ]) }} as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        cast({{ dbt.dateadd('day', 1, 'charge_date') }} as timestamp) as ChargePeriodEnd,
        cast(charge_date as timestamp) as ChargePeriodStart,
        quantity as ConsumedQuantity,
        unit as ConsumedUnit,
        cast(amount as decimal(38, 12)) as ContractedCost,
        cast(amount as decimal(38, 12)) as EffectiveCost,
        'On-premises' as InvoiceIssuerName,
        cast(amount as decimal(38, 12)) as ListCost,
        'Standard' as PricingCategory,
        quantity as PricingQuantity,
        unit as PricingUnit,
        'On-premises' as ProviderName,
        'On-premises' as PublisherName,
        asset_id as ResourceId,
        hostname as ResourceName,
        'GPU Server' as ResourceType,
        'Compute' as ServiceCategory,
        'Owned GPU Servers' as ServiceName,
        component as SkuMeter,
        tags as Tags,

        -- FOCUS 1.3 additions
        'On-premises' as ServiceProviderName,

        -- project columns
        'onprem_gpu_assets' as x_source,
        cast(gpu_count as decimal(18, 6)) as x_sku_gpu_count,
        gpu_model as x_sku_gpu_model,
        x_extensions,
        x_load_id,
        -- one inventory row gives many lines: the file name says which day and component
        {{ dbt.concat([
            'x_source_file', "'#'", 'cast(charge_date as string)', "'/'", 'lower(component)',
        ]) }} as x_source_file,
        x_source_row,
        x_ingested_at

    from components

)

select * from final
