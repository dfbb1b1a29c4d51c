{#-
    Fails on every (source, value) pair where the column holds a value outside `values`: the FOCUS
    vocabularies are tested once on the cost lines of every source, and the failing rows still name
    the source (x_source) whose mapping produced the value, with how many lines carry it. Nulls pass.
-#}
{% test accepted_values_by_source(model, column_name, values, source_column='x_source') %}

select
    {{ source_column }} as source,
    {{ column_name }} as value_field,
    count(*) as n_records
from {{ model }}
where {{ column_name }} is not null
    and {{ column_name }} not in (
        {%- for value in values %}'{{ value | replace("'", "''") }}'{{ ', ' if not loop.last }}{% endfor -%}
    )
group by {{ source_column }}, {{ column_name }}

{% endtest %}
