{#-
    What owning one GPU server costs a month, per GPU model, and the assumptions behind it as this run uses
    them: seed buy_vs_rent_assumptions, any value replaced by the dbt var `buy_vs_rent_overrides` (one
    mapping for every GPU model, e.g. {pue: 1.4}; an unknown key fails the build), money converted to the
    reporting currency at the newest ECB rate so it compares with what we pay for rent. fct_buy_vs_rent and
    fct_buy_vs_rent_scenarios both price ownership from here. Formulas: gpu-metrics reference section 8.2,
    730 hours a month. Energy is measured where we own servers of the model with GPU energy telemetry
    (fct_owned_server_energy_daily): their facility kWh per measured GPU-hour × GPUs per server × 730 × the
    electricity price; else the assumption's kW × draw × PUE × 730 × price. energy_basis says which.
-#}

{%- set hours_per_month = 730 -%}

{%- set assumption_types = {
    'currency': 'string',
    'server_price': 'decimal(38, 12)',
    'interconnect_fraction': 'decimal(38, 12)',
    'gpus_per_server': 'integer',
    'life_years': 'integer',
    'residual_value_fraction': 'decimal(38, 12)',
    'power_kw': 'decimal(38, 12)',
    'power_draw_fraction': 'decimal(38, 12)',
    'pue': 'decimal(38, 12)',
    'electricity_price_per_kwh': 'decimal(38, 12)',
    'colocation_per_kw_month': 'decimal(38, 12)',
    'maintenance_fraction_per_year': 'decimal(38, 12)',
    'discount_rate': 'decimal(38, 12)',
} -%}
{%- set money_columns = ['server_price', 'electricity_price_per_kwh', 'colocation_per_kw_month'] -%}
{%- set overrides = var('buy_vs_rent_overrides', {}) or {} -%}
{%- for key in overrides -%}
    {%- if key not in assumption_types -%}
        {{ exceptions.raise_compiler_error(
            "dbt var buy_vs_rent_overrides: unknown assumption '" ~ key ~ "'; known: "
            ~ (assumption_types.keys() | list | join(', '))
        ) }}
    {%- endif -%}
{%- endfor -%}

with

seed as (

    select * from {{ ref('buy_vs_rent_assumptions') }}

),

applied as (

    select
        gpu_model,
        server_description,
        {% for column, data_type in assumption_types.items() -%}
        {%- if column in overrides -%}
        cast('{{ overrides[column] }}' as {{ data_type }}) as {{ column }}
        {%- else -%}
        cast({{ column }} as {{ data_type }}) as {{ column }}
        {%- endif %},
        {% endfor -%}
        '{{ overrides.keys() | list | sort | join(", ") }}' as overridden_assumptions
    from seed

),

fx as (

    select rate_day, from_currency, rate
    from {{ ref('int_fx__daily_rates') }}
    where to_currency = '{{ reporting_currency() }}'

),

measured_energy as (

    select
        gpu_model,
        {{ decimal_divide('sum(measured_facility_kwh)', 'sum(measured_gpu_hours)', 12) }} as measured_kwh_per_gpu_hour
    from {{ ref('fct_owned_server_energy_daily') }}
    where measured_gpu_hours > 0
    group by gpu_model

),

newest_fx as (

    select fx.from_currency, fx.rate
    from fx
    inner join (select from_currency, max(rate_day) as rate_day from fx group by from_currency) as newest
        on fx.from_currency = newest.from_currency
        and fx.rate_day = newest.rate_day

),

converted as (

    select
        applied.*,
        case
            when applied.currency = '{{ reporting_currency() }}' then cast(1 as decimal(38, 12))
            else newest_fx.rate
        end as fx_rate
    from applied
    left join newest_fx
        on applied.currency = newest_fx.from_currency

),

assumptions as (

    select
        gpu_model,
        server_description,
        currency as assumption_currency,
        cast(fx_rate as decimal(38, 12)) as fx_rate,
        '{{ reporting_currency() }}' as currency,
        {% for column in assumption_types if column != 'currency' -%}
        {%- if column in money_columns -%}
        {{ decimal_product([column, 'fx_rate']) }} as {{ column }},
        {%- else -%}
        {{ column }},
        {%- endif %}
        {% endfor -%}
        nullif(overridden_assumptions, '') as overridden_assumptions
    from converted

),

per_server as (

    select
        assumptions.*,
        measured_energy.measured_kwh_per_gpu_hour,
        {{ decimal_divide('server_price', '1 - interconnect_fraction', 12) }} as capex_per_server,
        {{ decimal_product([
            'power_kw', 'power_draw_fraction', 'pue', hours_per_month, 'electricity_price_per_kwh'
        ]) }} as assumed_energy_per_month,
        {{ decimal_product([
            'measured_energy.measured_kwh_per_gpu_hour', 'gpus_per_server', hours_per_month,
            'electricity_price_per_kwh',
        ]) }} as measured_energy_per_month,
        {{ decimal_product(['colocation_per_kw_month', 'power_kw']) }} as colocation_per_month,
        {{ decimal_divide(decimal_product(['server_price', 'maintenance_fraction_per_year']), '12', 12) }}
            as maintenance_per_month,
        -- monthly discount rate r_m = (1 + r)^(1/12) - 1: a root, so binary floating point, turned into
        -- decimal factors below (the present value of 1 a month over the life, and of 1 at its end)
        power(1 + cast(discount_rate as double), cast(1 as double) / 12) - 1 as monthly_discount_rate
    from assumptions
    left join measured_energy
        on assumptions.gpu_model = measured_energy.gpu_model

),

energy_chosen as (

    select
        per_server.*,
        coalesce(measured_energy_per_month, assumed_energy_per_month) as energy_per_month,
        case when measured_energy_per_month is not null then 'measured' else 'assumed' end as energy_basis
    from per_server

),

final as (

    select
        gpu_model,
        server_description,
        assumption_currency,
        fx_rate,
        currency,
        server_price,
        interconnect_fraction,
        gpus_per_server,
        life_years,
        cast(life_years * 12 as integer) as life_months,
        residual_value_fraction,
        power_kw,
        power_draw_fraction,
        pue,
        electricity_price_per_kwh,
        colocation_per_kw_month,
        maintenance_fraction_per_year,
        discount_rate,
        overridden_assumptions,
        capex_per_server,
        {{ decimal_divide(decimal_product(['capex_per_server', '1 - residual_value_fraction']), 'life_years * 12', 12) }}
            as depreciation_per_month,
        energy_per_month,
        energy_basis,
        assumed_energy_per_month,
        measured_kwh_per_gpu_hour,
        colocation_per_month,
        maintenance_per_month,
        cast(energy_per_month + colocation_per_month + maintenance_per_month as decimal(38, 12)) as opex_per_month,
        cast(
            case
                when monthly_discount_rate = 0 then life_years * 12
                else (1 - power(1 + monthly_discount_rate, -(life_years * 12))) / monthly_discount_rate
            end as decimal(38, 12)
        ) as annuity_factor,
        cast(power(1 + monthly_discount_rate, -(life_years * 12)) as decimal(38, 12)) as end_of_life_discount_factor
    from energy_chosen

)

select * from final
