{#-
    The exact product of several decimal factors as DECIMAL(38, scale), rounded half away from zero
    after each step. Multiplying DECIMAL(38, 12) values adds their scales (24, then 36), which leaves no
    room for the integer digits of money amounts after two or three factors; casting back after every
    factor keeps the product exact to `scale` decimals for amounts below 10^14.
-#}
{% macro decimal_product(factors, scale=12) -%}
    {{ return(adapter.dispatch('decimal_product', 'gpu_finops')(factors, scale)) }}
{%- endmacro %}

{#- DuckDB: DECIMAL(38, 12) x DECIMAL(38, 12) is an exact DECIMAL(38, 24), then rounded back. -#}
{% macro duckdb__decimal_product(factors, scale=12) -%}
    {%- set ns = namespace(expression="cast(" ~ factors[0] ~ " as decimal(38, " ~ scale ~ "))") -%}
    {%- for factor in factors[1:] -%}
        {%- set ns.expression = "cast(" ~ ns.expression ~ " * cast(" ~ factor ~ " as decimal(38, " ~ scale ~ ")) as decimal(38, " ~ scale ~ "))" -%}
    {%- endfor -%}
    {{ ns.expression }}
{%- endmacro %}

{#-
    Spark: with spark.sql.decimalOperations.allowPrecisionLoss on (its default) DECIMAL(38, 12) x
    DECIMAL(38, 12) is cut to 6 decimals. Each step multiplies the magnitudes split into integer and
    fractional parts, typed so that no partial product or sum exceeds 38 digits: only the product of
    the two fractions is rounded, once, and since every part has the same sign that is the rounding of
    the whole. `aggregate` carries the product from factor to factor, so each factor is written once.
-#}
{% macro spark__decimal_product(factors, scale=12) -%}
    {%- set first = "cast(" ~ factors[0] ~ " as decimal(38, " ~ scale ~ "))" -%}
    {%- if factors | length == 1 -%}
        {{ first }}
    {%- else -%}
        {%- if scale == 0 -%}
            {%- set product = "cast(product * factor as decimal(38, 0))" -%}
        {%- else -%}
            {%- set whole_digits = 37 - scale -%}
            {%- set parts = {
                'a_whole': "cast(floor(abs(product)) as decimal(" ~ whole_digits ~ ", 0))",
                'a_fraction': "cast(abs(product) % 1 as decimal(" ~ scale ~ ", " ~ scale ~ "))",
                'b_whole': "cast(floor(abs(factor)) as decimal(" ~ whole_digits ~ ", 0))",
                'b_fraction': "cast(abs(factor) % 1 as decimal(" ~ scale ~ ", " ~ scale ~ "))",
            } -%}
            {%- set term = "cast(%s * %s as decimal(35, " ~ scale ~ "))" -%}
            {%- set magnitude -%}
                (
                    ({{ term | format(parts.a_whole, parts.b_whole) }} + {{ term | format(parts.a_whole, parts.b_fraction) }})
                    + ({{ term | format(parts.a_fraction, parts.b_whole) }} + {{ term | format(parts.a_fraction, parts.b_fraction) }})
                )
            {%- endset -%}
            {%- set product -%}
                cast(
                    case when (product < 0) <> (factor < 0) then -{{ magnitude }} else {{ magnitude }} end
                    as decimal(38, {{ scale }})
                )
            {%- endset -%}
        {%- endif -%}
        aggregate(
            array(
                {%- for factor in factors[1:] %}
                cast({{ factor }} as decimal(38, {{ scale }})){{ ',' if not loop.last }}
                {%- endfor %}
            ),
            {{ first }},
            (product, factor) -> {{ product }}
        )
    {%- endif -%}
{%- endmacro %}
