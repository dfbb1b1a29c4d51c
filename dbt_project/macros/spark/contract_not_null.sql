{#-
    NOT NULL constraints of contracted models (`constraints: [{type: not_null}]`) where the table format cannot hold
    them. DuckDB enforces them in the table itself. Spark's Parquet tables hold no constraints (dbt-spark would try
    `alter table … set not null`, which only Delta accepts), so on Spark a post-hook of every model (dbt_project.yml)
    counts the nulls of each not-null column of a contracted model after each build, full or incremental, and fails
    the model naming the columns and counts: what the constraint would have refused, downstream nodes are skipped.
-#}
{% macro assert_contract_not_null() -%}
    {{ return(adapter.dispatch('assert_contract_not_null', 'gpu_finops')()) }}
{%- endmacro %}

{% macro default__assert_contract_not_null() -%}
{%- endmacro %}

{% macro spark__assert_contract_not_null() -%}
    {%- if execute and model.config.get('contract', {}).get('enforced') -%}
        {%- set columns = [] -%}
        {%- for name, column in model.columns.items() -%}
            {%- if column.constraints | selectattr('type', 'equalto', 'not_null') | list -%}
                {%- do columns.append(name) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- for constraint in model.constraints if constraint.type == 'not_null' -%}
            {%- do columns.extend(constraint.columns) -%}
        {%- endfor -%}
        {%- set columns = columns | unique | list -%}
        {%- if columns -%}
            {%- set sql -%}
                select
                {%- for name in columns %}
                    sum(case when {{ adapter.quote(name) }} is null then 1 else 0 end){{ ',' if not loop.last }}
                {%- endfor %}
                from {{ this }}
            {%- endset -%}
            {%- set row = run_query(sql).rows[0] -%}
            {%- set failing = [] -%}
            {%- for name in columns -%}
                {%- if row[loop.index0] -%}
                    {%- do failing.append(name ~ ' (' ~ row[loop.index0] ~ ' rows)') -%}
                {%- endif -%}
            {%- endfor -%}
            {%- if failing -%}
                {%- do exceptions.raise_compiler_error(
                    'Contract of ' ~ this ~ ': null in not-null column ' ~ failing | join(', ')) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- Parquet tables hold no constraints: assert_contract_not_null checks the not-null ones instead. -#}
{% macro spark__persist_constraints(relation, model) -%}
{%- endmacro %}
