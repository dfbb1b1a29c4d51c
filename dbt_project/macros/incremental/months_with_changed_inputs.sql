{#-
    For a table incremental by usage month whose inputs carry no build stamp it can compare (fct_gpu_utilization_daily:
    the hourly telemetry is rebuilt whole on every run; int_anomalies__resource_daily: keyed by charge day, not
    billing period), the months to rebuild are found by comparing fingerprints. `fingerprints` (a relation or a
    parenthesised query, see gpu_usage_month_fingerprints) holds one row per month with inputs: `usage_month` and
    `inputs_fingerprint`; the table keeps its month's fingerprint in the same two columns on every row it writes. A
    month is rebuilt when the two differ, when it is new to the table, and when its inputs are gone (it is then
    only emptied).
-#}
{% macro months_with_changed_inputs(fingerprints) %}
    select coalesce(inputs.usage_month, built.usage_month) as period_start
    from {{ fingerprints }} as inputs
    full outer join (
        select distinct usage_month, inputs_fingerprint
        from {{ this }}
    ) as built
        on inputs.usage_month = built.usage_month
    where inputs.inputs_fingerprint is null
        or built.inputs_fingerprint is null
        or inputs.inputs_fingerprint <> built.inputs_fingerprint
{% endmacro %}

{#-
    The fingerprints such a table compares, one row per usage month that has any of its inputs, as
    (usage_month, inputs_fingerprint), from int_gpu_usage__month_fingerprints: `part` is `cost_lines` (the GPU cost
    lines alone) or `cost_lines_and_telemetry`. The model's query and its pre-hook both read them from here.
-#}
{% macro gpu_usage_month_fingerprints(part) %}
    select usage_month, {{ part }}_fingerprint as inputs_fingerprint
    from {{ ref('int_gpu_usage__month_fingerprints') }}
    {%- if part == 'cost_lines' %}
    where gpu_cost_line_count > 0
    {%- endif %}
{% endmacro %}

{#-
    Pre-hook of such a table: empties the months whose inputs changed (clear_periods), so that a month whose inputs
    are gone loses its rows. Emptied, a month is new to the table, so the model's query rebuilds the same months.
    A table built before it kept fingerprints is emptied whole and rebuilt.
-#}
{% macro clear_months_with_changed_inputs(part) %}
    {%- if execute and is_incremental() -%}
        {%- if incremental_by_usage_month() -%}
            {{ return(clear_periods(
                'usage_month', months_with_changed_inputs('(' ~ gpu_usage_month_fingerprints(part) ~ ')')
            )) }}
        {%- else -%}
            {{ return(clear_periods('usage_month', none)) }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}

{#- The usage month of a date or timestamp: the month of the charge day, as a date. The tables and the fingerprint
    view join on it, so it is written here once. -#}
{% macro usage_month(date_expression) -%}
    cast({{ dbt.date_trunc('month', date_expression) }} as date)
{%- endmacro %}

{#- Whether such a table is built incrementally on this run: it exists and already keeps its months' fingerprints. -#}
{% macro incremental_by_usage_month() %}
    {{ return(incremental_with_columns(['usage_month', 'inputs_fingerprint'])) }}
{% endmacro %}

{#-
    The two CTEs such a table's query opens with: `fingerprints`, its inputs' fingerprint per usage month (written on
    every row it builds), and on an incremental run `months_to_rebuild` (period_start), which its reads of the inputs
    filter on (in_months_to_rebuild). Each ends with the comma that joins it to the model's next CTE.
-#}
{% macro usage_month_rebuild_ctes(part, incremental) %}
fingerprints as (

    {{ gpu_usage_month_fingerprints(part) }}

),
{%- if incremental %}

months_to_rebuild as (

    {{ months_with_changed_inputs('fingerprints') }}

),
{%- endif %}
{% endmacro %}

{#- A predicate: the row's usage month is one this run rebuilds (usage_month_rebuild_ctes). -#}
{% macro in_months_to_rebuild(date_expression) -%}
    {{ usage_month(date_expression) }} in (select period_start from months_to_rebuild)
{%- endmacro %}
