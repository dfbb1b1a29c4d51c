{#-
    The join condition `left.k = right.k and …` over the columns `keys` (a list of names), for models
    that join one series to another on several key columns.
-#}
{% macro keys_match(left, right, keys) -%}
    {%- for key in keys %}{{ left }}.{{ key }} = {{ right }}.{{ key }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endmacro %}
