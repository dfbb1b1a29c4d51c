{#-
    Spark override of dbt's cross-database `dbt.listagg`: dbt-spark ignores `order_by_clause` (with a
    warning), so the order of the joined values is whatever order the rows arrive in. This sorts the
    collected (sort key, value) pairs instead. Supports `order by <one expression>` ascending, the
    only form the project uses; DuckDB's own listagg (string_agg … order by) needs no override.
-#}
{% macro spark__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
    {%- set sort_key = measure -%}
    {%- if order_by_clause -%}
        {%- set clause = order_by_clause | trim -%}
        {%- if not clause.lower().startswith('order by ') or ',' in clause or clause.lower().endswith(' desc') -%}
            {{ exceptions.raise_compiler_error("spark__listagg supports 'order by <expression>' ascending, got: " ~ order_by_clause) }}
        {%- endif -%}
        {%- set sort_key = clause[9:] | trim -%}
    {%- endif -%}
    {%- set collected -%}
        transform(
            array_sort(collect_list(
                case when {{ measure }} is not null then named_struct('sort_key', {{ sort_key }}, 'value', {{ measure }}) end
            )),
            pair -> pair.value
        )
    {%- endset -%}
    {#- null over no values, as string_agg and DuckDB's listagg give. -#}
    transform(
        array({{ "slice(" ~ collected ~ ", 1, " ~ limit_num ~ ")" if limit_num else collected }}),
        joined -> case when size(joined) > 0 then array_join(joined, {{ delimiter_text }}) end
    )[0]
{%- endmacro %}
