{#-
    `amount` (in the currency named by the column `currency`) expressed in `target`: unchanged when it
    is already in `target`, so no exchange rate is needed for it; else multiplied by `rate` (target
    units per unit of `currency`, from int_fx__daily_rates). Null when a conversion has no rate.
-#}
{% macro amount_in_currency(amount, currency, target, rate) -%}
    cast(
        case when {{ currency }} = '{{ target }}' then {{ amount }} else {{ amount }} * {{ rate }} end
        as decimal(38, 12)
    )
{%- endmacro %}
