{#-
    Spot savings per billing month in the reporting currency, all providers and GPU models together:
    realized, forgone at the market spot price, and forgone after the cost of interruptions.
-#}

select
    cast(billing_period_start as date) as billing_month,
    cast(max(reporting_currency) as string) as reporting_currency,
    cast(sum(realized_savings) as decimal(38, 12)) as realized_savings,
    cast(sum(forgone_savings) as decimal(38, 12)) as forgone_savings,
    cast(sum(forgone_savings_interruption_adjusted) as decimal(38, 12)) as forgone_savings_interruption_adjusted
from {{ ref('fct_spot_savings_monthly') }}
group by cast(billing_period_start as date)
