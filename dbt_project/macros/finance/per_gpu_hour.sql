{#-
    A price per GPU-hour: `amount` ÷ `gpu_hours` at `scale` decimals (decimal_divide), null where the GPU-hours are
    zero or below. GPU-hours are a net: a usage reversal counts on its own charge day, so a day (or any sum) holding
    a reversal and none of the usage it cancels is below zero, and dividing its refund by it would be no price.
-#}
{% macro per_gpu_hour(amount, gpu_hours, scale=6) -%}
    case when {{ gpu_hours }} > 0 then {{ decimal_divide(amount, gpu_hours, scale) }} end
{%- endmacro %}
