{#-
    Our effective rental rate per GPU-hour for each GPU model over the finance window (dbt var
    finance_window_days), as the finance marts price it: what `gpu-finops estimate training` uses when
    no --price is given.
-#}

select
    cast(gpu_model as string) as gpu_model,
    cast(currency as string) as currency,
    cast(window_start as date) as window_start,
    cast(window_end as date) as window_end,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(effective_cost as decimal(38, 12)) as effective_cost,
    cast(effective_rate_per_gpu_hour as decimal(38, 6)) as effective_rate_per_gpu_hour
from {{ ref('int_finance__gpu_rates') }}
