{#-
    The exact product of several decimal factors as DECIMAL(38, scale), rounded after each step.
    Multiplying DECIMAL(38, 12) values adds their scales (24, then 36), which leaves no room for the
    integer digits of money amounts after two or three factors; casting back after every factor keeps
    the product exact to `scale` decimals for amounts below 10^14. Standard SQL, so it runs anywhere.
-#}
{% macro decimal_product(factors, scale=12) -%}
    {%- set ns = namespace(expression="cast(" ~ factors[0] ~ " as decimal(38, " ~ scale ~ "))") -%}
    {%- for factor in factors[1:] -%}
        {%- set ns.expression = "cast(" ~ ns.expression ~ " * cast(" ~ factor ~ " as decimal(38, " ~ scale ~ ")) as decimal(38, " ~ scale ~ "))" -%}
    {%- endfor -%}
    {{ ns.expression }}
{%- endmacro %}
