{#-
    One fingerprint per usage month of the GPU inputs the tables incremental by usage month are built from, so that
    an incremental run rebuilds the months whose inputs changed and no other (macro months_with_changed_inputs).
    Cost lines: the count and latest x_built_at of the GPU cost lines charged in the month. Exact: every rebuild of
    a billing period stamps its lines with the run's start, so a line added or changed raises the latest stamp, and
    a line removed without any added lowers the count. It counts every GPU line, a few more than
    fct_gpu_utilization_daily shares out, so a month whose GPU lines name no resource is rebuilt there on every run
    (to no rows), never missed. int_anomalies__resource_daily reads exactly these lines.
    Telemetry: the count of hourly rows and the sum of a hash of each whole row (row_hash), because the hourly table
    is rebuilt whole on every run and has no stamp: new samples, a reloaded log and a host map change all change
    the rows they touch, and only those months. A change that left the sum equal would need a 64-bit hash collision.
    A view, not a table: a run that builds one of those tables without this model still compares fresh fingerprints.
-#}

{{ config(materialized='view') }}

{%- set text = dbt.type_string() %}

with

gpu_cost_lines as (

    select
        {{ usage_month('ChargePeriodStart') }} as usage_month,
        count(*) as gpu_cost_line_count,
        max(x_built_at) as cost_lines_built_at
    from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
    group by {{ usage_month('ChargePeriodStart') }}

),

telemetry as (

    select
        {{ usage_month('hourly.usage_date') }} as usage_month,
        count(*) as telemetry_hour_count,
        sum(cast({{ row_hash('hourly') }} as decimal(38, 0))) as telemetry_checksum
    from {{ ref('int_telemetry__gpu_hourly') }} as hourly
    group by {{ usage_month('hourly.usage_date') }}

),

counted as (

    select
        coalesce(gpu_cost_lines.usage_month, telemetry.usage_month) as usage_month,
        cast(coalesce(gpu_cost_lines.gpu_cost_line_count, 0) as bigint) as gpu_cost_line_count,
        gpu_cost_lines.cost_lines_built_at,
        cast(coalesce(telemetry.telemetry_hour_count, 0) as bigint) as telemetry_hour_count,
        cast(coalesce(telemetry.telemetry_checksum, 0) as decimal(38, 0)) as telemetry_checksum
    from gpu_cost_lines
    full outer join telemetry
        on gpu_cost_lines.usage_month = telemetry.usage_month

),

fingerprinted as (

    select
        counted.*,
        {{ dbt.concat([
            "cast(gpu_cost_line_count as " ~ text ~ ")",
            "'/'",
            "coalesce(cast(cost_lines_built_at as " ~ text ~ "), '')",
        ]) }} as cost_lines_fingerprint,
        {{ dbt.concat([
            "cast(telemetry_hour_count as " ~ text ~ ")",
            "'/'",
            "cast(telemetry_checksum as " ~ text ~ ")",
        ]) }} as telemetry_fingerprint
    from counted

)

select
    fingerprinted.*,
    {{ dbt.concat(["cost_lines_fingerprint", "'/'", "telemetry_fingerprint"]) }} as cost_lines_and_telemetry_fingerprint
from fingerprinted
