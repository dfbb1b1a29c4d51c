{#-
    One row per row of the loaded Azure Cost Management AmortizedCost (commitments spread over the usage they cover) exports
    (raw.azure_amortized_cost), the columns the cost lines read. Combining the two exports into FOCUS cost lines
    is int_azure__cost_lines.
-#}

with

source as (

    select * from {{ source('raw', 'azure_amortized_cost') }}

),

renamed as (

    {{ azure_cost_details_renamed('source') }}

)

select * from renamed
