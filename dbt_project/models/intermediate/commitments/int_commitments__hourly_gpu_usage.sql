{#-
    How many GPUs we rented in each hour of the last `commitment_window_days` days, per provider × GPU model ×
    region × billing currency (a scope): the series whose steady floor a commitment would cover.

    The bill is the source, not telemetry: every rented GPU-hour is billed, telemetry covers only hosts with an
    exporter. A cost line's GPU-hours are spread over the clock hours its charge period touches, in proportion to
    the seconds it covers of each: the hour's average GPU count. That is exact for hourly lines (AWS CUR, Google
    Cloud, OCI), the day's average for daily lines (Azure, FOCUS files by day), and keeps a GPU cloud's run from
    13:30 to 15:15 at half an hour, a whole hour and a quarter: the spread always sums to the line's GPU-hours.
    Hours of the window without a line count as 0 GPUs. A usage reversal (negative GPU-hours) nets into the hours of
    its own charge period, as the bill counts it, down to 0 GPUs: a reversal dated an hour without the usage it
    cancels says nothing of when that usage ran, and an hour has no fewer than 0 GPUs. Reversals neither open nor
    extend a window.

    The window ends at the last complete day a provider has billed (midnight before its latest charge period's
    end) and starts `commitment_window_days` days before, or at the scope's first billed hour when that is
    later (`window_start`): a GPU rented for a week has a week of history, not three weeks of zeros. Owned servers are left out: their GPUs are
    already bought.
-#}

{%- set window_days = var('commitment_window_days', 30) | int -%}
{%- set scope_keys = ['provider_name', 'gpu_model', 'region_id', 'billing_currency'] -%}
{%- if window_days < 1 -%}
    {{ exceptions.raise_compiler_error("dbt var commitment_window_days must be a positive number of days, got " ~ window_days) }}
{%- endif -%}

with

gpu_lines as (

    select
        ProviderName as provider_name,
        x_gpu_model as gpu_model,
        -- '' where the bill names no region, so scope keys compare with =; null again in final
        coalesce(RegionId, '') as region_id,
        BillingCurrency as billing_currency,
        ChargePeriodStart as charge_period_start,
        ChargePeriodEnd as charge_period_end,
        x_gpu_hours as gpu_hours
    from {{ ref('int_billing__cost_lines') }}
    where ChargeCategory = 'Usage'
        and x_gpu_hours <> 0
        and x_gpu_model is not null
        and ProviderName <> 'On-premises'

),

provider_ends as (

    select
        provider_name,
        cast({{ dbt.date_trunc('day', 'max(charge_period_end)') }} as timestamp) as window_end
    from gpu_lines
    where gpu_hours > 0
    group by provider_name

),

windows as (

    -- each scope's window: the provider's last complete days, from the scope's first billed hour when later
    select
        {%- for key in scope_keys %}
        gpu_lines.{{ key }},
        {%- endfor %}
        provider_ends.window_end,
        case
            when min({{ dbt.date_trunc('hour', 'gpu_lines.charge_period_start') }})
                > {{ dbt.dateadd('day', -window_days, 'provider_ends.window_end') }}
                then cast(min({{ dbt.date_trunc('hour', 'gpu_lines.charge_period_start') }}) as timestamp)
            else cast({{ dbt.dateadd('day', -window_days, 'provider_ends.window_end') }} as timestamp)
        end as window_start
    from gpu_lines
    inner join provider_ends
        on gpu_lines.provider_name = provider_ends.provider_name
    where gpu_lines.gpu_hours > 0
    group by
        {%- for key in scope_keys %}
        gpu_lines.{{ key }},
        {%- endfor %}
        provider_ends.window_end
    -- a GPU no longer rented in the window has nothing to commit to
    having max(gpu_lines.charge_period_end) > {{ dbt.dateadd('day', -window_days, 'provider_ends.window_end') }}

),

periods as (

    -- one row per scope and charge period, so the spread below joins few rows to the hours
    select
        {%- for key in scope_keys %}
        gpu_lines.{{ key }},
        {%- endfor %}
        gpu_lines.charge_period_start,
        gpu_lines.charge_period_end,
        sum(gpu_lines.gpu_hours) as gpu_hours,
        case
            when {{ dbt.datediff('gpu_lines.charge_period_start', 'gpu_lines.charge_period_end', 'second') }} < 1
                then 1
            else {{ dbt.datediff('gpu_lines.charge_period_start', 'gpu_lines.charge_period_end', 'second') }}
        end as period_seconds
    from gpu_lines
    inner join windows
        on {{ keys_match('gpu_lines', 'windows', scope_keys) }}
        and gpu_lines.charge_period_end > windows.window_start
        and gpu_lines.charge_period_start < windows.window_end
    group by
        {%- for key in scope_keys %}
        gpu_lines.{{ key }},
        {%- endfor %}
        gpu_lines.charge_period_start,
        gpu_lines.charge_period_end

),

scope_hours as (

    select
        {%- for key in scope_keys %}
        windows.{{ key }},
        {%- endfor %}
        windows.window_start,
        windows.window_end,
        cast({{ dbt.dateadd('hour', '(hour_numbers.generated_number - 1)', 'windows.window_start') }} as timestamp)
            as usage_hour
    from windows
    cross join ({{ dbt.generate_series(window_days * 24) }}) as hour_numbers
    where hour_numbers.generated_number <= {{ dbt.datediff('windows.window_start', 'windows.window_end', 'hour') }}

),

spread as (

    {#- the seconds of scope_hours' hour that a charge period covers -#}
    {%- set covered_seconds = dbt.datediff(
        'greatest(scope_hours.usage_hour, periods.charge_period_start)',
        'least(' ~ dbt.dateadd('hour', 1, 'scope_hours.usage_hour') ~ ', periods.charge_period_end)',
        'second',
    ) %}
    select
        {%- for key in scope_keys %}
        scope_hours.{{ key }},
        {%- endfor %}
        scope_hours.window_start,
        scope_hours.window_end,
        scope_hours.usage_hour,
        -- gpu_hours × seconds of this hour covered / seconds of the period; the casts keep the product's 12
        -- decimals on Spark, whose decimal multiplication would otherwise round it to 6. Reversals net, down to 0.
        greatest(
            sum(
                coalesce(
                    {{ decimal_divide(
                        'cast(periods.gpu_hours as decimal(24, 12)) * cast(' ~ covered_seconds ~ ' as decimal(10, 0))',
                        'periods.period_seconds',
                        12,
                    ) }},
                    0
                )
            ),
            0
        ) as gpus
    from scope_hours
    left join periods
        on {{ keys_match('scope_hours', 'periods', scope_keys) }}
        and scope_hours.usage_hour >= {{ dbt.date_trunc('hour', 'periods.charge_period_start') }}
        and scope_hours.usage_hour < periods.charge_period_end
    group by
        {%- for key in scope_keys %}
        scope_hours.{{ key }},
        {%- endfor %}
        scope_hours.window_start,
        scope_hours.window_end,
        scope_hours.usage_hour

),

final as (

    select
        provider_name,
        gpu_model,
        nullif(region_id, '') as region_id,
        billing_currency,
        cast(window_start as timestamp) as window_start,
        cast(window_end as timestamp) as window_end,
        usage_hour,
        cast(gpus as decimal(38, 12)) as gpus
    from spread

)

select * from final
