{#-
    What will a training run cost? For each run in seed planned_training_runs: compute C = 6·N·T FLOPs
    (Kaplan et al. 2020), GPU-hours = C / (peak dense BF16 FLOP/s × MFU × 3600) with the peak from seed
    gpu_specs, plus the run's overhead, priced at our own effective rate (int_finance__gpu_rates) and at the
    market's on-demand, spot and cheapest price (int_finance__market_gpu_prices; null when the market has no
    offer). FLOPs are binary floating point (not money); GPU-hours are rounded to 6 decimals and every cost
    after that is exact. pipelines/lib/reporting/training_estimate.py computes the same for `gpu-finops estimate training`.
-#}

with

runs as (

    select * from {{ ref('planned_training_runs') }}

),

specs as (

    select gpu_model, bf16_dense_tflops from {{ ref('gpu_specs') }}

),

rates as (

    select gpu_model, effective_rate_per_gpu_hour from {{ ref('int_finance__gpu_rates') }}

),

market as (

    select * from {{ ref('int_finance__market_gpu_prices') }}

),

compute as (

    select
        runs.run_name,
        runs.description,
        runs.gpu_model,
        runs.parameters,
        runs.tokens,
        6 * cast(runs.parameters as double) * cast(runs.tokens as double) as training_flops,
        cast(specs.bf16_dense_tflops as decimal(18, 3)) as peak_bf16_tflops,
        cast(runs.mfu as decimal(9, 4)) as mfu,
        cast(runs.overhead_fraction as decimal(9, 4)) as overhead_fraction,
        runs.planned_gpus,
        cast(runs.reported_gpu_hours as decimal(38, 6)) as reported_gpu_hours,
        cast(specs.bf16_dense_tflops as double) * 1e12 as peak_flops_per_second
    from runs
    left join specs
        on runs.gpu_model = specs.gpu_model

),

hours as (

    select
        compute.*,
        cast(
            training_flops / (peak_flops_per_second * cast(mfu as double) * 3600) as decimal(38, 6)
        ) as compute_gpu_hours,
        cast(training_flops / (cast(reported_gpu_hours as double) * peak_flops_per_second * 3600) as decimal(9, 4))
            as implied_mfu
    from compute

),

with_overhead as (

    select
        hours.*,
        cast(compute_gpu_hours * (1 + overhead_fraction) as decimal(38, 6)) as gpu_hours
    from hours

),

final as (

    select
        with_overhead.run_name,
        with_overhead.description,
        with_overhead.gpu_model,
        with_overhead.parameters,
        with_overhead.tokens,
        with_overhead.training_flops,
        with_overhead.peak_bf16_tflops,
        with_overhead.mfu,
        with_overhead.compute_gpu_hours,
        with_overhead.overhead_fraction,
        with_overhead.gpu_hours,
        with_overhead.planned_gpus,
        case
            when with_overhead.planned_gpus > 0
                then {{ decimal_divide('with_overhead.gpu_hours', 'with_overhead.planned_gpus * 24', 2) }}
        end as wall_clock_days,
        with_overhead.reported_gpu_hours,
        with_overhead.implied_mfu,
        (
            with_overhead.mfu < 0.15 or with_overhead.mfu > 0.60
            or coalesce(with_overhead.implied_mfu < 0.15 or with_overhead.implied_mfu > 0.60, false)
        ) as mfu_outside_typical_range,
        '{{ reporting_currency() }}' as currency,
        rates.effective_rate_per_gpu_hour,
        {{ decimal_product(['with_overhead.compute_gpu_hours', 'rates.effective_rate_per_gpu_hour']) }}
            as compute_cost_at_effective_rate,
        {{ decimal_product(['with_overhead.gpu_hours', 'rates.effective_rate_per_gpu_hour']) }} as cost_at_effective_rate,
        market.price_date as market_price_date,
        market.on_demand_price_per_gpu_hour as market_on_demand_price_per_gpu_hour,
        {{ decimal_product(['with_overhead.gpu_hours', 'market.on_demand_price_per_gpu_hour']) }} as cost_at_market_on_demand,
        market.spot_price_per_gpu_hour as market_spot_price_per_gpu_hour,
        {{ decimal_product(['with_overhead.gpu_hours', 'market.spot_price_per_gpu_hour']) }} as cost_at_market_spot,
        market.cheapest_price_per_gpu_hour as market_cheapest_price_per_gpu_hour,
        {{ decimal_product(['with_overhead.gpu_hours', 'market.cheapest_price_per_gpu_hour']) }} as cost_at_market_cheapest
    from with_overhead
    left join rates
        on with_overhead.gpu_model = rates.gpu_model
    left join market
        on with_overhead.gpu_model = market.gpu_model

)

select * from final
