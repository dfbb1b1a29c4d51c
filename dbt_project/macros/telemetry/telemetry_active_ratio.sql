{#-
    One sample's active ratio, 0–1: GR_ENGINE_ACTIVE, else GPU_UTIL / 100 where the sample lacks it (some
    H100/H200 nodes, DCP module off, nvidia-smi), clamped; null when the sample has neither. Written once for
    the hourly roll-up of a GPU and the hours a pod held it.
-#}
{% macro telemetry_active_ratio(gr_engine_active, gpu_util_percent) -%}
    {%- set raw = 'coalesce(' ~ gr_engine_active ~ ', ' ~ decimal_divide(gpu_util_percent, 100, 12) ~ ')' -%}
    {#- least/greatest skip nulls on some engines (DuckDB, Postgres): a missing value must stay missing #}
    case when {{ raw }} is not null then least(greatest({{ raw }}, 0), 1) end
{%- endmacro %}

{#- True when the sample's active ratio is the GPU_UTIL / 100 fallback. -#}
{% macro telemetry_active_is_fallback(gr_engine_active, gpu_util_percent) -%}
    ({{ gr_engine_active }} is null and {{ gpu_util_percent }} is not null)
{%- endmacro %}
