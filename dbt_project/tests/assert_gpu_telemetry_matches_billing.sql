{#-
    GPUs paid for but never seen in telemetry, and GPUs seen but never paid for, over everything
    loaded: one row per such resource (or unmapped host). Severity warn: either is normal while
    telemetry is being rolled out, but each row is a GPU whose utilization nobody knows, or
    telemetry that no bill explains (a host missing from the host map, a label that names no
    billed resource). Resources billed only without GPU-hours (unused commitments, fees) are left out.
-#}
{{ config(severity='warn') }}

with

daily as (

    select * from {{ ref('fct_gpu_utilization_daily') }}

),

per_resource as (

    select
        coalesce(resource_id, {{ dbt.concat(["'host:'", "host"]) }}) as resource_or_host,
        max(provider_name) as provider_name,
        max(gpu_model) as gpu_model,
        max(team) as team,
        min(usage_date) as first_day,
        max(usage_date) as last_day,
        sum(provisioned_gpu_hours) as provisioned_gpu_hours,
        sum(telemetry_gpu_hours) as telemetry_gpu_hours,
        sum(case when match_status = 'telemetry_without_billing' then 0 else 1 end) as billed_days,
        sum(case when match_status = 'billed_without_telemetry' then 0 else 1 end) as observed_days
    from daily
    group by coalesce(resource_id, {{ dbt.concat(["'host:'", "host"]) }})

)

select
    case when observed_days = 0 then 'billed, never seen in telemetry' else 'seen in telemetry, never billed' end
        as finding,
    per_resource.*
from per_resource
where (observed_days = 0 and provisioned_gpu_hours > 0)
    or billed_days = 0
