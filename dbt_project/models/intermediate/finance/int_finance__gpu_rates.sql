{#-
    What renting GPUs costs us, per GPU model, over a trailing window: GPU-hours, effective cost (in the
    reporting currency) and the effective rate per GPU-hour, and how many GPUs we rent on average at once.
    The finance marts (buy vs rent, training estimates) all price "our rate" from here, so they agree.

    The window is the last `finance_window_days` days up to the newest day of rented GPU spend, cut at the
    first day we have (so a young warehouse is not averaged over days before its first bill). Owned servers
    (provider On-premises, int_onprem__daily_cost_lines) are left out: their cost is what buying costs,
    not rent. GPU-hours of rows without an exchange rate count for concurrency but not for the rate. A usage
    reversal (negative GPU-hours) nets with the window's usage; a window holding only the reversal of earlier
    usage has GPU-hours below zero, no rate and no GPUs rented at once.
-#}

{%- set window_days = var('finance_window_days', 90) | int -%}
{%- if window_days < 1 -%}
    {{ exceptions.raise_compiler_error("dbt var finance_window_days must be a positive number of days, got " ~ window_days) }}
{%- endif -%}

with

rented as (

    select *
    from {{ ref('fct_gpu_spend_daily') }}
    where coalesce(provider_name, '') <> 'On-premises'

),

bounds as (

    select
        max(charge_date) as window_end,
        min(charge_date) as first_day
    from rented

),

window_bounds as (

    select
        window_end,
        case
            when first_day > cast({{ dbt.dateadd('day', 1 - window_days, 'window_end') }} as date) then first_day
            else cast({{ dbt.dateadd('day', 1 - window_days, 'window_end') }} as date)
        end as window_start
    from bounds

),

usage as (

    select
        rented.gpu_model,
        window_bounds.window_start,
        window_bounds.window_end,
        sum(rented.gpu_hours) as gpu_hours,
        sum(case when rented.effective_cost_reporting is not null then rented.gpu_hours end) as priced_gpu_hours,
        sum(rented.effective_cost_reporting) as effective_cost
    from rented
    inner join window_bounds
        on rented.charge_date between window_bounds.window_start and window_bounds.window_end
    group by rented.gpu_model, window_bounds.window_start, window_bounds.window_end

),

final as (

    select
        gpu_model,
        window_start,
        window_end,
        cast({{ dbt.datediff('window_start', 'window_end', 'day') }} + 1 as integer) as window_days,
        cast(({{ dbt.datediff('window_start', 'window_end', 'day') }} + 1) * 24 as integer) as window_hours,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(coalesce(effective_cost, 0) as decimal(38, 12)) as effective_cost,
        '{{ reporting_currency() }}' as currency,
        {{ per_gpu_hour('effective_cost', 'priced_gpu_hours', 6) }} as effective_rate_per_gpu_hour,
        {{ decimal_divide('greatest(gpu_hours, 0)', '(' ~ dbt.datediff('window_start', 'window_end', 'day') ~ ' + 1) * 24', 6) }}
            as avg_concurrent_gpus
    from usage

)

select * from final
