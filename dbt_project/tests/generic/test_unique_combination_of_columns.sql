{#- Fails on every combination of the given columns that occurs on more than one row. -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

select
    {{ combination_of_columns | join(',\n    ') }},
    count(*) as row_count
from {{ model }}
group by
    {{ combination_of_columns | join(',\n    ') }}
having count(*) > 1

{% endtest %}
