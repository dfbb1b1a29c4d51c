{#-
    Weekly GPU spend in the reporting currency, split two ways: by provider and by GPU model
    (breakdown names which; series is the provider or the GPU model). Weeks start on Monday.
-#}

with

weekly as (

    select
        cast({{ dbt.date_trunc('week', 'charge_date') }} as date) as week_start,
        provider_name,
        gpu_model,
        reporting_currency,
        effective_cost_reporting
    from {{ ref('fct_gpu_spend_daily') }}

),

by_provider as (

    select week_start, 'provider' as breakdown, provider_name as series, max(reporting_currency) as reporting_currency,
        sum(effective_cost_reporting) as effective_cost_reporting
    from weekly
    group by week_start, provider_name

),

by_gpu_model as (

    select week_start, 'gpu_model' as breakdown, gpu_model as series, max(reporting_currency) as reporting_currency,
        sum(effective_cost_reporting) as effective_cost_reporting
    from weekly
    group by week_start, gpu_model

),

both_breakdowns as (

    select * from by_provider
    union all
    select * from by_gpu_model

)

select
    cast(week_start as date) as week_start,
    cast(breakdown as string) as breakdown,
    cast(series as string) as series,
    cast(reporting_currency as string) as reporting_currency,
    cast(effective_cost_reporting as decimal(38, 12)) as effective_cost_reporting
from both_breakdowns
