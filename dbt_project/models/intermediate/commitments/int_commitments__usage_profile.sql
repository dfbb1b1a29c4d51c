{#-
    How steadily we use each kind of rented GPU: per provider × GPU model × region × billing currency, over the
    hourly series of int_commitments__hourly_gpu_usage, the hourly GPU count's percentiles (p10, p50, p90, max),
    the steady baseline a commitment would cover and what we pay per GPU-hour now. fct_gpu_commitment_recommendations
    prices its options for this baseline.

    Percentiles are nearest-rank: the value at position ceil(p × n / 100) of the n hourly counts in ascending order,
    an hour that really happened (no interpolation), in standard SQL on every engine. The baseline is the
    `commitment_baseline_percentile` (default 10) percentile rounded down to whole GPUs: at least that many GPUs ran
    in 90% of the window's hours, so a commitment of that size is busy at least 90% of the time, well above the
    40-70% utilization at which 1- and 3-year discounts break even. A scope billed for fewer than
    `commitment_min_history_days` days of the window has too little history to commit on.

    Rates come from the bill's GPU usage lines that start in the window: effective (what we pay now, every pricing
    category), on-demand (PricingCategory Standard) and list (ListCost, the provider's public on-demand price).
-#}

{%- set baseline_percentile = var('commitment_baseline_percentile', 10) | int -%}
{%- set min_history_days = var('commitment_min_history_days', 14) | int -%}
{%- if baseline_percentile < 1 or baseline_percentile > 100 -%}
    {{ exceptions.raise_compiler_error("dbt var commitment_baseline_percentile must be 1-100, got " ~ baseline_percentile) }}
{%- endif -%}
{%- set percentiles = {'p10': 10, 'p50': 50, 'p90': 90, 'baseline': baseline_percentile} -%}
{%- set scope = ['provider_name', 'gpu_model', 'region_id', 'billing_currency'] -%}
{%- set prefixed_scope = ['baseline.provider_name', 'baseline.gpu_model', 'baseline.region_id', 'baseline.billing_currency'] -%}

with

hourly as (

    select * from {{ ref('int_commitments__hourly_gpu_usage') }}

),

ranked as (

    select
        hourly.*,
        row_number() over (partition by {{ scope | join(', ') }} order by gpus) as hour_rank,
        count(*) over (partition by {{ scope | join(', ') }}) as hour_count
    from hourly

),

profile as (

    select
        {{ scope | join(',\n        ') }},
        min(window_start) as window_start,
        max(window_end) as window_end,
        count(*) as hours_observed,
        sum(gpus) as gpu_hours,
        {%- for name, pct in percentiles.items() %}
        max(case when hour_rank = ceil(hour_count * {{ pct }} / 100.0) then gpus end) as {{ name }}_gpus,
        {%- endfor %}
        max(gpus) as max_gpus
    from ranked
    group by {{ scope | join(', ') }}

),

billed as (

    select
        lines.ProviderName as provider_name,
        lines.x_gpu_model as gpu_model,
        lines.RegionId as region_id,
        lines.BillingCurrency as billing_currency,
        sum(lines.x_gpu_hours) as billed_gpu_hours,
        sum(lines.EffectiveCost) as effective_cost,
        sum(case when lines.PricingCategory = 'Standard' then lines.x_gpu_hours end) as on_demand_gpu_hours,
        sum(case when lines.PricingCategory = 'Standard' then lines.EffectiveCost end) as on_demand_cost,
        sum(case when lines.ListCost is not null then lines.x_gpu_hours end) as listed_gpu_hours,
        sum(lines.ListCost) as list_cost
    from {{ ref('int_billing__cost_lines') }} as lines
    inner join profile as windows
        on lines.ProviderName = windows.provider_name
        and lines.x_gpu_model = windows.gpu_model
        and coalesce(lines.RegionId, '') = coalesce(windows.region_id, '')
        and lines.BillingCurrency = windows.billing_currency
        and lines.ChargePeriodStart >= windows.window_start
        and lines.ChargePeriodStart < windows.window_end
    -- usage reversals (negative GPU-hours) net with the usage, as on the bill
    where lines.ChargeCategory = 'Usage'
        and lines.x_gpu_hours <> 0
    group by lines.ProviderName, lines.x_gpu_model, lines.RegionId, lines.BillingCurrency

),

baseline as (

    select
        profile.*,
        cast(floor(profile.baseline_gpus) as integer) as baseline_whole_gpus
    from profile

),

busy as (

    -- how much of the baseline's GPU-hours the window actually used: min(hourly GPUs, baseline) summed
    select
        {% for column in scope %}baseline.{{ column }},{% endfor %}
        sum(case when hourly.gpus < baseline.baseline_whole_gpus then hourly.gpus else baseline.baseline_whole_gpus end)
            as baseline_gpu_hours_used
    from baseline
    inner join hourly
        on {{ keys_match('baseline', 'hourly', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(baseline.region_id, '') = coalesce(hourly.region_id, '')
    group by {% for column in scope %}baseline.{{ column }}{{ ', ' if not loop.last }}{% endfor %}

),

final as (

    select
        {{ generate_surrogate_key(prefixed_scope) }} as usage_profile_key,
        {% for column in scope %}baseline.{{ column }},
        {% endfor -%}
        baseline.window_start,
        baseline.window_end,
        cast(baseline.hours_observed as integer) as hours_observed,
        baseline.hours_observed >= {{ min_history_days * 24 }} as has_enough_history,
        cast(baseline.gpu_hours as decimal(38, 12)) as gpu_hours,
        {{ decimal_divide('baseline.gpu_hours', 'baseline.hours_observed', 6) }} as avg_gpus,
        cast(baseline.p10_gpus as decimal(38, 12)) as p10_gpus,
        cast(baseline.p50_gpus as decimal(38, 12)) as p50_gpus,
        cast(baseline.p90_gpus as decimal(38, 12)) as p90_gpus,
        cast(baseline.max_gpus as decimal(38, 12)) as max_gpus,
        cast({{ baseline_percentile }} as integer) as baseline_percentile,
        baseline.baseline_whole_gpus as baseline_gpus,
        case
            when baseline.baseline_whole_gpus > 0 then {{ decimal_divide(
                'busy.baseline_gpu_hours_used', 'baseline.baseline_whole_gpus * baseline.hours_observed', 6
            ) }}
        end as baseline_busy_share,
        cast(coalesce(billed.billed_gpu_hours, 0) as decimal(38, 12)) as billed_gpu_hours,
        cast(coalesce(billed.effective_cost, 0) as decimal(38, 12)) as effective_cost,
        {{ per_gpu_hour('billed.effective_cost', 'billed.billed_gpu_hours', 6) }} as effective_rate_per_gpu_hour,
        {{ per_gpu_hour('billed.on_demand_cost', 'billed.on_demand_gpu_hours', 6) }} as on_demand_rate_per_gpu_hour,
        {{ per_gpu_hour('billed.list_cost', 'billed.listed_gpu_hours', 6) }} as list_rate_per_gpu_hour
    from baseline
    inner join busy
        on {{ keys_match('baseline', 'busy', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(baseline.region_id, '') = coalesce(busy.region_id, '')
    left join billed
        on {{ keys_match('baseline', 'billed', ['provider_name', 'gpu_model', 'billing_currency']) }}
        and coalesce(baseline.region_id, '') = coalesce(billed.region_id, '')

)

select * from final
