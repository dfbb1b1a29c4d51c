{#-
    Every GPU cost line needs both a GPU model and a GPU count, or its spend and GPU-hours cannot be
    reported. Catches a bill that says it has GPUs (SkuPriceDetails.GpuCount > 0) on an instance type
    the seed does not know yet, or a GPU model without a count. Fix: add the instance type to
    seeds/gpu_instance_types.csv. Returns the offending cost lines.
-#}

select
    x_source,
    x_load_id,
    x_source_file,
    x_source_row,
    ProviderName,
    x_instance_type,
    x_gpu_model,
    x_gpu_count
from {{ ref('int_billing__cost_lines') }}
where (x_gpu_model is not null or x_gpu_count > 0)
    and (x_gpu_model is null or x_gpu_count is null)
