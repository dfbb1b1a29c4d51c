{#- NVIDIA DCGM exporter metrics read from Prometheus, one row per GPU, metric and sample, in the metric's own unit. -#}

with

source as (

    select * from {{ source('raw', 'prometheus_gpu_samples') }}

),

renamed as (

    {{ telemetry_samples_renamed('source') }}

)

select * from renamed
