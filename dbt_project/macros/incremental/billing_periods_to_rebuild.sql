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
    about to rebuild (clear_periods), so that a period restated without any line the mart keeps loses its old
    rows. Emptied, a period still counts as new to the table, so the model's query rebuilds the same periods.
-#}
{% macro clear_billing_periods_to_rebuild(period_column='billing_period_start', built_at_column='cost_lines_built_at', by_month=false) %}
    {%- if execute and incremental_with_columns([built_at_column]) -%}
        {{ return(clear_periods(
            period_column,
            billing_periods_to_rebuild(period_column, built_at_column, by_month),
            '%Y-%m-%d' if by_month else '%Y-%m-%d %H:%M:%S'
        )) }}
    {%- endif -%}
{% endmacro %}
