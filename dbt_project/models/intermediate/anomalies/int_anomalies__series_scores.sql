{#-
    Every day of every GPU spend series scored against its weekday-aware baseline (README "Spend anomalies").
    A series is provider × GPU model × team × billing currency (grain provider_gpu_team) or all GPU spend in a
    billing currency (grain total). Days without spend count as 0 from the warehouse's first charge day on, so
    a new series and a vanished one are seen. The expected cost is the median of the same weekday over the
    previous `anomaly_baseline_weeks` weeks; the spread is their median absolute deviation (MAD) scaled by
    1.4826 (a normal distribution's σ), floored at `anomaly_relative_floor` × expected and at
    `anomaly_min_deviation`, so a flat series (MAD 0) does not flag cents. A day is an anomaly when its whole
    baseline lies in the warehouse's history, |score| ≥ `anomaly_score_threshold` and |deviation| ≥
    `anomaly_min_deviation`.
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

bounds as (

    select
        min(charge_date) as first_day,
        {{ dbt.datediff('min(charge_date)', 'max(charge_date)', 'day') }} as day_count
    from resource_daily

),

days as (

    {{ calendar_days('bounds', 'charge_date') }}

),

series as (

    select distinct {{ keys | join(', ') }} from series_daily

),

dense as (

    select
        {% for key in keys %}series.{{ key }},{% endfor %}
        days.charge_date,
        coalesce(series_daily.actual_cost, 0) as actual_cost
    from series
    cross join days
    left join series_daily
        on {% for key in keys %}series.{{ key }} = series_daily.{{ key }} and {% endfor %}days.charge_date = series_daily.charge_date

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
        on {% for key in keys %}dense.{{ key }} = past.{{ key }} and {% endfor %}past.charge_date
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

spread as (

    select
        {% for key in keys %}history.{{ key }},{% endfor %}
        history.charge_date,
        {{ median('abs(history.past_cost - baseline.expected_cost)') }} as median_absolute_deviation
    from history
    inner join baseline
        on {% for key in keys %}history.{{ key }} = baseline.{{ key }} and {% endfor %}history.charge_date = baseline.charge_date
    group by {% for key in keys %}history.{{ key }}, {% endfor %}history.charge_date

),

scored as (

    select
        {% for key in keys %}dense.{{ key }},{% endfor %}
        dense.charge_date,
        cast(dense.actual_cost as decimal(38, 12)) as actual_cost,
        cast(baseline.expected_cost as decimal(38, 12)) as expected_cost,
        cast(spread.median_absolute_deviation as decimal(38, 12)) as median_absolute_deviation,
        coalesce(baseline.baseline_weeks, 0) as baseline_weeks,
        cast(dense.actual_cost - baseline.expected_cost as decimal(38, 12)) as cost_deviation,
        cast(greatest(
            cast(1.4826 as decimal(38, 12)) * spread.median_absolute_deviation,
            cast({{ var('anomaly_relative_floor') }} as decimal(38, 12)) * abs(baseline.expected_cost),
            cast({{ var('anomaly_min_deviation') }} as decimal(38, 12))
        ) as decimal(38, 12)) as deviation_scale
    from dense
    left join baseline
        on {% for key in keys %}dense.{{ key }} = baseline.{{ key }} and {% endfor %}dense.charge_date = baseline.charge_date
    left join spread
        on {% for key in keys %}dense.{{ key }} = spread.{{ key }} and {% endfor %}dense.charge_date = spread.charge_date

),

flagged as (

    select
        scored.*,
        {{ decimal_divide('cost_deviation', 'deviation_scale', 4) }} as anomaly_score
    from scored

)

select
    {{ generate_surrogate_key(keys + ['charge_date']) }} as anomaly_key,
    flagged.*,
    coalesce(
        baseline_weeks = {{ weeks }}
        and abs(cost_deviation) >= {{ var('anomaly_min_deviation') }}
        and abs(anomaly_score) >= {{ var('anomaly_score_threshold') }},
        false
    ) as is_anomaly,
    case
        when baseline_weeks = {{ weeks }}
            and abs(cost_deviation) >= {{ var('anomaly_min_deviation') }}
            and abs(anomaly_score) >= {{ var('anomaly_score_threshold') }}
            then case when cost_deviation > 0 then 'spike' else 'drop' end
    end as direction
from flagged
