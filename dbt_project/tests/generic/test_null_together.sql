{#- Fails on every row where exactly one of the two columns is null: they must be null together. -#}
{% test null_together(model, column_name, other_column) %}

select
    {{ column_name }},
    {{ other_column }}
from {{ model }}
where
    ({{ column_name }} is null and {{ other_column }} is not null)
    or ({{ column_name }} is not null and {{ other_column }} is null)

{% endtest %}
