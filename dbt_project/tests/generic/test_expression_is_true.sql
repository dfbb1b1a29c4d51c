{#- Fails on every row where the SQL expression is not true (false or null). -#}
{% test expression_is_true(model, expression) %}

select *
from {{ model }}
where not coalesce({{ expression }}, false)

{% endtest %}
