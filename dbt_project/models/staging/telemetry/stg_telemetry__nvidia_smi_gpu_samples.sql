{#- nvidia-smi logs, one row per GPU, metric and sample, in the metric's own unit. -#}

with

source as (

    select * from {{ source('raw', 'nvidia_smi_gpu_samples') }}

),

renamed as (

    {{ telemetry_samples_renamed('source') }}

)

select * from renamed
