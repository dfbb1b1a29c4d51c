{#-
    The incremental configuration of the models that replace whole billing periods (int_billing__cost_lines and
    the marts built from it by period), one choice per engine, used as
    `config(materialized='incremental', **replace_periods(['x_source', 'BillingPeriodStart']))`.

    DuckDB: delete+insert on the period key (macros/duckdb/delete_insert.sql), so a run's rows for a key replace
    every old row of that key.
    Spark: Parquet tables have no delete. The table is partitioned by the key and each run overwrites the
    partitions its rows fall in (insert_overwrite; dbt-spark turns on dynamic partition overwrite,
    spark.sql.sources.partitionOverwriteMode=dynamic), which replaces whole periods the same way; the partitions
    a run has no rows for stay as they are. Spark writes partition columns last, so on Spark these tables list the
    key columns at the end.
-#}
{% macro replace_periods(key) -%}
    {{ return(adapter.dispatch('replace_periods', 'gpu_finops')(key)) }}
{%- endmacro %}

{% macro default__replace_periods(key) -%}
    {{ return({'incremental_strategy': 'delete+insert', 'unique_key': key}) }}
{%- endmacro %}

{% macro spark__replace_periods(key) -%}
    {{ return({
        'incremental_strategy': 'insert_overwrite',
        'partition_by': [key] if key is string else key,
        'file_format': 'parquet',
    }) }}
{%- endmacro %}
