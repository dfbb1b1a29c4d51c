{#-
    The value of one top-level key of a JSON object held as text, as a string (null when the key
    is missing or the text is null). FOCUS key-value columns (Tags, SkuPriceDetails) and
    x_extensions are flat objects, so one key is all we ever need.

    json_extract_string('Tags', 'team')  ->  the "team" tag, e.g. 'research'
-#}
{% macro json_extract_string(json_column, key) -%}
    {{ return(adapter.dispatch('json_extract_string', 'gpu_finops')(json_column, key)) }}
{%- endmacro %}

{#- DuckDB (the project's warehouse) and the default: a quoted key survives ':', '.', spaces. -#}
{% macro default__json_extract_string(json_column, key) -%}
    json_extract_string({{ json_column }}, '$."{{ key | replace("'", "''") | replace('"', '\\"') }}"')
{%- endmacro %}

{% macro spark__json_extract_string(json_column, key) -%}
    get_json_object({{ json_column }}, '$[\'{{ key | replace("'", "\\'") }}\']')
{%- endmacro %}
