{#-
    GPU models written as free text (GPU cloud usage files, the owned-server inventory) must resolve
    to a name of the GPU model vocabulary (seed `gpu_models`), directly or through an alias: a
    spelling that does not is kept as written, so its spend would sit under a name nothing else uses.
    Fix: add the spelling to seeds/gpu_model_aliases.csv (or the model to seeds/gpu_models.csv).
    Returns each unresolved spelling with the source it came from.
-#}

with

vocabulary as (

    select gpu_model from {{ ref('gpu_models') }}

),

free_text_models as (

    select distinct
        'gpu_cloud_usage' as x_source,
        x_gpu_model_as_delivered as gpu_model_as_delivered,
        x_sku_gpu_model as gpu_model
    from {{ ref('int_gpu_clouds__usage') }}

    union all

    select distinct
        'onprem_gpu_assets' as x_source,
        gpu_model_as_delivered,
        gpu_model
    from {{ ref('int_onprem__gpu_assets') }}

)

select free_text_models.*
from free_text_models
left join vocabulary
    on free_text_models.gpu_model = vocabulary.gpu_model
where vocabulary.gpu_model is null
