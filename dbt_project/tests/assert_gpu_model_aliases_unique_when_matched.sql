{#-
    Two aliases that match the same text (say "H100-SXM5-80GB" and "H100 SXM5 80GB") would join every
    usage row to both and count its cost twice. Returns each matching key held by more than one alias.
-#}

select
    {{ gpu_model_key('alias') }} as alias_key,
    count(*) as aliases
from {{ ref('gpu_model_aliases') }}
group by {{ gpu_model_key('alias') }}
having count(*) > 1
