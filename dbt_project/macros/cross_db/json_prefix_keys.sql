{#-
    A flat JSON object (as text) with every top-level key that is neither listed in `keep_keys` nor
    already starts with `prefix` renamed to prefix || key; values are kept. Null stays null, and an
    object whose keys all qualify is returned exactly as delivered.

    FOCUS SkuPriceDetails allows only the FOCUS-defined property names and provider keys starting
    with `x_`, so the FOCUS export renames a provider's own keys instead of dropping them:

    json_prefix_keys('SkuPriceDetails', ['CoreCount', 'InstanceType'])
        '{"CoreCount":4,"Family":"gpu"}'  ->  '{"CoreCount":4,"x_Family":"gpu"}'
-#}
{% macro json_prefix_keys(json_column, keep_keys, prefix='x_') -%}
    {{ return(adapter.dispatch('json_prefix_keys', 'gpu_finops')(json_column, keep_keys, prefix)) }}
{%- endmacro %}

{%- macro _json_prefix_keys_sql_list(keys) -%}
    {%- for key in keys -%}'{{ key | replace("'", "''") }}'{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}

{#- DuckDB and the default: the object as a MAP(VARCHAR, JSON), keys rewritten, serialized again. -#}
{% macro default__json_prefix_keys(json_column, keep_keys, prefix='x_') -%}
    {%- set keep = gpu_finops._json_prefix_keys_sql_list(keep_keys) -%}
    {%- set prefix_sql = prefix | replace("'", "''") -%}
    case
        when {{ json_column }} is null then null
        when len(list_filter(
            json_keys({{ json_column }}),
            lambda k: not (k in ({{ keep }}) or starts_with(k, '{{ prefix_sql }}'))
        )) = 0 then {{ json_column }}
        else cast(to_json(map_from_entries(list_transform(
            map_entries(json_transform({{ json_column }}, '"MAP(VARCHAR, JSON)"')),
            lambda e: struct_pack(
                key := case
                    when e.key in ({{ keep }}) or starts_with(e.key, '{{ prefix_sql }}') then e.key
                    else '{{ prefix_sql }}' || e.key
                end,
                value := e.value
            )
        ))) as varchar)
    end
{%- endmacro %}

{#-
    Spark: the object as a map<string, variant>, so values keep their JSON type (a map<string, string>
    turned `false` into `"false"`); Spark string literals treat backslash as an escape character.
-#}
{% macro spark__json_prefix_keys(json_column, keep_keys, prefix='x_') -%}
    {%- set keep = gpu_finops._json_prefix_keys_sql_list(keep_keys) -%}
    {%- set prefix_sql = prefix | replace("\\", "\\\\") | replace("'", "\\'") -%}
    case
        when {{ json_column }} is null then null
        when not exists(
            json_object_keys({{ json_column }}),
            k -> not (k in ({{ keep }}) or startswith(k, '{{ prefix_sql }}'))
        ) then {{ json_column }}
        else to_json(transform_keys(
            from_json({{ json_column }}, 'map<string,variant>'),
            (k, v) -> case
                when k in ({{ keep }}) or startswith(k, '{{ prefix_sql }}') then k
                else concat('{{ prefix_sql }}', k)
            end
        ))
    end
{%- endmacro %}
