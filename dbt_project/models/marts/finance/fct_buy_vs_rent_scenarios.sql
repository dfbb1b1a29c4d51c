{#-
    The break-even curve: for one owned server per GPU model (int_finance__owned_server_costs), what a
    utilized GPU-hour costs at 30% to 100% utilization, against renting the same GPU-hours at several prices:
    our own effective rate, the market's typical on-demand and spot price and cheapest offer (newest day of the
    price index), and the fixed prices of dbt var `buy_vs_rent_rental_prices`. Formulas: gpu-metrics
    reference section 8.2; 730 hours a month.
-#}

{%- set hours_per_month = 730 -%}
{%- set utilizations = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] -%}
{%- set fixed_prices = var('buy_vs_rent_rental_prices', []) or [] -%}

with

owned as (

    select * from {{ ref('int_finance__owned_server_costs') }}

),

utilization_grid as (

    {% for utilization in utilizations -%}
    select cast({{ utilization }} as decimal(9, 4)) as utilization
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

),

rental_prices as (

    select gpu_model, 'our_effective_rate' as rental_price_source, effective_rate_per_gpu_hour as rental_price_per_gpu_hour
    from {{ ref('int_finance__gpu_rates') }}

    union all

    select gpu_model, 'market_on_demand', on_demand_price_per_gpu_hour
    from {{ ref('int_finance__market_gpu_prices') }}

    union all

    select gpu_model, 'market_spot', spot_price_per_gpu_hour
    from {{ ref('int_finance__market_gpu_prices') }}

    union all

    select gpu_model, 'market_cheapest', cheapest_price_per_gpu_hour
    from {{ ref('int_finance__market_gpu_prices') }}

    {% for price in fixed_prices %}
    union all

    select gpu_model, 'fixed', cast('{{ price }}' as decimal(38, 12))
    from owned
    {% endfor %}

),

scenarios as (

    select
        owned.*,
        utilization_grid.utilization,
        rental_prices.rental_price_source,
        cast(rental_prices.rental_price_per_gpu_hour as decimal(38, 12)) as rental_price_per_gpu_hour,
        cast(owned.depreciation_per_month + owned.opex_per_month as decimal(38, 12)) as owned_cost_per_month,
        {{ decimal_product([
            'rental_prices.rental_price_per_gpu_hour', 'owned.gpus_per_server', hours_per_month, 'utilization_grid.utilization'
        ]) }} as rent_cost_per_month
    from owned
    inner join rental_prices
        on owned.gpu_model = rental_prices.gpu_model
    cross join utilization_grid
    where rental_prices.rental_price_per_gpu_hour is not null

),

final as (

    select
        {{ generate_surrogate_key(['gpu_model', 'utilization', 'rental_price_source', 'rental_price_per_gpu_hour']) }}
            as buy_vs_rent_scenario_key,
        gpu_model,
        utilization,
        rental_price_source,
        rental_price_per_gpu_hour,
        currency,
        gpus_per_server,
        capex_per_server,
        owned_cost_per_month,
        rent_cost_per_month,
        {{ decimal_divide(
            'owned_cost_per_month', decimal_product(['gpus_per_server', hours_per_month, 'utilization']), 6
        ) }} as owned_cost_per_utilized_gpu_hour,
        {{ decimal_divide(
            'owned_cost_per_month', decimal_product(['rental_price_per_gpu_hour', 'gpus_per_server', hours_per_month]), 4
        ) }} as break_even_utilization,
        case
            when rent_cost_per_month > opex_per_month
                then {{ decimal_divide('capex_per_server', 'rent_cost_per_month - opex_per_month', 2) }}
        end as break_even_months,
        cast(
            round(
                {{ decimal_product(['rent_cost_per_month - opex_per_month', 'annuity_factor']) }}
                + {{ decimal_product(['capex_per_server', 'residual_value_fraction', 'end_of_life_discount_factor']) }}
                - capex_per_server,
                2
            ) as decimal(38, 2)
        ) as npv_own_minus_rent,
        rent_cost_per_month > owned_cost_per_month as owning_cheaper
    from scenarios

)

select * from final
