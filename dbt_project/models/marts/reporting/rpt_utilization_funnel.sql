{#-
    The utilization funnel over the whole history, one row: GPU-hours paid for (provisioned), seen by
    telemetry, active, and effective (streaming multiprocessors computing), all providers.
-#}

select
    cast(sum(provisioned_gpu_hours) as decimal(38, 12)) as provisioned_gpu_hours,
    cast(sum(telemetry_gpu_hours) as decimal(38, 12)) as telemetry_gpu_hours,
    cast(sum(active_gpu_hours) as decimal(38, 12)) as active_gpu_hours,
    cast(sum(effective_gpu_hours) as decimal(38, 12)) as effective_gpu_hours
from {{ ref('fct_gpu_utilization_daily') }}
