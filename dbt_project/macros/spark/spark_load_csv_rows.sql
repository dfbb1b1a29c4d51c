{#-
    Seeds on Spark: dbt-spark's session method formats each value into the SQL as '<value>' without escaping
    (an apostrophe in a seed breaks the statement), turns numbers into floats and empty cells into the text
    'None'. This loader writes each value as an escaped string literal cast to the column's type instead:
    exact for decimals, null for empty cells, any text. dbt's dispatch order (dbt_project.yml) picks it up.
-#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set types = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do types.append(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0))) -%}
    {%- endfor -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {%- for row in chunk %}
            ({%- for value in row -%}
                {%- if value is none -%}
                    cast(null as {{ types[loop.index0] }})
                {%- else -%}
                    cast('{{ dbt.escape_single_quotes(value | string) }}' as {{ types[loop.index0] }})
                {%- endif -%}
                {%- if not loop.last %}, {% endif -%}
            {%- endfor -%}){%- if not loop.last %},{% endif -%}
            {%- endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- if loop.first -%}
            {%- do statements.append(sql) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}
