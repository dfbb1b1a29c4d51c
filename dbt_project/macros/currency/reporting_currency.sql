{#-
    The reporting currency every mart also shows amounts in (dbt var `reporting_currency`, EUR or
    USD), validated once here so a typo fails the build instead of producing empty columns.
-#}
{% macro reporting_currency() -%}
    {%- set currency = var('reporting_currency', 'USD') | upper -%}
    {%- if currency not in ['EUR', 'USD'] -%}
        {{ exceptions.raise_compiler_error(
            "dbt var reporting_currency must be EUR or USD (the currencies int_fx__daily_rates converts to), got '"
            ~ currency ~ "'"
        ) }}
    {%- endif -%}
    {{ return(currency) }}
{%- endmacro %}
