{#-
    Use a model's custom schema name verbatim (`marts`, not `main_marts`).
    Nodes without a custom schema land in the profile's target schema.
-#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
