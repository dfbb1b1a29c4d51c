{#-
    on-run-start: make the raw layer (the lake, FINOPS_LAKE) readable as dbt's sources of schema `raw` and `audit`
    (but those of var lake_skipped_sources, kept in DuckDB only).

    DuckDB: nothing to do, the Python loader keeps a view per table over the lake's Parquet files.
    Spark: one external Parquet table per source table over `<lake>/<schema>/<table>`, every file below it at any
    depth (recursiveFileLookup; the lake has no `key=value` folders). A table missing from the catalog is created
    (Spark reads its schema from the files then); every table is refreshed, so a long-lived Spark server lists the
    files again after a load. The catalog keeps a table's schema from when it was created: `--full-refresh` drops
    and re-creates every entry (dropping an external table leaves its files alone), which picks up columns the
    loader added since. Catalog statements only, one `show tables` per schema and no Spark job per table.
-#}
{% macro register_lake_sources() -%}
    {{ return(adapter.dispatch('register_lake_sources', 'gpu_finops')()) }}
{%- endmacro %}

{% macro default__register_lake_sources() -%}
{%- endmacro %}

{% macro spark__register_lake_sources() -%}
    {%- if execute -%}
        {%- set lake = lake_root() -%}
        {%- set tables = [] -%}
        {%- for source in graph.sources.values() | sort(attribute='unique_id') -%}
            {%- set table = (source.schema, source.identifier) -%}
            {%- set skipped = (source.schema ~ '.' ~ source.identifier) in var('lake_skipped_sources', []) -%}
            {%- if source.schema in ('raw', 'audit') and not skipped and table not in tables -%}
                {%- do tables.append(table) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- for schema in tables | map('first') | unique -%}
            {%- do run_query('create schema if not exists ' ~ schema) -%}
            {%- set registered = [] if flags.FULL_REFRESH else run_query('show tables in ' ~ schema).columns[1].values() | map('lower') | list -%}
            {%- for table_schema, identifier in tables if table_schema == schema -%}
                {%- set name = schema ~ '.' ~ identifier -%}
                {%- if identifier | lower in registered -%}
                    {%- do run_query('refresh table ' ~ name) -%}
                {%- else -%}
                    {%- do run_query('drop table if exists ' ~ name) -%}
                    {%- do run_query(
                        'create table ' ~ name ~ ' using parquet'
                        ~ " options (recursiveFileLookup 'true')"
                        ~ " location '" ~ lake ~ '/' ~ schema ~ '/' ~ identifier ~ "'"
                    ) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endfor -%}
        {{ log('Registered ' ~ tables | length ~ ' lake tables from ' ~ lake, info=true) }}
    {%- endif -%}
{%- endmacro %}

{#- The lake's root folder or URL, without a trailing slash: FINOPS_LAKE, by default FINOPS_HOME/lake. -#}
{% macro lake_root() -%}
    {{ return(env_var('FINOPS_LAKE', env_var('FINOPS_HOME', '../data') ~ '/lake').rstrip('/')) }}
{%- endmacro %}
