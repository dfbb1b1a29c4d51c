{#-
    GPU energy and carbon for the report, over the whole history: per team, GPU model and energy source the GPU-hours,
    facility kWh and kgCO2e (fct_gpu_energy_daily), and the kWh and kgCO2e per GPU-hour. kgCO2e counts only the rows
    with a grid factor; the GPU-hours behind it are kept beside so the intensity per GPU-hour is over the same rows.
-#}

with

per_team as (

    select
        team,
        gpu_model,
        energy_source,
        sum(gpu_hours) as gpu_hours,
        sum(facility_kwh) as facility_kwh,
        sum(case when kgco2e is not null then gpu_hours end) as carbon_gpu_hours,
        sum(kgco2e) as kgco2e
    from {{ ref('fct_gpu_energy_daily') }}
    group by team, gpu_model, energy_source

)

select
    cast(team as {{ dbt.type_string() }}) as team,
    cast(gpu_model as {{ dbt.type_string() }}) as gpu_model,
    cast(energy_source as {{ dbt.type_string() }}) as energy_source,
    cast(gpu_hours as decimal(38, 12)) as gpu_hours,
    cast(facility_kwh as decimal(38, 12)) as facility_kwh,
    cast(kgco2e as decimal(38, 12)) as kgco2e,
    case when gpu_hours > 0 then {{ decimal_divide('facility_kwh', 'gpu_hours', 6) }} end as facility_kwh_per_gpu_hour,
    case when carbon_gpu_hours > 0 then {{ decimal_divide('kgco2e', 'carbon_gpu_hours', 6) }} end
        as kgco2e_per_gpu_hour
from per_team
