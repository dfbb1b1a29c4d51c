{#-
    Every day of every GPU spend series scored against its weekday-aware baseline (docs/spend-anomalies-and-forecast.md "Spend anomalies").
    A series is provider × GPU model × team × billing currency (grain provider_gpu_team) or all GPU spend in a
    billing currency (grain total). Days without spend count as 0 from the warehouse's first charge day on, so
    a new series and a vanished one are seen. The expected cost is the median of the same weekday over the
    previous `anomaly_baseline_weeks` weeks. The yardstick is the series' normal range: the largest distance of
    any day of those weeks from their median (a training fleet that stops for a day now and then has a wide
    range, an always-on node none), floored at `anomaly_relative_floor` × expected and at `anomaly_min_deviation`.
    A day is judged when its whole baseline lies in its provider's history (for a total: every provider's of
    that currency) and it is not among the provider's last `anomaly_incomplete_days` charge days (still being
    billed); it is an anomaly when |score| ≥ `anomaly_score_threshold` and |deviation| ≥ `anomaly_min_deviation`.
    A median absolute deviation of 4 same-weekday values is 0 for any on/off workload and flagged every gap; the
    range measured on the demo flags its four events and nothing else.
-#}

{%- set weeks = var('anomaly_baseline_weeks') | int %}
{%- set keys = ['grain', 'provider_name', 'gpu_model', 'team', 'billing_currency'] %}

with

resource_daily as (

    select * from {{ ref('int_anomalies__resource_daily') }}

),

series_daily as (

    select
        'provider_gpu_team' as grain,
        provider_name,
        gpu_model,
        team,
        billing_currency,
        charge_date,
        sum(effective_cost) as actual_cost
    from resource_daily
    group by provider_name, gpu_model, team, billing_currency, charge_date

    union all

    select
        'total' as grain,
        '(all)' as provider_name,
        '(all)' as gpu_model,
        '(all)' as team,
        billing_currency,
        charge_date,
        sum(effective_cost) as actual_cost
    from resource_daily
    group by billing_currency, charge_date

),

dense as (

    {{ dense_daily_series('series_daily', keys, 'actual_cost') }}

),

baseline_weeks as (

    select generated_number as week_number from ({{ dbt.generate_series(weeks) }}) as numbers

),

history as (

    select
        {% for key in keys %}dense.{{ key }},{% endfor %}
        dense.charge_date,
        past.actual_cost as past_cost
    from dense
    cross join baseline_weeks
    inner join dense as past
        on {{ keys_match('dense', 'past', keys) }} and past.charge_date
            = cast({{ dbt.dateadd('day', '-7 * baseline_weeks.week_number', 'dense.charge_date') }} as date)

),

baseline as (

    select
        {{ keys | join(', ') }},
        charge_date,
        count(*) as baseline_weeks,
        {{ median('past_cost') }} as expected_cost
    from history
    group by {{ keys | join(', ') }}, charge_date

),

recent as (

    select
        {% for key in keys %}dense.{{ key }},{% endfor %}
        dense.charge_date,
        past.actual_cost as past_cost
    from dense
    inner join dense as past
        on {{ keys_match('dense', 'past', keys) }} and past.charge_date
            between cast({{ dbt.dateadd('day', -7 * weeks, 'dense.charge_date') }} as date)
            and cast({{ dbt.dateadd('day', -1, 'dense.charge_date') }} as date)

),

recent_median as (

    select {{ keys | join(', ') }}, charge_date, {{ median('past_cost') }} as median_cost
    from recent
    group by {{ keys | join(', ') }}, charge_date

),

spread as (

    select
        {% for key in keys %}recent.{{ key }},{% endfor %}
        recent.charge_date,
        max(abs(recent.past_cost - recent_median.median_cost)) as normal_range
    from recent
    inner join recent_median
        on {{ keys_match('recent', 'recent_median', keys) }} and recent.charge_date = recent_median.charge_date
    group by {% for key in keys %}recent.{{ key }}, {% endfor %}recent.charge_date

),

provider_coverage as (

    select provider_name, billing_currency, min(charge_date) as first_day, max(charge_date) as last_day
    from resource_daily
    group by provider_name, billing_currency

),

coverage as (

    select 'provider_gpu_team' as grain, provider_name, billing_currency, first_day, last_day
    from provider_coverage

    union all

    select 'total' as grain, '(all)' as provider_name, billing_currency, max(first_day) as first_day, min(last_day) as last_day
    from provider_coverage
    group by billing_currency

),

scored as (

    select
        {% for key in keys %}dense.{{ key }},{% endfor %}
        dense.charge_date,
        cast(dense.actual_cost as decimal(38, 12)) as actual_cost,
        cast(baseline.expected_cost as decimal(38, 12)) as expected_cost,
        cast(spread.normal_range as decimal(38, 12)) as normal_range,
        coalesce(baseline.baseline_weeks, 0) as baseline_weeks,
        coalesce(
            cast({{ dbt.dateadd('day', -7 * weeks, 'dense.charge_date') }} as date) >= coverage.first_day
            and cast({{ dbt.dateadd('day', var('anomaly_incomplete_days') | int, 'dense.charge_date') }} as date)
            <= coverage.last_day,
            false
        ) as is_judged,
        cast(dense.actual_cost - baseline.expected_cost as decimal(38, 12)) as cost_deviation,
        cast(greatest(
            spread.normal_range,
            cast({{ var('anomaly_relative_floor') }} as decimal(38, 12)) * abs(baseline.expected_cost),
            cast({{ var('anomaly_min_deviation') }} as decimal(38, 12))
        ) as decimal(38, 12)) as deviation_scale
    from dense
    left join baseline
        on {{ keys_match('dense', 'baseline', keys) }} and dense.charge_date = baseline.charge_date
    left join spread
        on {{ keys_match('dense', 'spread', keys) }} and dense.charge_date = spread.charge_date
    left join coverage
        on dense.grain = coverage.grain
        and dense.provider_name = coverage.provider_name
        and dense.billing_currency = coverage.billing_currency

),

flagged as (

    select
        scored.*,
        {{ decimal_divide('cost_deviation', 'deviation_scale', 4) }} as anomaly_score
    from scored

),

judged as (

    select
        flagged.*,
        coalesce(
            is_judged
            and baseline_weeks = {{ weeks }}
            and abs(cost_deviation) >= {{ var('anomaly_min_deviation') }}
            and abs(anomaly_score) >= {{ var('anomaly_score_threshold') }},
            false
        ) as is_anomaly
    from flagged

)

select
    {{ generate_surrogate_key(keys + ['charge_date']) }} as anomaly_key,
    judged.*,
    case when is_anomaly then case when cost_deviation > 0 then 'spike' else 'drop' end end as direction
from judged
