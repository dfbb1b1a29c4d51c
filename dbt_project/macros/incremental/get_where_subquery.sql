{#-
    The relation a generic data test reads (dbt wraps each test's `model` with this macro; it also applies the
    test's own `where` config). On a run that rebuilt an incremental model, its tests read only the rows this
    run wrote: the model names, in `meta.rebuilt_rows_column`, a column it sets to the run's start on every row
    it writes (int_billing__cost_lines: x_built_at); a view names the column of the table it reads and, in
    `meta.rebuilt_rows_written_by`, that table, whose building the filter then needs instead (the FOCUS export: its
    lines' x_built_at; a build of what changed rebuilds the table and leaves the view as it is). A full build or
    full refresh writes every row, so every row is tested; a run that did not build the model (`dbt test` alone,
    or a selection without it) tests the whole table. The other rows were tested by the run that wrote them.
    Singular tests and the parents of relationships tests are not wrapped: they always read whole tables.
-#}
{% macro default__get_where_subquery(relation) -%}
    {%- set conditions = [] -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}
        {%- do conditions.append(where) -%}
    {%- endif -%}
    {#- dbt also calls this while parsing, where the project's own macros are not in scope -#}
    {%- set rebuilt = rows_written_by_this_run(relation) if execute else none -%}
    {%- if rebuilt -%}
        {%- do conditions.append(rebuilt) -%}
    {%- endif -%}
    {#- A lone condition stays bare, as dbt writes it: Spark reads `from t where (x)` as t aliased `where` with
        one column alias x (WHERE is not a reserved word there) -#}
    {%- if conditions | length == 1 -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ conditions[0] ~ ') dbt_subquery') -%}
    {%- elif conditions -%}
        {%- do return('(select * from ' ~ relation ~ ' where (' ~ conditions | join(') and (') ~ ')) dbt_subquery') -%}
    {%- endif -%}
    {%- do return(relation) -%}
{%- endmacro %}

{#- The predicate selecting the rows of `relation` this invocation wrote, or none when the test must read them all. -#}
{% macro rows_written_by_this_run(relation) -%}
    {%- if flags.FULL_REFRESH -%}
        {%- do return(none) -%}
    {%- endif -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model'
        and node.config.meta.get('rebuilt_rows_column')
        and node.alias | lower == relation.identifier | lower
        and node.schema | lower == relation.schema | lower -%}
        {#- a view (the FOCUS export) carries the column of the table it reads: filter when that table was built,
            whether or not the run recreated the view (a planned build leaves views as they are) -#}
        {%- set writer = node.config.meta.get('rebuilt_rows_written_by') or node.name -%}
        {%- if not (graph.nodes.values()
                | selectattr('resource_type', 'equalto', 'model')
                | selectattr('name', 'equalto', writer)
                | selectattr('unique_id', 'in', selected_resources) | list) -%}
            {%- do return(none) -%}
        {%- endif -%}
        {%- do return(node.config.meta["rebuilt_rows_column"] ~ " = " ~ this_run_started_at()) -%}
    {%- endfor -%}
    {%- do return(none) -%}
{%- endmacro %}

{#- When this dbt invocation started, as a timestamp literal: what incremental models write on every row they write. -#}
{% macro this_run_started_at() -%}
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp)
{%- endmacro %}
