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
    are read from its table in the warehouse (it is built before the models that select from it), found
    through the graph rather than through ref(): in a unit test ref() names the test's input, whose
    columns dbt takes from that same table.
-#}
{% macro columns_or_typed_nulls(model_name, typed_columns) -%}
    {%- set present = [] -%}
    {%- if execute -%}
        {%- set relation = model_relation_in_warehouse(model_name) -%}
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

{#-
    The warehouse relation of the model `model_name`. A unit test's manifest holds only the test's inputs
    (its graph has no nodes), so there the table is looked up by name in every schema of the target database
    (dbt's list_schemas: Spark has no information_schema).
-#}
{% macro model_relation_in_warehouse(model_name) -%}
    {%- set found = [] -%}
    {%- if graph.get('nodes') -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name == model_name -%}
            {%- do found.append(adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias)) -%}
        {%- endfor -%}
    {%- else -%}
        {%- for row in dbt.list_schemas(target.database).rows -%}
            {%- set relation = adapter.get_relation(database=target.database, schema=row[0], identifier=model_name) -%}
            {%- if relation is not none -%}{%- do found.append(relation) -%}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if found | length != 1 or found[0] is none -%}
        {{ exceptions.raise_compiler_error(
            "model_relation_in_warehouse: " ~ model_name ~ " must be built (exactly once) before the models reading its columns"
        ) }}
    {%- endif -%}
    {{ return(found[0]) }}
{%- endmacro %}
