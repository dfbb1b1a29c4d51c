{#-
    Values the FOCUS export fills in where a source leaves them empty, learnt from every cost line: the type
    a billing account or sub account has on the lines whose file names one, and the subcategory a provider's
    service has, each where it is always the same (older files of the same account leave it empty). A table
    of its own, a few rows per account and service: inside the export, DuckDB could not tell these lists were
    small and built its hash joins on the cost lines instead, holding them whole (out of memory at 30M lines).
-#}

with

billing_account_types as (

    {{ only_value_per_key(ref('int_billing__cost_lines'), ['ProviderName', 'BillingAccountId'], 'BillingAccountType') }}

),

sub_account_types as (

    {{ only_value_per_key(ref('int_billing__cost_lines'), ['ProviderName', 'SubAccountId'], 'SubAccountType') }}

),

service_subcategories as (

    {{ only_value_per_key(
        ref('int_billing__cost_lines'), ['ProviderName', 'ServiceName', 'ServiceCategory'], 'ServiceSubcategory'
    ) }}

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
    'ServiceSubcategory' as default_column,
    ProviderName as provider_name,
    ServiceName as key_value,
    ServiceCategory as key_category,
    ServiceSubcategory as default_value
from service_subcategories
