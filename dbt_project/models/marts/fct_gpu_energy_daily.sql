{#-
    GPU energy and location-based carbon per day, GPU, host, namespace and pod (docs/energy-and-carbon.md).

    Measured: each GPU-hour of telemetry (int_telemetry__gpu_hourly) brings its energy: the DCGM energy counter's
    increases, resets handled per GPU series (`measured_counter`), or power × seconds where the GPU exports no
    counter (`power_integrated`; an hour with any counter increase is `measured_counter`, counter_kwh says how much
    the counter measured). The hour's energy is split between the pods that held the GPU (int_gpu_allocation__pod_hourly)
    by their GPU-hours over the hour's observed GPU-hours, 12 decimals; the rest, exactly, is the GPU's `unallocated`
    row (no pod, or no pod labels). Estimated: GPU-hours billed but not observed (fct_gpu_utilization_daily's
    unobserved_gpu_hours) at idle + utilization × (maximum − idle) W (seeds gpu_power, gpu_specs; the dbt var
    energy_estimate_utilization, default 0.5), `unobserved` rows labelled `estimated`.

    IT energy = GPU energy × the dbt var chip_to_server_power_factor (default 1.8214 = (10.2 kW / 8 GPUs) / 0.7 kW,
    Epoch AI's chip-to-server power of a DGX H100: CPUs, memory, network and fans beside the GPUs). Facility energy =
    IT × PUE: an owned server's from its inventory, else the provider class's (seed datacenter_pue). kgCO2e =
    facility kWh × the grid's gCO2e/kWh (seed grid_carbon_intensity: the resource's region, the latest factor year
    not after the day's) ÷ 1000; null where the region has no factor. Energy and carbon are exact decimals.
-#}

{%- set utilization = var('energy_estimate_utilization', 0.5) %}
{%- if utilization is not number or utilization < 0 or utilization > 1 %}
    {{ exceptions.raise_compiler_error("dbt var energy_estimate_utilization: a number from 0 to 1, got " ~ utilization) }}
{%- endif %}
{%- set server_factor = var('chip_to_server_power_factor', 1.8214) %}
{%- if server_factor is not number or server_factor < 1 %}
    {{ exceptions.raise_compiler_error("dbt var chip_to_server_power_factor: a number of at least 1, got " ~ server_factor) }}
{%- endif %}
{%- set grain = [
    'usage_date', 'provider_name', 'resource_id', 'host', 'gpu_uuid', 'gpu_model', 'allocation_type', 'namespace',
    'pod', 'energy_source',
] %}

with

gpu_hours as (

    select
        hour_start,
        usage_date,
        host,
        gpu_uuid,
        gpu_model,
        resource_id,
        telemetry_gpu_hours,
        energy_kwh,
        counter_energy_kwh,
        case when counter_energy_kwh is not null then 'measured_counter' else 'power_integrated' end
            as energy_source
    from {{ ref('int_telemetry__gpu_hourly') }}
    where energy_kwh is not null

),

pod_hours as (

    select hour_start, gpu_uuid, namespace, pod, held_gpu_hours
    from {{ ref('int_gpu_allocation__pod_hourly') }}

),

-- each pod's share of the GPU's hour: its GPU-hours over the hour's observed GPU-hours
pod_shares as (

    select
        gpu_hours.hour_start,
        gpu_hours.gpu_uuid,
        pod_hours.namespace,
        pod_hours.pod,
        pod_hours.held_gpu_hours as gpu_hours,
        {{ decimal_divide(
            decimal_product(['gpu_hours.energy_kwh', 'pod_hours.held_gpu_hours']), 'gpu_hours.telemetry_gpu_hours', 12
        ) }} as gpu_kwh,
        {{ decimal_divide(
            decimal_product(['gpu_hours.counter_energy_kwh', 'pod_hours.held_gpu_hours']),
            'gpu_hours.telemetry_gpu_hours',
            12,
        ) }} as counter_kwh
    from gpu_hours
    inner join pod_hours
        on gpu_hours.hour_start = pod_hours.hour_start
        and gpu_hours.gpu_uuid = pod_hours.gpu_uuid

),

pods_per_hour as (

    select
        hour_start,
        gpu_uuid,
        sum(gpu_hours) as gpu_hours,
        sum(gpu_kwh) as gpu_kwh,
        sum(counter_kwh) as counter_kwh
    from pod_shares
    group by hour_start, gpu_uuid

),

measured_hours as (

    select
        gpu_hours.hour_start,
        gpu_hours.usage_date,
        gpu_hours.host,
        gpu_hours.gpu_uuid,
        gpu_hours.gpu_model,
        gpu_hours.resource_id,
        gpu_hours.energy_source,
        'pod' as allocation_type,
        pod_shares.namespace,
        pod_shares.pod,
        pod_shares.gpu_hours,
        pod_shares.gpu_kwh,
        pod_shares.counter_kwh
    from gpu_hours
    inner join pod_shares
        on gpu_hours.hour_start = pod_shares.hour_start
        and gpu_hours.gpu_uuid = pod_shares.gpu_uuid

    union all

    -- what no pod held: the GPU's hour less its pods' shares, so the rows of a GPU-hour add up exactly
    select
        gpu_hours.hour_start,
        gpu_hours.usage_date,
        gpu_hours.host,
        gpu_hours.gpu_uuid,
        gpu_hours.gpu_model,
        gpu_hours.resource_id,
        gpu_hours.energy_source,
        'unallocated' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        gpu_hours.telemetry_gpu_hours - coalesce(pods_per_hour.gpu_hours, 0) as gpu_hours,
        gpu_hours.energy_kwh - coalesce(pods_per_hour.gpu_kwh, 0) as gpu_kwh,
        gpu_hours.counter_energy_kwh - coalesce(pods_per_hour.counter_kwh, 0) as counter_kwh
    from gpu_hours
    left join pods_per_hour
        on gpu_hours.hour_start = pods_per_hour.hour_start
        and gpu_hours.gpu_uuid = pods_per_hour.gpu_uuid
    where pods_per_hour.gpu_uuid is null
        or gpu_hours.energy_kwh <> pods_per_hour.gpu_kwh
        or gpu_hours.telemetry_gpu_hours <> pods_per_hour.gpu_hours

),

measured as (

    select
        usage_date,
        host,
        gpu_uuid,
        gpu_model,
        resource_id,
        energy_source,
        allocation_type,
        namespace,
        pod,
        sum(gpu_hours) as gpu_hours,
        sum(gpu_kwh) as gpu_kwh,
        sum(counter_kwh) as counter_kwh
    from measured_hours
    group by usage_date, host, gpu_uuid, gpu_model, resource_id, energy_source, allocation_type, namespace, pod

),

-- the billed side of each resource and day: provider, team, and the GPU-hours no telemetry observed
billed as (

    select
        usage_date,
        resource_id,
        max(provider_name) as provider_name,
        max(team) as team,
        max(host) as host,
        max(gpu_model) as gpu_model,
        sum(unobserved_gpu_hours) as unobserved_gpu_hours
    from {{ ref('fct_gpu_utilization_daily') }}
    where provider_name is not null
    group by usage_date, resource_id

),

power_profiles as (

    select
        specs.gpu_model,
        cast(specs.tdp_watts as decimal(38, 12)) as max_watts,
        power.idle_watts
    from {{ ref('gpu_specs') }} as specs
    inner join {{ ref('gpu_power') }} as power
        on specs.gpu_model = power.gpu_model

),

estimated as (

    select
        billed.usage_date,
        billed.host,
        cast(null as {{ dbt.type_string() }}) as gpu_uuid,
        billed.gpu_model,
        billed.resource_id,
        'estimated' as energy_source,
        'unobserved' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        billed.unobserved_gpu_hours as gpu_hours,
        -- idle + u × (max − idle) watts × hours ÷ 1000
        {{ decimal_divide(
            decimal_product([
                'billed.unobserved_gpu_hours',
                'power_profiles.idle_watts + ' ~ decimal_product([
                    'cast(' ~ utilization ~ ' as decimal(38, 12))',
                    'power_profiles.max_watts - power_profiles.idle_watts',
                ]),
            ]),
            1000,
            12,
        ) }} as gpu_kwh,
        cast(null as decimal(38, 12)) as counter_kwh
    from billed
    left join power_profiles
        on billed.gpu_model = power_profiles.gpu_model
    where billed.unobserved_gpu_hours > 0

),

unioned as (

    select * from measured
    union all
    select * from estimated

),

regions as (

    select
        ProviderName as provider_name,
        ResourceId as resource_id,
        max(RegionId) as region
    from {{ ref('int_billing__cost_lines') }}
    where x_gpu_model is not null
        and ResourceId is not null
        and RegionId is not null
    group by ProviderName, ResourceId

),

owned_servers as (

    select asset_id, site, pue
    from {{ ref('int_onprem__gpu_assets') }}

),

provider_classes as (

    select provider, provider_class from {{ ref('price_providers') }}

),

pues as (

    select provider_class, pue from {{ ref('datacenter_pue') }}

),

namespace_teams as (

    select namespace, team from {{ ref('kubernetes_namespace_teams') }}

),

placed as (

    select
        unioned.*,
        billed.provider_name,
        coalesce(namespace_teams.team, billed.team) as team,
        coalesce(owned_servers.site, regions.region) as region,
        case
            when owned_servers.pue is not null then 'inventory'
            when billed.provider_name = 'On-premises' then 'on_premises'
            else coalesce(provider_classes.provider_class, 'other')
        end as pue_from,
        owned_servers.pue as inventory_pue,
        cast(extract(year from unioned.usage_date) as integer) as usage_year
    from unioned
    left join billed
        on unioned.usage_date = billed.usage_date
        and unioned.resource_id = billed.resource_id
    left join namespace_teams
        on unioned.namespace = namespace_teams.namespace
    left join owned_servers
        on billed.provider_name = 'On-premises'
        and unioned.resource_id = owned_servers.asset_id
    left join regions
        on billed.provider_name = regions.provider_name
        and unioned.resource_id = regions.resource_id
    left join provider_classes
        on billed.provider_name = provider_classes.provider

),

-- the latest factor year not after the day's year, per provider and region
factor_years as (

    select
        needed.provider_name,
        needed.region,
        needed.usage_year,
        max(factors.factor_year) as factor_year
    from (select distinct provider_name, region, usage_year from placed) as needed
    inner join {{ ref('grid_carbon_intensity') }} as factors
        on needed.provider_name = factors.provider_name
        and needed.region = factors.region
        and factors.factor_year <= needed.usage_year
    group by needed.provider_name, needed.region, needed.usage_year

),

factored as (

    select
        placed.*,
        coalesce(placed.inventory_pue, pues.pue) as pue,
        factors.factor_year,
        factors.gco2e_per_kwh,
        {{ decimal_product(['placed.gpu_kwh', 'cast(' ~ server_factor ~ ' as decimal(38, 12))']) }} as it_kwh
    from placed
    left join pues
        on placed.pue_from = pues.provider_class
    left join factor_years
        on placed.provider_name = factor_years.provider_name
        and placed.region = factor_years.region
        and placed.usage_year = factor_years.usage_year
    left join {{ ref('grid_carbon_intensity') }} as factors
        on factor_years.provider_name = factors.provider_name
        and factor_years.region = factors.region
        and factor_years.factor_year = factors.factor_year

),

with_facility as (

    select
        factored.*,
        {{ decimal_product(['it_kwh', 'pue']) }} as facility_kwh
    from factored

),

final as (

    select
        {{ generate_surrogate_key(grain) }} as gpu_energy_daily_key,
        usage_date,
        provider_name,
        resource_id,
        host,
        gpu_uuid,
        gpu_model,
        allocation_type,
        namespace,
        pod,
        team,
        energy_source,
        cast(gpu_hours as decimal(38, 12)) as gpu_hours,
        cast(gpu_kwh as decimal(38, 12)) as gpu_kwh,
        cast(counter_kwh as decimal(38, 12)) as counter_kwh,
        cast({{ server_factor }} as decimal(38, 12)) as server_power_factor,
        cast(it_kwh as decimal(38, 12)) as it_kwh,
        cast(pue as decimal(38, 12)) as pue,
        pue_from,
        cast(facility_kwh as decimal(38, 12)) as facility_kwh,
        region,
        factor_year as carbon_factor_year,
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
