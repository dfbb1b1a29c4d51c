{#-
    Every series of `daily` (its distinct `keys`) on every day of `calendar` (a CTE with charge_date), with
    `value_column` from `daily` or 0 on days without a row: the gap-free daily series that rolling baselines
    and run rates are computed over, so a day without spend counts as a day of 0 and not as a missing one.
-#}
{% macro dense_daily_series(daily, calendar, keys, value_column) -%}
    select
        {% for key in keys %}series.{{ key }}, {% endfor %}{{ calendar }}.charge_date,
        coalesce({{ daily }}.{{ value_column }}, 0) as {{ value_column }}
    from (select distinct {{ keys | join(', ') }} from {{ daily }}) as series
    cross join {{ calendar }}
    left join {{ daily }}
        on {{ keys_match('series', daily, keys) }} and {{ calendar }}.charge_date = {{ daily }}.charge_date
{%- endmacro %}
