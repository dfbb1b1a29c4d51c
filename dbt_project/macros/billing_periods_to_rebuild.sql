{#-
    For the models built incrementally from int_billing__cost_lines by billing period: the billing periods
    whose cost lines were rebuilt (x_built_at) after this table last read them (its `built_at_column`), or
    are new to it. Used as `where BillingPeriodStart in ({{ billing_periods_to_rebuild() }})`. With `by_month`,
    the months of those periods (`date_trunc('month', BillingPeriodStart)` as a date), for a table keyed by
    billing month (fct_commitment_coverage_monthly): a month is rebuilt when any of its periods' lines were.
-#}
{% macro billing_periods_to_rebuild(period_column='billing_period_start', built_at_column='cost_lines_built_at', by_month=false) %}
    {%- set period = 'cast(' ~ dbt.date_trunc('month', 'BillingPeriodStart') ~ ' as date)' if by_month
        else 'BillingPeriodStart' %}
    select lines.period_start
    from (
        select {{ period }} as period_start, max(x_built_at) as built_at
        from {{ ref('int_billing__cost_lines') }}
        group by {{ period }}
    ) as lines
    left join (
        select {{ period_column }} as period_start, max({{ built_at_column }}) as built_at
        from {{ this }}
        group by {{ period_column }}
    ) as summed
        on cast(lines.period_start as timestamp) = cast(summed.period_start as timestamp)
    where summed.built_at is null or lines.built_at > summed.built_at
{% endmacro %}

{#-
    Pre-hook of an incremental mart that keeps only some cost lines (fct_gpu_spend_daily, the GPU lines;
    fct_commitment_coverage_monthly, all but the owned servers'): empties the billing periods (or months) it is
    about to rebuild. delete+insert (and Spark's insert_overwrite) replace only the periods the new rows carry,
    so a period restated without any line the mart keeps would keep its old rows; emptied first, it ends as a
    full refresh leaves it. On DuckDB the delete runs in the model's transaction, before its rows are computed
    (they are the same periods: emptied, a period still counts as new to the table). Spark's Parquet tables have
    no DELETE: the periods' partitions are dropped.
-#}
{% macro clear_billing_periods_to_rebuild(period_column='billing_period_start', built_at_column='cost_lines_built_at', by_month=false) %}
    {%- if execute and incremental_with_columns([built_at_column]) -%}
        {{ return(adapter.dispatch('clear_billing_periods_to_rebuild', 'gpu_finops')(period_column, built_at_column, by_month)) }}
    {%- endif -%}
{% endmacro %}

{% macro default__clear_billing_periods_to_rebuild(period_column, built_at_column, by_month) -%}
    delete from {{ this }}
    where {{ period_column }} in ({{ billing_periods_to_rebuild(period_column, built_at_column, by_month) }})
{%- endmacro %}

{% macro spark__clear_billing_periods_to_rebuild(period_column, built_at_column, by_month) -%}
    {%- set periods = run_query(billing_periods_to_rebuild(period_column, built_at_column, by_month)) -%}
    {%- for period in periods.columns[0].values() -%}
        {%- do run_query(
            'alter table ' ~ this ~ ' drop if exists partition ('
            ~ period_column ~ " = '" ~ period.strftime('%Y-%m-%d' if by_month else '%Y-%m-%d %H:%M:%S') ~ "')"
        ) -%}
    {%- endfor -%}
{%- endmacro %}
