{#-
    The window function call `last_value(expression)` skipping nulls, to be followed by its `over (…)`
    clause in the model: carries the last known value forward (an FX rate over days without one).
    DuckDB spells the option inside the parentheses, Spark as the function's second argument.
-#}
{% macro last_value_ignore_nulls(expression) -%}
    {{ return(adapter.dispatch('last_value_ignore_nulls', 'gpu_finops')(expression)) }}
{%- endmacro %}

{% macro duckdb__last_value_ignore_nulls(expression) -%}
    last_value({{ expression }} ignore nulls)
{%- endmacro %}

{% macro spark__last_value_ignore_nulls(expression) -%}
    last_value({{ expression }}, true)
{%- endmacro %}
