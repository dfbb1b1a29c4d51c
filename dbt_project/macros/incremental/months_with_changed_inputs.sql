{#-
    For a table incremental by month whose inputs carry no build stamp it can compare (fct_gpu_utilization_daily:
    the hourly telemetry is rebuilt whole on every run; int_anomalies__resource_daily: keyed by charge day, not
    billing period), the months to rebuild are found by comparing fingerprints. `fingerprints` (a relation or a
    parenthesised query) holds one row per month of the inputs, with their fingerprint in `inputs_column`
    (int_gpu_usage__month_fingerprints); the table keeps its month's fingerprint in `fingerprint_column` on every row
    it writes. A month is rebuilt when the two differ, when it is new to the table, and when its inputs are gone
    (it is then only emptied).
-#}
{% macro months_with_changed_inputs(fingerprints, inputs_column, month_column='usage_month', fingerprint_column='inputs_fingerprint') %}
    select coalesce(inputs.{{ month_column }}, built.{{ month_column }}) as period_start
    from {{ fingerprints }} as inputs
    full outer join (
        select distinct {{ month_column }}, {{ fingerprint_column }}
        from {{ this }}
    ) as built
        on inputs.{{ month_column }} = built.{{ month_column }}
    where inputs.{{ inputs_column }} is null
        or built.{{ fingerprint_column }} is null
        or inputs.{{ inputs_column }} <> built.{{ fingerprint_column }}
{% endmacro %}

{#-
    Pre-hook of such a table: empties the months whose inputs changed (clear_periods), so that a month whose inputs
    are gone loses its rows. Emptied, a month is new to the table, so the model's query rebuilds the same months.
    A table built before it kept fingerprints is emptied whole and rebuilt.
-#}
{% macro clear_months_with_changed_inputs(fingerprints, inputs_column, month_column='usage_month', fingerprint_column='inputs_fingerprint') %}
    {%- if execute and is_incremental() -%}
        {%- if incremental_with_columns([month_column, fingerprint_column]) -%}
            {{ return(clear_periods(
                month_column, months_with_changed_inputs(fingerprints, inputs_column, month_column, fingerprint_column)
            )) }}
        {%- else -%}
            {{ return(clear_periods(month_column, none)) }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
