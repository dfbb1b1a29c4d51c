{#-
    All GPU spend in the reporting currency, one row: the only figure that adds up currencies (each
    charge day at its ECB rate), and how many rows it leaves out for want of a rate.
-#}

select
    cast(max(reporting_currency) as string) as reporting_currency,
    cast(sum(effective_cost_reporting) as decimal(38, 12)) as effective_cost_reporting,
    cast(count(*) - count(effective_cost_reporting) as bigint) as rows_without_exchange_rate
from {{ ref('fct_gpu_spend_daily') }}
