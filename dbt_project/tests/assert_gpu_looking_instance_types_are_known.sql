{#-
    A bill line whose instance type belongs to a GPU family (seed gpu_instance_families) but is not
    in gpu_instance_types would count as non-GPU spend and vanish from every GPU mart. This test
    lists such instance types with their spend so someone adds them to the seed; it warns rather
    than fails, because the cost itself is still in fct_cost_daily and reconciles.
-#}

{{ config(severity='warn') }}

with

families as (

    select lower(instance_type_prefix) as prefix
    from {{ ref('gpu_instance_families') }}

),

unresolved as (

    select
        cost_lines.ProviderName as provider_name,
        cost_lines.x_instance_type as instance_type,
        cost_lines.BillingCurrency as billing_currency,
        cost_lines.EffectiveCost as effective_cost
    from {{ ref('int_billing__cost_lines') }} as cost_lines
    where cost_lines.x_gpu_model is null
        and exists (
            select 1
            from families
            where lower(cost_lines.x_instance_type) like {{ dbt.concat(['families.prefix', "'%'"]) }}
        )

)

select
    provider_name,
    instance_type,
    billing_currency,
    count(*) as cost_line_count,
    sum(effective_cost) as effective_cost
from unresolved
group by provider_name, instance_type, billing_currency
