{#-
    GPU spend anomalies: every day of every series (provider × GPU model × team × billing currency, and each
    currency's total) with its actual and expected effective cost, deviation, score and flag
    (int_anomalies__series_scores), and for a flagged day its cause class and drivers (the first driver's cause,
    fct_gpu_spend_anomaly_drivers). Method and dbt vars: docs/spend-anomalies-and-forecast.md "Spend anomalies".
-#}

with

scores as (

    select * from {{ ref('int_anomalies__series_scores') }}

),

drivers as (

    select * from {{ ref('int_anomalies__drivers') }}

),

summary as (

    select
        anomaly_key,
        max(case when driver_rank = 1 then cause_class end) as cause_class,
        count(*) as driver_count,
        {{ dbt.listagg(
            "coalesce(resource_name, resource_id) || ' (' || cause_class || ')'",
            "'; '",
            "order by driver_rank",
        ) }} as drivers
    from drivers
    group by anomaly_key

)

select
    scores.anomaly_key,
    scores.charge_date,
    scores.grain,
    scores.provider_name,
    scores.gpu_model,
    scores.team,
    scores.billing_currency,
    scores.actual_cost,
    scores.expected_cost,
    scores.normal_range,
    cast(scores.baseline_weeks as integer) as baseline_weeks,
    scores.is_judged,
    scores.cost_deviation,
    scores.deviation_scale,
    scores.anomaly_score,
    scores.is_anomaly,
    scores.direction,
    summary.cause_class,
    cast(coalesce(summary.driver_count, 0) as integer) as driver_count,
    summary.drivers
from scores
left join summary on scores.anomaly_key = summary.anomaly_key
