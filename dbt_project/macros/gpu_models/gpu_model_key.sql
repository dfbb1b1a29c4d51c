{#-
    The matching key of a free-text GPU model name: lower case, without spaces, hyphens, underscores,
    dots, slashes, parentheses or commas, and without the vendor words "nvidia" and "tesla". So
    "NVIDIA H100 80GB HBM3", "h100-80gb-hbm3" and "H100 (80GB HBM3)" share one key, and one row of the
    `gpu_model_aliases` seed covers every spelling. Standard SQL `lower` and `replace` only: portable.

    gpu_model_key('gpu_model')  ->  'h10080gbhbm3' for 'NVIDIA H100 80GB HBM3'
-#}
{% macro gpu_model_key(text) -%}
    {%- set key = namespace(expression='lower(' ~ text ~ ')') -%}
    {%- for removed in ['nvidia', 'tesla', ' ', '-', '_', '.', '/', '(', ')', ','] -%}
        {%- set key.expression = 'replace(' ~ key.expression ~ ", '" ~ removed ~ "', '')" -%}
    {%- endfor -%}
    {{ key.expression }}
{%- endmacro %}
