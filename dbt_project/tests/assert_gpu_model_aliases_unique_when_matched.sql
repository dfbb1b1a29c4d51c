{#-
    Every text must resolve to one GPU model: two aliases that match the same text (say
    "H100-SXM5-80GB" and "H100 SXM5 80GB"), or an alias matching a vocabulary name, but pointing at
    different models would join a usage row to both and count its cost twice. Returns each matching
    key that leads to more than one GPU model.
-#}

with

gpu_model_names as (

    {{ gpu_model_lookup() }}

)

select
    gpu_model_key,
    count(*) as gpu_models
from gpu_model_names
group by gpu_model_key
having count(*) > 1
