{#-
    The one value `value_column` takes per `key_columns` in `relation`, for the keys where it is always the
    same (blanks read as null and ignored); keys with no value or with two different values are left out.
    One narrow scan of `relation`. Standard SQL.
-#}
{% macro only_value_per_key(relation, key_columns, value_column) -%}
    select
        {% for column in key_columns -%}
        {{ column }},
        {% endfor -%}
        max({{ value_column }}) as {{ value_column }}
    from (
        select
            {% for column in key_columns + [value_column] -%}
            {{ blank_as_null(column) }} as {{ column }}{{ ',' if not loop.last }}
            {% endfor %}
        from {{ relation }}
    ) as keyed_values
    where {{ value_column }} is not null
    group by {{ key_columns | join(', ') }}
    having count(distinct {{ value_column }}) = 1
{%- endmacro %}
