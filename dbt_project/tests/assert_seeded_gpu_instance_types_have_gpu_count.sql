{#-
    A cost line on an instance type listed in the gpu_instance_types seed must come out with a GPU
    model and a GPU count: if it does not, the seed join is broken (for example by letter case)
    and that spend would silently drop out of the GPU marts. Returns the offending cost lines.
-#}

with

seeded_instance_types as (

    select lower(instance_type) as instance_type_key
    from {{ ref('gpu_instance_types') }}

)

select
    cost_lines.x_source,
    cost_lines.x_load_id,
    cost_lines.x_source_file,
    cost_lines.x_source_row,
    cost_lines.x_instance_type,
    cost_lines.x_gpu_model,
    cost_lines.x_gpu_count
from {{ ref('int_billing__cost_lines') }} as cost_lines
inner join seeded_instance_types
    on lower(cost_lines.x_instance_type) = seeded_instance_types.instance_type_key
where cost_lines.x_gpu_count is null
    or cost_lines.x_gpu_model is null
