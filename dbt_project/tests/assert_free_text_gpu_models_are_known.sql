{#-
    GPU models written as free text (GPU cloud usage files, the owned-server inventory) that no row of
    the `gpu_model_aliases` seed matches keep their own spelling, so their spend shows up under a
    name outside the project's vocabulary and is not grouped with the same GPU from other providers.
    A warning, not an error: the money is still counted. Fix: add the spelling to
    seeds/gpu_model_aliases.csv. Returns each unknown spelling with where it was seen.
-#}

with

vocabulary as (

    select distinct gpu_model from {{ ref('gpu_instance_types') }}

),

free_text_models as (

    select distinct 'gpu_cloud_usage' as x_source, x_gpu_model_as_delivered as gpu_model_as_delivered, x_sku_gpu_model as gpu_model
    from {{ ref('stg_gpu_clouds__usage') }}

    union all

    select distinct 'onprem_gpu_assets' as x_source, gpu_model_as_delivered, gpu_model
    from {{ ref('stg_onprem__gpu_assets') }}

)

select free_text_models.*
from free_text_models
left join vocabulary
    on free_text_models.gpu_model = vocabulary.gpu_model
where vocabulary.gpu_model is null
