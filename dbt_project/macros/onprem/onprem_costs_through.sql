{#-
    The last day (inclusive) for which owned servers accrue daily cost lines, as a SQL date: the dbt
    var `onprem_costs_through` (YYYY-MM-DD) when set, else the environment variable
    FINOPS_ONPREM_COSTS_THROUGH when set, else the day before this dbt run started, in UTC
    (today is not over yet, and cloud bills lag by a day too). Fixed at compile time, so every model
    and test of one run sees the same day.
-#}
{% macro onprem_costs_through() -%}
    {#- The environment is read only when the model runs: read while dbt parses, dbt would re-parse every model
        calling this whenever the variable changes, and its partial re-parse of a singular test drops the test's
        properties (the `_ParseWithOurDbt` note in pipelines/lib/transform/dbt.py). -#}
    {%- set configured = var('onprem_costs_through', none)
        or (env_var('FINOPS_ONPREM_COSTS_THROUGH', '') if execute else '') -%}
    {%- if configured -%}
        {%- if not modules.re.fullmatch('[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])', configured | string) -%}
            {{ exceptions.raise_compiler_error(
                "var onprem_costs_through (environment variable FINOPS_ONPREM_COSTS_THROUGH) must be a date "
                ~ "YYYY-MM-DD, not '" ~ configured ~ "'"
            ) }}
        {%- endif -%}
        {%- set through = modules.datetime.datetime.strptime(configured | string, '%Y-%m-%d').date() -%}
    {%- else -%}
        {%- set through = (run_started_at - modules.datetime.timedelta(days=1)).date() -%}
    {%- endif -%}
    cast('{{ through.isoformat() }}' as date)
{%- endmacro %}
