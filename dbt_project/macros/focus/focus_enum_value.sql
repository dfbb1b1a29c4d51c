{#- A FOCUS enumerated value spelled as the spec does, whatever its case and surrounding spaces (Oracle's
    FOCUS rows write `Usage-based`); any other value is kept as written. Standard SQL. -#}
{% macro focus_enum_value(column, values) -%}
    case lower(trim({{ column }}))
        {%- for value in values %}
        when '{{ value | lower }}' then '{{ value }}'
        {%- endfor %}
        else {{ column }}
    end
{%- endmacro %}
