{#-
    Should we buy GPU servers instead of renting? Per GPU model we rent and have buy assumptions for: the
    servers that would carry our average concurrent GPUs, what owning them costs (int_finance__owned_server_costs:
    capex with cluster interconnect, depreciation to a residual value, energy with PUE, colocation,
    maintenance), what the same usage costs to rent at our own effective rate (int_finance__gpu_rates), when
    owning pays back and its net present value. Formulas: gpu-metrics reference section 8.2; 730 hours a month.
-#}

{%- set hours_per_month = 730 -%}

with

usage as (

    select * from {{ ref('int_finance__gpu_rates') }}

),

owned as (

    select * from {{ ref('int_finance__owned_server_costs') }}

),

sized as (

    select
        usage.gpu_model,
        usage.window_start,
        usage.window_end,
        usage.window_hours,
        usage.gpu_hours,
        usage.effective_cost,
        usage.effective_rate_per_gpu_hour,
        usage.avg_concurrent_gpus,
        owned.server_description,
        owned.currency,
        owned.assumption_currency,
        owned.overridden_assumptions,
        owned.gpus_per_server,
        owned.life_years,
        owned.life_months,
        owned.residual_value_fraction,
        owned.discount_rate,
        owned.capex_per_server,
        owned.depreciation_per_month,
        owned.energy_per_month,
        owned.energy_basis,
        owned.colocation_per_month,
        owned.maintenance_per_month,
        owned.opex_per_month,
        owned.annuity_factor,
        owned.end_of_life_discount_factor,
        -- enough whole servers for the average load; at least one, to show what a single server would do
        cast(
            case
                when usage.avg_concurrent_gpus <= owned.gpus_per_server then 1
                else ceil({{ decimal_divide('usage.avg_concurrent_gpus', 'owned.gpus_per_server', 6) }})
            end as integer
        ) as servers,
        -- what renting the same GPUs costs a month at our own effective rate
        {{ decimal_divide(decimal_product(['usage.effective_cost', hours_per_month]), 'usage.window_hours', 12) }}
            as rent_cost_per_month,
        -- utilization at which one owned server costs as much per GPU-hour as renting
        {{ decimal_divide(
            'owned.depreciation_per_month + owned.opex_per_month',
            decimal_product(['usage.effective_rate_per_gpu_hour', 'owned.gpus_per_server', hours_per_month]),
            4
        ) }} as break_even_utilization
    from usage
    inner join owned
        on usage.gpu_model = owned.gpu_model

),

fleet as (

    select
        sized.*,
        {{ decimal_product(['servers', 'capex_per_server']) }} as capex_total,
        {{ decimal_product(['servers', 'depreciation_per_month + opex_per_month']) }} as owned_cost_per_month,
        {{ decimal_product(['servers', 'opex_per_month']) }} as fleet_opex_per_month,
        {{ decimal_divide('avg_concurrent_gpus', 'servers * gpus_per_server', 4) }} as owned_utilization
    from sized

),

final as (

    select
        gpu_model,
        server_description,
        currency,
        window_start,
        window_end,
        window_hours,
        gpu_hours,
        effective_cost,
        effective_rate_per_gpu_hour,
        avg_concurrent_gpus,
        gpus_per_server,
        servers,
        owned_utilization,
        capex_per_server,
        capex_total,
        depreciation_per_month,
        energy_per_month,
        energy_basis,
        colocation_per_month,
        maintenance_per_month,
        opex_per_month,
        owned_cost_per_month,
        rent_cost_per_month,
        cast(
            capex_total
            + {{ decimal_product(['fleet_opex_per_month', 'life_months']) }}
            - {{ decimal_product(['capex_total', 'residual_value_fraction']) }}
            as decimal(38, 12)
        ) as owned_tco_over_life,
        {{ decimal_product(['rent_cost_per_month', 'life_months']) }} as rent_cost_over_life,
        case
            when avg_concurrent_gpus > 0
                then {{ decimal_divide('owned_cost_per_month', decimal_product(['avg_concurrent_gpus', hours_per_month]), 6) }}
        end as owned_cost_per_utilized_gpu_hour,
        break_even_utilization,
        case
            when rent_cost_per_month > fleet_opex_per_month
                then {{ decimal_divide('capex_total', 'rent_cost_per_month - fleet_opex_per_month', 2) }}
        end as break_even_months,
        cast(
            round(
                {{ decimal_product(['rent_cost_per_month - fleet_opex_per_month', 'annuity_factor']) }}
                + {{ decimal_product(['capex_total', 'residual_value_fraction', 'end_of_life_discount_factor']) }}
                - capex_total,
                2
            ) as decimal(38, 2)
        ) as npv_own_minus_rent,
        life_years,
        discount_rate,
        -- the rule of thumb (a whole server's worth of GPUs busy around the clock), and owning cheaper per GPU-hour
        coalesce(avg_concurrent_gpus >= gpus_per_server and owned_utilization >= break_even_utilization, false)
            as owning_worth_evaluating,
        assumption_currency,
        overridden_assumptions
    from fleet

)

select * from final
