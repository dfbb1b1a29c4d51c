{#-
    Empties the periods of an incremental table that this run is about to rebuild, before their rows are computed
    (a pre-hook). delete+insert (and Spark's insert_overwrite) replace only the periods the new rows carry, so a
    period whose inputs no longer give the table any row would keep its old rows; emptied first, it ends as a full
    refresh leaves it. `periods` is a query of the periods' start values; none empties the whole table (a table
    built before it had the columns that say what to rebuild). On DuckDB the delete runs in the model's
    transaction. Spark's Parquet tables have no DELETE: the periods' partitions are dropped, or the table truncated.
-#}
{% macro clear_periods(period_column, periods, period_format='%Y-%m-%d') %}
    {{ return(adapter.dispatch('clear_periods', 'gpu_finops')(period_column, periods, period_format)) }}
{% endmacro %}

{% macro default__clear_periods(period_column, periods, period_format) -%}
    delete from {{ this }}
    {%- if periods is not none %}
    where {{ period_column }} in ({{ periods }})
    {%- endif %}
{%- endmacro %}

{% macro spark__clear_periods(period_column, periods, period_format) -%}
    {%- if periods is none -%}
        {%- do run_query('truncate table ' ~ this) -%}
    {%- else -%}
        {%- for period in run_query(periods).columns[0].values() -%}
            {%- do run_query(
                'alter table ' ~ this ~ ' drop if exists partition ('
                ~ period_column ~ " = '" ~ period.strftime(period_format) ~ "')"
            ) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
