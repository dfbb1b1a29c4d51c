{#-
    numerator / denominator as an exact DECIMAL(38, scale), rounded half away from zero; null when
    the denominator is null or zero. Used for unit prices such as cost per GPU-hour.

    Both engines divide in whole numbers: the amounts scaled to 12 decimals as integers N and D, the
    result round(N * 10^scale / D) computed with integer division and remainders, so no engine rounds
    on the way (DuckDB turns decimal / decimal into a DOUBLE; Spark rounds a quotient of two
    DECIMAL(38, 12) to 6 or 18 decimals first, a second rounding). Exact for amounts below 10^14;
    beyond that the engine raises an overflow error rather than return a wrong number.
-#}
{% macro decimal_divide(numerator, denominator, scale=6) -%}
    {{ return(adapter.dispatch('decimal_divide', 'gpu_finops')(numerator, denominator, scale)) }}
{%- endmacro %}

{%- macro _decimal_divide_unit(scale) -%}
    {{ ("0." ~ "0" * (scale - 1) ~ "1") if scale > 0 else "1" }}
{%- endmacro %}

{#- DuckDB: 128-bit integers (hugeint) and integer division `//`. -#}
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
            ) * cast('{{ gpu_finops._decimal_divide_unit(scale) }}' as decimal(38, {{ scale }}))
    end
{%- endmacro %}

{#-
    Spark: DECIMAL(38, 0) integers; `a - a % b` is an exact multiple of b, so dividing it loses nothing
    whatever scale Spark gives the quotient. The integer part and the rounded fraction are divided
    separately so neither quotient needs more than 20 integer digits (Spark's limit for a quotient when
    spark.sql.decimalOperations.allowPrecisionLoss is off). One lambda holds N and D so each expression
    is written once.
-#}
{% macro spark__decimal_divide(numerator, denominator, scale=6) -%}
    {%- set whole = "(abs(units.n) - abs(units.n) % abs(units.d)) / abs(units.d)" -%}
    {%- set fraction_twice = "(2 * (abs(units.n) % abs(units.d)) * " ~ 10 ** scale ~ " + abs(units.d))" -%}
    {%- set fraction = "(" ~ fraction_twice ~ " - " ~ fraction_twice ~ " % (2 * abs(units.d))) / (2 * abs(units.d))" -%}
    {%- set magnitude -%}
        (
            cast(cast({{ whole }} as decimal(38, 0)) as decimal(37, {{ scale }}))
            + cast(
                cast(cast({{ fraction }} as decimal(38, 0)) as decimal(19, 0)) * {{ gpu_finops._decimal_divide_unit(scale) }}
                as decimal(37, {{ scale }})
            )
        )
    {%- endset -%}
    transform(
        array(named_struct(
            'n', cast(cast({{ numerator }} as decimal(38, 12)) * 1000000000000 as decimal(38, 0)),
            'd', nullif(cast(cast({{ denominator }} as decimal(38, 12)) * 1000000000000 as decimal(38, 0)), 0)
        )),
        units -> cast(
            case when (units.n < 0) <> (units.d < 0) then -{{ magnitude }} else {{ magnitude }} end
            as decimal(38, {{ scale }})
        )
    )[0]
{%- endmacro %}
