{#-
    A select of (gpu_model_key, gpu_model): every name of the GPU model vocabulary (seed `gpu_models`)
    under its own key, plus every alias of seed `gpu_model_aliases`. Sources that write the GPU model
    as free text (GPU cloud usage, the owned-server inventory) join their text's gpu_model_key to it,
    so a vocabulary name always resolves and the aliases seed only needs the other spellings.
-#}
{% macro gpu_model_lookup() -%}
    select distinct
        {{ gpu_model_key('gpu_model') }} as gpu_model_key,
        gpu_model
    from {{ ref('gpu_models') }}

    union

    select distinct
        {{ gpu_model_key('alias') }} as gpu_model_key,
        gpu_model
    from {{ ref('gpu_model_aliases') }}
{%- endmacro %}
