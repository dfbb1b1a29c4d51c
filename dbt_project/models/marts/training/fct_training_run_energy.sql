{#-
    Energy and location-based carbon of each training run (fct_training_runs), by the first rule its data meets
    (`energy_rule`, docs/energy-and-carbon.md):

    - pods: a Kubernetes run's pods' share of their GPUs' measured energy, hour by hour (the GPU's hour energy ×
      the GPU-hours the pod held ÷ the hour's observed GPU-hours), for the pods of the run's namespace on its hosts
      within its hours.
    - host_gpus: a Slurm run on hosts with energy telemetry: its GPU-hours × the mean energy per GPU-hour of those
      hosts' GPUs no pod held in the run's hours (sacct names hosts, not GPU indices).
    - estimated: otherwise (SkyPilot, hosts without telemetry): GPU-hours × (idle + energy_estimate_utilization ×
      (maximum − idle)) W, as fct_gpu_energy_daily estimates.

    IT energy = GPU energy × chip_to_server_power_factor; facility = IT × PUE and kgCO2e = facility × gCO2e/kWh ÷
    1000 with the factors fct_gpu_energy_daily used for the run's hosts (the highest where hosts differ), an owned
    server's inventory PUE and site for an estimated run on one, else the provider class's PUE and no carbon factor
    (the region is unknown).
-#}

{%- set utilization = var('energy_estimate_utilization', 0.5) %}
{%- set server_factor = var('chip_to_server_power_factor', 1.8214) %}

with

runs as (

    select
        training_run_key,
        run_source,
        run_key,
        run_name,
        account,
        team,
        started_at,
        ended_at,
        gpu_hours,
        gpu_model,
        provider_name,
        hosts,
        {{ dbt.concat(["','", 'hosts', "','"]) }} as host_list
    from {{ ref('fct_training_runs') }}

),

gpu_hours as (

    select hour_start, host, gpu_uuid, telemetry_gpu_hours, energy_kwh
    from {{ ref('int_telemetry__gpu_hourly') }}
    where energy_kwh is not null

),

pod_hours as (

    select hour_start, gpu_uuid, namespace, held_gpu_hours
    from {{ ref('int_gpu_allocation__pod_hourly') }}

),

pod_energy as (

    select
        gpu_hours.hour_start,
        gpu_hours.host,
        gpu_hours.gpu_uuid,
        pod_hours.namespace,
        pod_hours.held_gpu_hours,
        {{ decimal_divide(
            decimal_product(['gpu_hours.energy_kwh', 'pod_hours.held_gpu_hours']), 'gpu_hours.telemetry_gpu_hours', 12
        ) }} as gpu_kwh
    from gpu_hours
    inner join pod_hours
        on gpu_hours.hour_start = pod_hours.hour_start
        and gpu_hours.gpu_uuid = pod_hours.gpu_uuid

),

-- each GPU-hour less what its pods held: the GPUs Slurm (or nothing) used
unheld as (

    select
        gpu_hours.hour_start,
        gpu_hours.host,
        gpu_hours.telemetry_gpu_hours - coalesce(sum(pod_energy.held_gpu_hours), 0) as gpu_hours,
        gpu_hours.energy_kwh - coalesce(sum(pod_energy.gpu_kwh), 0) as gpu_kwh
    from gpu_hours
    left join pod_energy
        on gpu_hours.hour_start = pod_energy.hour_start
        and gpu_hours.gpu_uuid = pod_energy.gpu_uuid
    group by gpu_hours.hour_start, gpu_hours.host, gpu_hours.gpu_uuid, gpu_hours.telemetry_gpu_hours,
        gpu_hours.energy_kwh

),

pod_runs as (

    select
        runs.training_run_key,
        sum(pod_energy.gpu_kwh) as gpu_kwh
    from runs
    inner join pod_energy
        on runs.account = pod_energy.namespace
        and runs.host_list like {{ dbt.concat(["'%,'", 'pod_energy.host', "',%'"]) }}
        and pod_energy.hour_start >= {{ dbt.date_trunc('hour', 'runs.started_at') }}
        and pod_energy.hour_start < runs.ended_at
    where runs.run_source = 'kubernetes'
    group by runs.training_run_key

),

host_runs as (

    select
        runs.training_run_key,
        {{ decimal_divide(
            decimal_product(['max(runs.gpu_hours)', 'sum(unheld.gpu_kwh)']), 'sum(unheld.gpu_hours)', 12
        ) }} as gpu_kwh
    from runs
    inner join unheld
        on runs.host_list like {{ dbt.concat(["'%,'", 'unheld.host', "',%'"]) }}
        and unheld.hour_start >= {{ dbt.date_trunc('hour', 'runs.started_at') }}
        and unheld.hour_start < runs.ended_at
    where runs.run_source <> 'kubernetes'
    group by runs.training_run_key
    having sum(unheld.gpu_hours) > 0

),

-- the factors fct_gpu_energy_daily applied on each host with telemetry
host_factors as (

    select host, max(pue) as pue, max(gco2e_per_kwh) as gco2e_per_kwh
    from {{ ref('fct_gpu_energy_daily') }}
    where host is not null
    group by host

),

run_factors as (

    select
        runs.training_run_key,
        max(host_factors.pue) as pue,
        max(host_factors.gco2e_per_kwh) as gco2e_per_kwh
    from runs
    inner join host_factors
        on runs.host_list like {{ dbt.concat(["'%,'", 'host_factors.host', "',%'"]) }}
    group by runs.training_run_key

),

-- an estimated run on an owned server: its inventory PUE and site's grid
owned_hosts as (

    select
        assets.hostname,
        {{ dbt.split_part('assets.hostname', "'.'", 1) }} as short_hostname,
        assets.pue,
        grid.gco2e_per_kwh
    from {{ ref('int_onprem__gpu_assets') }} as assets
    left join (
        select region, gco2e_per_kwh,
            row_number() over (partition by region order by factor_year desc) as newest
        from {{ ref('grid_carbon_intensity') }}
        where provider_name = 'On-premises'
    ) as grid
        on assets.site = grid.region
        and grid.newest = 1
    where assets.hostname is not null

),

owned_factors as (

    select
        runs.training_run_key,
        max(owned_hosts.pue) as pue,
        max(owned_hosts.gco2e_per_kwh) as gco2e_per_kwh
    from runs
    inner join owned_hosts
        on runs.host_list like {{ dbt.concat(["'%,'", 'owned_hosts.hostname', "',%'"]) }}
        or runs.host_list like {{ dbt.concat(["'%,'", 'owned_hosts.short_hostname', "',%'"]) }}
    group by runs.training_run_key

),

class_pues as (

    select providers.provider, pues.pue
    from {{ ref('price_providers') }} as providers
    inner join {{ ref('datacenter_pue') }} as pues
        on providers.provider_class = pues.provider_class

),

default_pues as (

    select
        max(case when provider_class = 'on_premises' then pue end) as on_premises_pue,
        max(case when provider_class = 'other' then pue end) as other_pue
    from {{ ref('datacenter_pue') }}

),

power_profiles as (

    select specs.gpu_model, cast(specs.tdp_watts as decimal(38, 12)) as max_watts, power.idle_watts
    from {{ ref('gpu_specs') }} as specs
    inner join {{ ref('gpu_power') }} as power
        on specs.gpu_model = power.gpu_model

),

ruled as (

    select
        runs.*,
        case
            when pod_runs.training_run_key is not null then 'pods'
            when host_runs.training_run_key is not null then 'host_gpus'
            else 'estimated'
        end as energy_rule,
        coalesce(
            pod_runs.gpu_kwh,
            host_runs.gpu_kwh,
            {{ decimal_divide(
                decimal_product([
                    'runs.gpu_hours',
                    'power_profiles.idle_watts + ' ~ decimal_product([
                        'cast(' ~ utilization ~ ' as decimal(38, 12))',
                        'power_profiles.max_watts - power_profiles.idle_watts',
                    ]),
                ]),
                1000,
                12,
            ) }}
        ) as gpu_kwh,
        coalesce(
            run_factors.pue,
            owned_factors.pue,
            class_pues.pue,
            case when runs.provider_name = 'On-premises' then default_pues.on_premises_pue end,
            default_pues.other_pue
        ) as pue,
        coalesce(run_factors.gco2e_per_kwh, owned_factors.gco2e_per_kwh) as gco2e_per_kwh
    from runs
    cross join default_pues
    left join pod_runs
        on runs.training_run_key = pod_runs.training_run_key
    left join host_runs
        on runs.training_run_key = host_runs.training_run_key
    left join run_factors
        on runs.training_run_key = run_factors.training_run_key
    left join owned_factors
        on runs.training_run_key = owned_factors.training_run_key
    left join class_pues
        on runs.provider_name = class_pues.provider
    left join power_profiles
        on runs.gpu_model = power_profiles.gpu_model

),

with_it as (

    select
        ruled.*,
        {{ decimal_product(['gpu_kwh', 'cast(' ~ server_factor ~ ' as decimal(38, 12))']) }} as it_kwh
    from ruled

),

with_facility as (

    select
        with_it.*,
        {{ decimal_product(['it_kwh', 'pue']) }} as facility_kwh
    from with_it

),

final as (

    select
        training_run_key,
        run_source,
        run_key,
        run_name,
        team,
        started_at,
        ended_at,
        gpu_model,
        provider_name,
        hosts,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        energy_rule,
        case when energy_rule = 'estimated' then 'estimated' else 'measured' end as energy_source,
        cast(gpu_kwh as decimal(38, 12)) as gpu_kwh,
        cast(it_kwh as decimal(38, 12)) as it_kwh,
        cast(pue as decimal(38, 12)) as pue,
        cast(facility_kwh as decimal(38, 12)) as facility_kwh,
        cast(gco2e_per_kwh as decimal(38, 12)) as gco2e_per_kwh,
        {{ decimal_divide(decimal_product(['facility_kwh', 'gco2e_per_kwh']), 1000, 12) }} as kgco2e,
        case when gpu_hours > 0 then {{ decimal_divide('facility_kwh', 'gpu_hours', 12) }} end
            as facility_kwh_per_gpu_hour,
        case when gpu_hours > 0 and gco2e_per_kwh is not null then
            {{ decimal_divide(decimal_product(['facility_kwh', 'gco2e_per_kwh']), decimal_product(['gpu_hours', 1000]), 12) }}
        end as kgco2e_per_gpu_hour
    from with_facility

)

select * from final
