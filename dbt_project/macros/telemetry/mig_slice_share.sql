{#-
    A MIG slice's share of its parent GPU from the profile DCGM labels it with (`GPU_I_PROFILE`, `<g>g.<mem>gb`,
    an optional `+me` suffix): its compute slices over var mig_compute_slices (g/7, the default rule, var
    mig_slice_share: compute), or its memory over the GPU's (var mig_slice_share: memory; needs the GPU's memory).
    Null for a whole GPU (no profile). The loader rejects a profile of any other form.
-#}
{% macro mig_slice_share(profile, gpu_memory_gb) -%}
    {%- set rule = var('mig_slice_share', 'compute') -%}
    {%- set core = dbt.split_part(profile, "'+'", 1) -%}
    {%- if rule == 'compute' -%}
        {%- set slices = 'cast(' ~ dbt.replace(dbt.split_part(core, "'.'", 1), "'g'", "''") ~ ' as integer)' -%}
        {{ decimal_divide(slices, var('mig_compute_slices', 7), 12) }}
    {%- elif rule == 'memory' -%}
        {%- set memory = 'cast(' ~ dbt.replace(dbt.split_part(core, "'.'", 2), "'gb'", "''") ~ ' as integer)' -%}
        {{ decimal_divide(memory, gpu_memory_gb, 12) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("dbt var mig_slice_share: 'compute' (g/7) or 'memory', not '" ~ rule ~ "'") }}
    {%- endif -%}
{%- endmacro %}

{#- The allocation rule a slice's share follows, as written on each row: mig_compute_share or mig_memory_share. -#}
{% macro mig_slice_rule() -%}
    'mig_{{ var("mig_slice_share", "compute") }}_share'
{%- endmacro %}
