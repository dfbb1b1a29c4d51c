{#-
    A flat JSON object, as text, whose values are the given SQL expressions cast to text (nulls as
    JSON null). Used to keep a few source columns in `x_extensions` where the loader did not.

    json_object_of_text({'MeterName': 'MeterName', 'ChargeType': 'ChargeType'})
      ->  '{"MeterName":"ND96isr H100 v5","ChargeType":"Usage"}'
-#}
{% macro json_object_of_text(fields) -%}
    {{ return(adapter.dispatch('json_object_of_text', 'gpu_finops')(fields)) }}
{%- endmacro %}

{#- DuckDB (the project's warehouse) and the default: json_object(key, value, ...). -#}
{% macro default__json_object_of_text(fields) -%}
    cast(json_object(
        {%- for key, expression in fields.items() %}
        '{{ key | replace("'", "''") }}', cast({{ expression }} as string){{ ',' if not loop.last }}
        {%- endfor %}
    ) as string)
{%- endmacro %}

{#- Spark: to_json of a struct, told to keep null fields (it drops them by default). -#}
{% macro spark__json_object_of_text(fields) -%}
    to_json(named_struct(
        {%- for key, expression in fields.items() %}
        '{{ key | replace("'", "\\'") }}', cast({{ expression }} as string){{ ',' if not loop.last }}
        {%- endfor %}
    ), map('ignoreNullFields', 'false'))
{%- endmacro %}
