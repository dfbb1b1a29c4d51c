{#-
    Portable surrogate key: a hash of the given columns, each cast to a string, nulls replaced by a
    marker and values separated by '|', so ('a', null) and (null, 'a') never collide.
    Built only from dbt's cross-database macros, so it runs unchanged on every adapter.
-#}
{% macro generate_surrogate_key(field_list) -%}
    {%- set parts = [] -%}
    {%- for field in field_list -%}
        {%- do parts.append("coalesce(cast(" ~ field ~ " as " ~ dbt.type_string() ~ "), '_null_')") -%}
        {%- if not loop.last -%}
            {%- do parts.append("'|'") -%}
        {%- endif -%}
    {%- endfor -%}
    {{ dbt.hash(dbt.concat(parts)) }}
{%- endmacro %}
