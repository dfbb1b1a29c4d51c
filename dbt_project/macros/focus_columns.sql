{#-
    The FOCUS columns of the canonical cost lines, read from the one definition (var `focus_columns` in
    dbt_project.yml, which sources/focus/columns.py reads too), and the select list that gives a model's
    lines every one of them.
-#}

{#- (name, SQL type) of every FOCUS column, in the definition's order. -#}
{% macro focus_columns() -%}
    {%- set columns = [] -%}
    {%- for name, kind, version in var('focus_columns') -%}
        {%- do columns.append((name, focus_column_type(kind))) -%}
    {%- endfor -%}
    {{ return(columns) }}
{%- endmacro %}

{#- The SQL type of a column kind of the definition: money and quantities are exact DECIMAL(38, 12). -#}
{% macro focus_column_type(kind) -%}
    {%- set types = {
        'string': dbt.type_string(),
        'json': dbt.type_string(),
        'decimal': 'decimal(38, 12)',
        'datetime': dbt.type_timestamp(),
    } -%}
    {%- if kind not in types -%}
        {{ exceptions.raise_compiler_error("focus_columns: unknown kind '" ~ kind ~ "', expected one of " ~ types.keys() | list) }}
    {%- endif -%}
    {{ return(types[kind]) }}
{%- endmacro %}

{#-
    Column name -> select expression for the model `model_name`: the column itself where the model has
    it, else a null of the column's type, in the manner of dbt_utils.union_relations. The model's columns
    are read from its table in the warehouse (it is built before the models that select from it); the
    node is looked up in the graph rather than through ref(), so that a unit test, where ref() names the
    test's input, reads the same columns.
-#}
{% macro columns_or_typed_nulls(model_name, typed_columns) -%}
    {%- set present = [] -%}
    {%- if execute -%}
        {%- set node = graph.nodes.values()
            | selectattr('resource_type', 'equalto', 'model')
            | selectattr('name', 'equalto', model_name)
            | first -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is none -%}
            {{ exceptions.raise_compiler_error(
                "columns_or_typed_nulls: " ~ model_name ~ " is not in the warehouse yet; build it first"
            ) }}
        {%- endif -%}
        {%- for column in adapter.get_columns_in_relation(relation) -%}
            {%- do present.append(column.name | lower) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set expressions = {} -%}
    {%- for name, sql_type in typed_columns -%}
        {%- do expressions.update({
            name: name if name | lower in present else 'cast(null as ' ~ sql_type ~ ')'
        }) -%}
    {%- endfor -%}
    {{ return(expressions) }}
{%- endmacro %}
