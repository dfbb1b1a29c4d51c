{#-
    A select of (key columns…, gpu_model): the GPU model of each row of `relation` whose description
    names a GPU SKU (Google Cloud's `Nvidia H100 80GB GPU running in Americas`, OCI's `Compute - GPU -
    H100`), matched against seed `gpu_sku_descriptions`, the longest matching pattern winning. GPUs billed
    per GPU-hour name no instance type, so their wording is all there is to go by.
-#}
{% macro gpu_sku_description_matches(relation, keys, description) -%}
    {%- set key_list = keys | join(', ') -%}
    select {{ key_list }}, gpu_model
    from (
        select
            {%- for key in keys %}
            candidates.{{ key }},
            {%- endfor %}
            gpu_sku_descriptions.gpu_model,
            row_number() over (
                partition by {% for key in keys %}candidates.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
                order by length(gpu_sku_descriptions.pattern) desc
            ) as match_rank
        from {{ relation }} as candidates
        inner join (
            select lower(description_pattern) as pattern, gpu_model
            from {{ ref('gpu_sku_descriptions') }}
        ) as gpu_sku_descriptions
            on lower(candidates.{{ description }}) like {{ dbt.concat(["'%'", "gpu_sku_descriptions.pattern", "'%'"]) }}
        where lower(candidates.{{ description }}) like '%gpu%'
    ) as matches
    where match_rank = 1
{%- endmacro %}
