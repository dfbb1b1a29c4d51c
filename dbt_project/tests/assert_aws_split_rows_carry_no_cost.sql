{#-
    AWS's split cost allocation rows allocate their parent EC2 instance's cost, which the instance's own line keeps:
    the cost lines count them as lines but not as cost (int_aws__cur_cost_lines), which is right only while AWS
    bills them nothing. Returns every split row whose billed cost is not zero, which would be counted twice.
-#}

select
    x_load_id,
    x_source_file,
    x_source_row,
    split_line_item_parent_resource_id,
    line_item_resource_id,
    line_item_unblended_cost,
    line_item_net_unblended_cost
from {{ ref('stg_aws__cur_line_items') }}
where split_line_item_parent_resource_id is not null
    and coalesce(line_item_net_unblended_cost, line_item_unblended_cost) <> 0
