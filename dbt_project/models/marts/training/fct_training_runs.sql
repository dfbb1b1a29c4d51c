{#-
    What did each training run really cost, and how did it do against its estimate? One row per run and source
    (int_training__runs), its GPU-hours priced at the bill's effective cost per GPU-hour of its GPU model and
    provider (fct_gpu_spend_daily, reporting currency; for owned servers, provider On-premises, their daily cost
    per GPU-hour) over the UTC days the run held GPUs; when those days have no billed GPU-hours of that provider and
    model, over the calendar months they fall in; else unpriced. `pricing_rule` says which. SkyPilot's own estimate
    is kept beside as it reported it.

    A run whose name matches seed planned_training_runs (case-insensitive, `-` read as `_`) shows the estimate
    (fct_training_cost_estimates) against the actual and its realized MFU = planned FLOPs ÷ (GPU-hours × peak
    dense BF16 FLOP/s of the GPU it ran on × 3600) (gpu-metrics reference section 10). Costs are exact decimals;
    FLOPs are floating point (not money).
-#}

with

runs as (

    select
        runs.*,
        cast({{ dbt.date_trunc('day', 'runs.started_at') }} as date) as first_day,
        -- the day of the run's last instant (an end on midnight held nothing on that day)
        cast({{ dbt.date_trunc('day', dbt.dateadd('second', -1, 'runs.ended_at')) }} as date) as last_day
    from {{ ref('int_training__runs') }} as runs

),

bounds as (

    select
        runs.*,
        cast({{ dbt.date_trunc('month', 'first_day') }} as date) as first_month,
        cast({{ dbt.dateadd('month', 1, dbt.date_trunc('month', 'last_day')) }} as date) as after_last_month
    from runs

),

spend as (

    select
        charge_date,
        provider_name,
        gpu_model,
        gpu_hours,
        effective_cost_reporting
    from {{ ref('fct_gpu_spend_daily') }}

),

run_days_rate as (

    select
        bounds.run_source,
        bounds.run_key,
        sum(case when spend.effective_cost_reporting is not null then spend.gpu_hours end) as priced_gpu_hours,
        sum(spend.effective_cost_reporting) as effective_cost
    from bounds
    inner join spend
        on bounds.provider_name = spend.provider_name
        and bounds.gpu_model = spend.gpu_model
        and spend.charge_date between bounds.first_day and bounds.last_day
    group by bounds.run_source, bounds.run_key

),

run_months_rate as (

    select
        bounds.run_source,
        bounds.run_key,
        sum(case when spend.effective_cost_reporting is not null then spend.gpu_hours end) as priced_gpu_hours,
        sum(spend.effective_cost_reporting) as effective_cost
    from bounds
    inner join spend
        on bounds.provider_name = spend.provider_name
        and bounds.gpu_model = spend.gpu_model
        and spend.charge_date >= bounds.first_month
        and spend.charge_date < bounds.after_last_month
    group by bounds.run_source, bounds.run_key

),

priced as (

    select
        bounds.*,
        {{ per_gpu_hour('run_days_rate.effective_cost', 'run_days_rate.priced_gpu_hours', 6) }} as run_days_rate,
        {{ per_gpu_hour('run_months_rate.effective_cost', 'run_months_rate.priced_gpu_hours', 6) }} as run_months_rate
    from bounds
    left join run_days_rate
        on bounds.run_source = run_days_rate.run_source
        and bounds.run_key = run_days_rate.run_key
    left join run_months_rate
        on bounds.run_source = run_months_rate.run_source
        and bounds.run_key = run_months_rate.run_key

),

rated as (

    select
        priced.*,
        coalesce(run_days_rate, run_months_rate) as effective_rate_per_gpu_hour,
        case
            when run_days_rate is not null and provider_name = 'On-premises' then 'owned_cost_run_days'
            when run_days_rate is not null then 'bill_rate_run_days'
            when run_months_rate is not null and provider_name = 'On-premises' then 'owned_cost_run_months'
            when run_months_rate is not null then 'bill_rate_run_months'
            else 'unpriced'
        end as pricing_rule
    from priced

),

estimates as (

    select * from {{ ref('fct_training_cost_estimates') }}

),

specs as (

    select gpu_model, bf16_dense_tflops from {{ ref('gpu_specs') }}

),

final as (

    select
        {{ generate_surrogate_key(['rated.run_source', 'rated.run_key']) }} as training_run_key,
        rated.run_source,
        rated.run_key,
        rated.run_name,
        rated.user_name,
        rated.account,
        rated.team,
        rated.state,
        rated.started_at,
        rated.ended_at,
        rated.gpus,
        rated.gpu_hours,
        rated.gpu_model,
        rated.provider_name,
        rated.hosts,
        rated.instance_type,
        '{{ reporting_currency() }}' as currency,
        rated.effective_rate_per_gpu_hour,
        rated.pricing_rule,
        case when rated.pricing_rule like '%run_days' then rated.first_day else rated.first_month end
            as rate_period_start,
        case
            when rated.pricing_rule like '%run_days' then rated.last_day
            else cast({{ dbt.dateadd('day', -1, 'rated.after_last_month') }} as date)
        end as rate_period_end,
        {{ decimal_product(['rated.gpu_hours', 'rated.effective_rate_per_gpu_hour']) }} as actual_cost,
        rated.reported_cost,
        rated.reported_cost_currency,
        estimates.run_name is not null as is_planned_run,
        estimates.run_name as planned_run_name,
        estimates.gpu_model as planned_gpu_model,
        estimates.gpu_hours as estimated_gpu_hours,
        estimates.cost_at_effective_rate as estimated_cost,
        cast(rated.gpu_hours - estimates.gpu_hours as decimal(38, 12)) as gpu_hours_difference,
        {{ decimal_divide('rated.gpu_hours', 'estimates.gpu_hours', 4) }} as gpu_hours_ratio,
        cast(
            {{ decimal_product(['rated.gpu_hours', 'rated.effective_rate_per_gpu_hour']) }}
            - estimates.cost_at_effective_rate as decimal(38, 12)
        ) as cost_difference,
        estimates.training_flops,
        estimates.mfu as planned_mfu,
        cast(specs.bf16_dense_tflops as decimal(18, 3)) as peak_bf16_tflops,
        case when estimates.run_name is not null and rated.gpu_hours > 0 then
            cast(
                estimates.training_flops
                / (cast(rated.gpu_hours as double) * cast(specs.bf16_dense_tflops as double) * 1e12 * 3600)
                as decimal(9, 4)
            )
        end as realized_mfu
    from rated
    left join estimates
        on lower(replace(rated.run_name, '-', '_')) = lower(replace(estimates.run_name, '-', '_'))
    left join specs
        on rated.gpu_model = specs.gpu_model

)

select * from final
