{#- A text value that is empty or only spaces is no value: null. Standard SQL. -#}
{% macro blank_as_null(column) -%}
    case when trim({{ column }}) = '' then null else {{ column }} end
{%- endmacro %}
