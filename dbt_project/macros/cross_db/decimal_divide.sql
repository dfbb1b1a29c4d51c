{#-
    numerator / denominator as an exact DECIMAL(38, scale), rounded half away from zero; null when
    the denominator is null or zero. Used for unit prices such as cost per GPU-hour.

    Trino, Spark and most warehouses divide decimals exactly, so plain division is enough there.
    DuckDB turns decimal / decimal into a DOUBLE, which would let binary floating point into money:
    its version does the division in 128-bit integers on amounts scaled to 12 decimals instead.
    That is exact for amounts below 10^14 (a hundred trillion); beyond that DuckDB raises an
    overflow error rather than return a wrong number.
-#}
{% macro decimal_divide(numerator, denominator, scale=6) -%}
    {{ return(adapter.dispatch('decimal_divide', 'gpu_finops')(numerator, denominator, scale)) }}
{%- endmacro %}

{% macro default__decimal_divide(numerator, denominator, scale=6) -%}
    cast(
        cast({{ numerator }} as decimal(38, 12)) / nullif(cast({{ denominator }} as decimal(38, 12)), 0)
        as decimal(38, {{ scale }})
    )
{%- endmacro %}

{% macro duckdb__decimal_divide(numerator, denominator, scale=6) -%}
    {%- set numerator_units = "cast(cast(" ~ numerator ~ " as decimal(38, 12)) * 1000000000000 as hugeint)" -%}
    {%- set denominator_units = "cast(cast(" ~ denominator ~ " as decimal(38, 12)) * 1000000000000 as hugeint)" -%}
    case
        when {{ denominator_units }} = 0 then null
        else
            cast(
                sign({{ numerator_units }}) * sign({{ denominator_units }})
                * (
                    (2 * abs({{ numerator_units }}) * {{ 10 ** scale }} + abs({{ denominator_units }}))
                    // (2 * abs({{ denominator_units }}))
                )
                as decimal(38, 0)
            ) * cast('{{ ("0." ~ "0" * (scale - 1) ~ "1") if scale > 0 else "1" }}' as decimal(38, {{ scale }}))
    end
{%- endmacro %}

{% macro spark__decimal_divide(numerator, denominator, scale=6) -%}
    {{ gpu_finops.default__decimal_divide(numerator, denominator, scale) }}
{%- endmacro %}

{% macro trino__decimal_divide(numerator, denominator, scale=6) -%}
    {{ gpu_finops.default__decimal_divide(numerator, denominator, scale) }}
{%- endmacro %}
