{#-
    What moved each flagged GPU spend anomaly (int_anomalies__series_scores, is_anomaly): per anomaly, the
    resources whose effective cost changed most in the anomaly's direction against their own baseline (the
    median of the same weekday over the same weeks as the series), each with a cause class computed from the
    resource's own history over the baseline weeks (docs/spend-anomalies-and-forecast.md "Spend anomalies"). The largest changes are kept until
    they explain `anomaly_driver_share` of the resources' change, at most `anomaly_max_drivers`, and always the
    first.
-#}

{%- set weeks = var('anomaly_baseline_weeks') | int %}
{%- set series = ['grain', 'provider_name', 'gpu_model', 'team', 'billing_currency'] %}
{%- set resource = ['resource_provider_name', 'resource_gpu_model', 'resource_team', 'resource_id'] %}
{%- set anomaly_resource = ['anomaly_key'] + resource %}

with

resource_daily as (

    select * from {{ ref('int_anomalies__resource_daily') }}

),

anomalies as (

    select * from {{ ref('int_anomalies__series_scores') }}
    where is_anomaly

),

-- every resource row under both series it belongs to: its own provider × GPU model × team, and its currency's total
in_series as (

    select
        'provider_gpu_team' as grain,
        provider_name,
        gpu_model,
        team,
        billing_currency,
        provider_name as resource_provider_name,
        gpu_model as resource_gpu_model,
        team as resource_team,
        resource_id,
        resource_name,
        pricing_category,
        charge_date,
        effective_cost,
        gpu_hours
    from resource_daily

    union all

    select
        'total' as grain,
        '(all)' as provider_name,
        '(all)' as gpu_model,
        '(all)' as team,
        billing_currency,
        provider_name as resource_provider_name,
        gpu_model as resource_gpu_model,
        team as resource_team,
        resource_id,
        resource_name,
        pricing_category,
        charge_date,
        effective_cost,
        gpu_hours
    from resource_daily

),

-- the resource rows of each anomaly's series from the first baseline week's day through the anomaly's day
windowed as (

    select
        anomalies.anomaly_key,
        anomalies.charge_date as anomaly_date,
        {% for key in resource %}in_series.{{ key }},{% endfor %}
        in_series.resource_name,
        in_series.pricing_category,
        in_series.charge_date,
        in_series.effective_cost,
        in_series.gpu_hours,
        {{ dbt.datediff('in_series.charge_date', 'anomalies.charge_date', 'day') }} as days_before
    from anomalies
    inner join in_series
        on {{ keys_match('anomalies', 'in_series', series) }} and in_series.charge_date
            between cast({{ dbt.dateadd('day', -7 * weeks, 'anomalies.charge_date') }} as date) and anomalies.charge_date

),

per_resource as (

    select
        {{ anomaly_resource | join(', ') }},
        max(resource_name) as resource_name,
        sum(case when days_before = 0 then effective_cost else 0 end) as actual_cost,
        sum(case when days_before = 0 then gpu_hours else 0 end) as actual_gpu_hours,
        sum(case when days_before > 0 then effective_cost else 0 end) as lookback_cost,
        sum(case when days_before > 0 then gpu_hours else 0 end) as lookback_gpu_hours,
        max(case when effective_cost <> 0 then days_before end) as first_cost_days_before
    from windowed
    group by {{ anomaly_resource | join(', ') }}

),

baseline_weeks as (

    select generated_number as week_number from ({{ dbt.generate_series(weeks) }}) as numbers

),

same_weekday as (

    -- days_before is a whole multiple of 7 here, so the division is exact on every engine
    select
        {{ anomaly_resource | join(', ') }},
        cast(days_before / 7 as integer) as week_number,
        sum(effective_cost) as cost
    from windowed
    where days_before > 0 and mod(days_before, 7) = 0
    group by {{ anomaly_resource | join(', ') }}, cast(days_before / 7 as integer)

),

baseline as (

    select
        {% for key in anomaly_resource %}per_resource.{{ key }},{% endfor %}
        {{ median('coalesce(same_weekday.cost, 0)') }} as expected_cost
    from per_resource
    cross join baseline_weeks
    left join same_weekday
        on {{ keys_match('per_resource', 'same_weekday', anomaly_resource) }} and baseline_weeks.week_number = same_weekday.week_number
    group by {% for key in anomaly_resource %}per_resource.{{ key }}{{ ', ' if not loop.last }}{% endfor %}

),

-- the pricing category carrying most of a resource's cost on the anomaly's day, and over the baseline weeks before
categories as (

    select
        {{ anomaly_resource | join(', ') }},
        case when days_before = 0 then 'day' else 'before' end as period,
        pricing_category,
        sum(effective_cost) as cost
    from windowed
    group by {{ anomaly_resource | join(', ') }}, case when days_before = 0 then 'day' else 'before' end, pricing_category

),

main_category as (

    select
        {{ anomaly_resource | join(', ') }},
        max(case when period = 'day' then pricing_category end) as pricing_category,
        max(case when period = 'before' then pricing_category end) as previous_pricing_category
    from (
        select
            categories.*,
            row_number() over (
                partition by {{ anomaly_resource | join(', ') }}, period order by cost desc, pricing_category
            ) as category_rank
        from categories
    ) as ranked
    where category_rank = 1
    group by {{ anomaly_resource | join(', ') }}

),

provider_days as (

    select distinct provider_name, billing_currency, charge_date from resource_daily

),

changes as (

    select
        anomalies.anomaly_key,
        anomalies.charge_date,
        {% for key in series %}anomalies.{{ key }},{% endfor %}
        anomalies.direction,
        anomalies.cost_deviation,
        {% for key in resource %}per_resource.{{ key }},{% endfor %}
        per_resource.resource_name,
        main_category.pricing_category,
        main_category.previous_pricing_category,
        cast(per_resource.actual_cost as decimal(38, 12)) as actual_cost,
        cast(baseline.expected_cost as decimal(38, 12)) as expected_cost,
        cast(per_resource.actual_cost - baseline.expected_cost as decimal(38, 12)) as cost_change,
        case
            when per_resource.actual_gpu_hours > 0
                then {{ decimal_divide('per_resource.actual_cost', 'per_resource.actual_gpu_hours', 6) }}
        end as cost_per_gpu_hour,
        case
            when per_resource.lookback_gpu_hours > 0
                then {{ decimal_divide('per_resource.lookback_cost', 'per_resource.lookback_gpu_hours', 6) }}
        end as previous_cost_per_gpu_hour,
        per_resource.first_cost_days_before,
        provider_days.charge_date is not null as provider_delivered_day
    from anomalies
    inner join per_resource on anomalies.anomaly_key = per_resource.anomaly_key
    inner join baseline
        on {{ keys_match('per_resource', 'baseline', anomaly_resource) }}
    inner join main_category
        on {{ keys_match('per_resource', 'main_category', anomaly_resource) }}
    left join provider_days
        on per_resource.resource_provider_name = provider_days.provider_name
        and anomalies.billing_currency = provider_days.billing_currency
        and anomalies.charge_date = provider_days.charge_date

),

classified as (

    select
        changes.*,
        case when direction = 'spike' then cost_change else -cost_change end as directional_change,
        case
            when direction = 'spike' and coalesce(first_cost_days_before, 0) < 7 then 'new_resource'
            when direction = 'drop' and not provider_delivered_day then 'late_or_restated_delivery'
            when previous_pricing_category = 'Committed' and coalesce(pricing_category, '') <> 'Committed'
                and actual_cost > 0 then 'commitment_expired'
            when pricing_category <> previous_pricing_category then 'pricing_category_shift'
            when previous_cost_per_gpu_hour > 0 and cost_per_gpu_hour is not null
                and abs(cost_per_gpu_hour - previous_cost_per_gpu_hour)
                > {{ var('anomaly_price_tolerance') }} * previous_cost_per_gpu_hour then 'unit_price_change'
            when direction = 'drop' and actual_cost = 0 then 'resource_stopped'
            when direction = 'spike' then 'usage_jump'
            else 'usage_drop'
        end as cause_class
    from changes

),

ranked as (

    select
        classified.*,
        row_number() over (partition by anomaly_key order by directional_change desc, resource_id) as driver_rank,
        sum(directional_change) over (
            partition by anomaly_key order by directional_change desc, resource_id
            rows between unbounded preceding and current row
        ) - directional_change as explained_before,
        sum(directional_change) over (partition by anomaly_key) as total_directional_change
    from classified
    where directional_change > 0

)

select
    anomaly_key,
    charge_date,
    {{ series | join(', ') }},
    direction,
    cast(driver_rank as integer) as driver_rank,
    {{ resource | join(', ') }},
    resource_name,
    pricing_category,
    previous_pricing_category,
    actual_cost,
    expected_cost,
    cost_change,
    {{ decimal_divide('cost_change', 'cost_deviation', 4) }} as share_of_deviation,
    cost_per_gpu_hour,
    previous_cost_per_gpu_hour,
    cause_class
from ranked
where driver_rank = 1
    or (
        driver_rank <= {{ var('anomaly_max_drivers') }}
        and explained_before < {{ var('anomaly_driver_share') }} * total_directional_change
    )
