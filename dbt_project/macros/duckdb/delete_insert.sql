{#-
    The delete+insert incremental strategy for a multi-column unique key, as a semi-join.

    The incremental billing models replace whole billing periods: unique_key is
    (x_source, BillingPeriodStart), so thousands of new rows share one key value. dbt-duckdb
    deletes a multi-column key with `DELETE … USING new_rows WHERE keys match`, a join that pairs
    every old row of a period with every new row of it (millions squared for one month of a large
    bill). Deleting where the key is IN the distinct keys of the new rows touches each old row once.
    dbt's own default (Postgres, Trino, …) already does this; only DuckDB needs the override, which
    this project's dispatch search order (dbt_project.yml) picks up.
-#}
{% macro duckdb__get_delete_insert_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {%- set dest_cols_csv = get_quoted_csv(dest_columns | map(attribute="name")) -%}
    {%- if unique_key -%}
        {%- set keys = [unique_key] if unique_key is string else unique_key -%}
        delete from {{ target }}
        where ({{ keys | join(', ') }}) in (
            select distinct {{ keys | join(', ') }}
            from {{ source }}
        )
        {%- for predicate in incremental_predicates or [] %}
            and {{ predicate }}
        {%- endfor %};
    {%- endif %}

    insert into {{ target }} ({{ dest_cols_csv }})
    (
        select {{ dest_cols_csv }}
        from {{ source }}
    )
{%- endmacro %}
