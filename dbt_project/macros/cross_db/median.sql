{#-
    The median of a numeric expression as an aggregate, keeping its exact type (decimals stay decimals).

    Standard SQL's ordered-set aggregate `percentile_cont(0.5) within group (order by …)` works on
    DuckDB, Postgres, Snowflake and Spark 3.3+; Trino has no exact percentile, only
    approx_percentile, so it gets its own implementation.
-#}
{% macro median(expression) -%}
    {{ return(adapter.dispatch('median', 'gpu_finops')(expression)) }}
{%- endmacro %}

{% macro default__median(expression) -%}
    percentile_cont(0.5) within group (order by {{ expression }})
{%- endmacro %}

{% macro trino__median(expression) -%}
    approx_percentile({{ expression }}, 0.5)
{%- endmacro %}
