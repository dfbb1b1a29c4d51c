{#-
    Values the FOCUS export fills in or decides per key, learnt from every cost line: the type a billing
    account or sub account has on the lines whose file names one, where it is always the same (older files of
    the same account leave it empty); the name a sub account has on the latest line that names it, for its lines
    whose export has no name column (legacy CUR, Azure pay-as-you-go; an account renamed since gets its newest
    name); and the one ServiceCategory and ServiceSubcategory of each provider's service, which FOCUS 1.2 requires (ServiceName "MUST have one and only one ServiceCategory", "SHOULD have
    one and only one ServiceSubcategory") where a provider's file states them per line and they vary (AWS's
    FOCUS lines in the FinOps Foundation's sample file EC2's volumes under Storage, the rest of EC2 under
    Compute). A service's category is the one carrying the largest part of its cost (EffectiveCost, without
    sign; amounts in different currencies count alike, this only picks a label), then the one on the most
    lines, then the first by name; its subcategory is chosen the same way among the lines of that category
    that name one, else `Other (<category>)`.

    A table of its own, a few rows per account and service: inside the export, DuckDB could not tell these
    lists were small and built its hash joins on the cost lines instead, holding them whole (out of memory at
    30M lines).
-#}

with

billing_account_types as (

    {{ only_value_per_key(ref('int_billing__cost_lines'), ['ProviderName', 'BillingAccountId'], 'BillingAccountType') }}

),

sub_account_types as (

    {{ only_value_per_key(ref('int_billing__cost_lines'), ['ProviderName', 'SubAccountId'], 'SubAccountType') }}

),

-- The name on each sub account's latest named line: the latest charge, then the first name.
sub_account_names as (

    select
        ProviderName,
        SubAccountId,
        SubAccountName,
        row_number() over (
            partition by ProviderName, SubAccountId order by max(ChargePeriodStart) desc, SubAccountName
        ) as name_rank
    from (
        select
            ProviderName,
            {{ blank_as_null('SubAccountId') }} as SubAccountId,
            {{ blank_as_null('SubAccountName') }} as SubAccountName,
            ChargePeriodStart
        from {{ ref('int_billing__cost_lines') }}
    ) as named_lines
    where ProviderName is not null and SubAccountId is not null and SubAccountName is not null
    group by ProviderName, SubAccountId, SubAccountName

),

-- Cost and lines per provider, service, category and subcategory: the votes for the service's classification.
service_votes as (

    select
        ProviderName,
        ServiceName,
        ServiceCategory,
        ServiceSubcategory,
        sum(abs(coalesce(EffectiveCost, 0))) as cost_weight,
        count(*) as line_count
    from (
        select
            ProviderName,
            ServiceName,
            {{ blank_as_null('ServiceCategory') }} as ServiceCategory,
            {{ blank_as_null('ServiceSubcategory') }} as ServiceSubcategory,
            EffectiveCost
        from {{ ref('int_billing__cost_lines') }}
    ) as service_lines
    where ProviderName is not null and ServiceName is not null and ServiceCategory is not null
    group by ProviderName, ServiceName, ServiceCategory, ServiceSubcategory

),

service_categories as (

    select
        ProviderName,
        ServiceName,
        ServiceCategory,
        row_number() over (
            partition by ProviderName, ServiceName
            order by sum(cost_weight) desc, sum(line_count) desc, ServiceCategory
        ) as category_rank
    from service_votes
    group by ProviderName, ServiceName, ServiceCategory

),

service_subcategories as (

    select
        service_votes.ProviderName,
        service_votes.ServiceName,
        service_votes.ServiceSubcategory,
        row_number() over (
            partition by service_votes.ProviderName, service_votes.ServiceName
            order by service_votes.cost_weight desc, service_votes.line_count desc, service_votes.ServiceSubcategory
        ) as subcategory_rank
    from service_votes
    inner join service_categories
        on service_votes.ProviderName = service_categories.ProviderName
        and service_votes.ServiceName = service_categories.ServiceName
        and service_votes.ServiceCategory = service_categories.ServiceCategory
        and service_categories.category_rank = 1
    where service_votes.ServiceSubcategory is not null

)

select
    'BillingAccountType' as default_column,
    ProviderName as provider_name,
    BillingAccountId as key_value,
    cast(null as {{ dbt.type_string() }}) as key_category,
    BillingAccountType as default_value
from billing_account_types

union all

select
    'SubAccountType' as default_column,
    ProviderName as provider_name,
    SubAccountId as key_value,
    cast(null as {{ dbt.type_string() }}) as key_category,
    SubAccountType as default_value
from sub_account_types

union all

select
    'SubAccountName' as default_column,
    ProviderName as provider_name,
    SubAccountId as key_value,
    cast(null as {{ dbt.type_string() }}) as key_category,
    SubAccountName as default_value
from sub_account_names
where name_rank = 1

union all

select
    'ServiceSubcategory' as default_column,
    service_categories.ProviderName as provider_name,
    service_categories.ServiceName as key_value,
    service_categories.ServiceCategory as key_category,
    coalesce(
        service_subcategories.ServiceSubcategory,
        {{ dbt.concat(["'Other ('", "service_categories.ServiceCategory", "')'"]) }}
    ) as default_value
from service_categories
left join service_subcategories
    on service_categories.ProviderName = service_subcategories.ProviderName
    and service_categories.ServiceName = service_subcategories.ServiceName
    and service_subcategories.subcategory_rank = 1
where service_categories.category_rank = 1
