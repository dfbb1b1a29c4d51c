{#-
    Every cost line with what FOCUS 1.2 requires of it before it is exported (focus_cost_and_usage), so
    that the export passes the FinOps Foundation's validator whatever the sources deliver. Only for the export:
    - blanks become nulls;
    - FOCUS 1.2 columns that may not be null (InvoiceIssuerName, PublisherName, ChargeFrequency,
      BillingAccountType, SubAccountType, ServiceSubcategory, PricingCurrency and its effective cost) are filled
      from values the line or the same account or service already has (int_billing__learnt_defaults), when a
      source (FOCUS 1.0/1.1 files, exports without the column) leaves them empty; each default is described on
      its column; a line priced in another currency than billed, with no cost in that currency, is stated in its
      billing currency;
    - a line without a SubAccountName (legacy CUR, Azure pay-as-you-go) gets the name its sub account has on the
      same provider's latest line that names it (int_billing__learnt_defaults), else the SubAccountId, which is what
      providers show for an account without a name: "MUST NOT be null when SubAccountId is not null";
    - the invoice issuer is named like the provider when it is the provider's own legal entity (var
      focus_invoice_issuer_aliases), since FOCUS reads a different name as a third-party charge;
    - every line of a provider's service gets the service's one ServiceCategory and ServiceSubcategory
      (int_billing__learnt_defaults says how they are chosen where a provider's file varies them per line);
      the line's own values are kept in x_delivered_service_category and x_delivered_service_subcategory;
    - what FOCUS defines as null is null (pricing columns on Tax lines, a unit without a quantity, a commitment
      status without a commitment, a meter without a SKU, price details without a price id, a consumed quantity
      and unit on any line but Usage that is not an unused commitment, a negative unit price on a line that may
      have none: any but a Usage or Purchase that is not a Correction), and provider-specific SkuPriceDetails
      keys are prefixed with `x_`; a delivered quantity or price made null is kept in x_delivered_consumed_quantity,
      x_delivered_list_unit_price and x_delivered_contracted_unit_price (the unit in x_delivered_consumed_unit).

    A view, like the export over it: both are computed when read (see focus_cost_and_usage). Two views rather than
    one because a Hive metastore on Derby (Spark's local catalog) stores a view's text in at most 32,700 characters.
-#}

{{ config(materialized='view') }}

{%- set string_columns = [
    'AvailabilityZone', 'BillingAccountId', 'BillingAccountName', 'BillingAccountType', 'BillingCurrency',
    'CapacityReservationId', 'CapacityReservationStatus', 'ChargeCategory', 'ChargeClass', 'ChargeDescription',
    'ChargeFrequency', 'CommitmentDiscountCategory', 'CommitmentDiscountId', 'CommitmentDiscountName',
    'CommitmentDiscountStatus', 'CommitmentDiscountType', 'CommitmentDiscountUnit', 'ConsumedUnit', 'InvoiceId',
    'InvoiceIssuerName', 'PricingCategory', 'PricingCurrency', 'PricingUnit', 'ProviderName', 'PublisherName',
    'RegionId', 'RegionName', 'ResourceId', 'ResourceName', 'ResourceType', 'ServiceCategory', 'ServiceName',
    'ServiceSubcategory', 'SkuId', 'SkuMeter', 'SkuPriceDetails', 'SkuPriceId', 'SubAccountId', 'SubAccountName',
    'SubAccountType', 'Tags',
] -%}
{%- set other_columns = [
    'BilledCost', 'BillingPeriodEnd', 'BillingPeriodStart', 'ChargePeriodEnd', 'ChargePeriodStart',
    'CommitmentDiscountQuantity', 'ConsumedQuantity', 'ContractedCost', 'ContractedUnitPrice', 'EffectiveCost',
    'ListCost', 'ListUnitPrice', 'PricingCurrencyContractedUnitPrice', 'PricingCurrencyEffectiveCost',
    'PricingCurrencyListUnitPrice', 'PricingQuantity',
] -%}
{%- set project_columns = [
    'x_source', 'x_instance_type', 'x_gpu_model', 'x_gpu_count', 'x_gpu_hours', 'x_team', 'x_project',
    'x_load_id', 'x_source_file', 'x_source_row', 'x_extensions',
] -%}


{#- SkuPriceDetails property keys FOCUS 1.2 defines; any other key must start with `x_`. -#}
{%- set sku_price_properties = [
    'CoreCount', 'DiskMaxIops', 'DiskSpace', 'DiskType', 'GpuCount', 'InstanceType', 'InstanceSeries',
    'MemorySize', 'NetworkMaxIops', 'NetworkMaxThroughput', 'OperatingSystem', 'Redundancy', 'StorageClass',
] -%}


{#- Column -> when FOCUS 1.2 defines it as null, beyond what `defaulted` nulls: Tax lines have no quantity, unit,
    pricing category or unit price; only Usage that is not an unused commitment has a consumed quantity (and unit);
    a unit price "MUST be a non-negative decimal value" and "MAY be null" on any line but a Usage or Purchase that is
    not a Correction, where a negative one (a credit's) is dropped. -#}
{%- set tax = "ChargeCategory = 'Tax'" -%}
{%- set not_consumed = "(ChargeCategory <> 'Usage' or CommitmentDiscountStatus = 'Unused')" -%}
{%- set may_have_no_unit_price = "(ChargeCategory not in ('Usage', 'Purchase') or ChargeClass = 'Correction')" -%}
{%- set focus_null_when = {
    'PricingQuantity': tax,
    'PricingUnit': tax,
    'PricingCategory': tax,
    'ConsumedQuantity': not_consumed,
    'ConsumedUnit': not_consumed ~ ' or ConsumedQuantity is null',
} -%}
{%- for price in [
    'ListUnitPrice', 'ContractedUnitPrice', 'PricingCurrencyListUnitPrice', 'PricingCurrencyContractedUnitPrice'
] -%}
    {%- do focus_null_when.update({price: tax ~ ' or (' ~ may_have_no_unit_price ~ ' and ' ~ price ~ ' < 0)'}) -%}
{%- endfor -%}


{%- set priced_in_billing_currency =
    '(cost_lines.PricingCurrency is null or cost_lines.PricingCurrency = cost_lines.BillingCurrency)' -%}
{%- set restated_in_billing_currency =
    '(not ' ~ priced_in_billing_currency ~ ' and cost_lines.PricingCurrencyEffectiveCost is null)' -%}

{%- set account_type_defaults = var('focus_account_type_defaults') -%}
{%- set invoice_issuer_aliases = var('focus_invoice_issuer_aliases') -%}

with

cost_lines as (

    select
        {% for column in string_columns -%}
        {{ blank_as_null(column) }} as {{ column }},
        {% endfor -%}
        {{ (other_columns + project_columns) | join(',\n        ') }},
        x_delivered_pricing_unit,
        x_delivered_consumed_unit,
        x_built_at
    from {{ ref('int_billing__cost_lines') }}

),

-- The defaults learnt from every cost line (int_billing__learnt_defaults), one list per column they fill.
billing_account_types as (

    select provider_name as ProviderName, key_value as BillingAccountId, default_value as BillingAccountType
    from {{ ref('int_billing__learnt_defaults') }}
    where default_column = 'BillingAccountType'

),

sub_account_types as (

    select provider_name as ProviderName, key_value as SubAccountId, default_value as SubAccountType
    from {{ ref('int_billing__learnt_defaults') }}
    where default_column = 'SubAccountType'

),

sub_account_names as (

    select provider_name as ProviderName, key_value as SubAccountId, default_value as SubAccountName
    from {{ ref('int_billing__learnt_defaults') }}
    where default_column = 'SubAccountName'

),

services as (

    select
        provider_name as ProviderName,
        key_value as ServiceName,
        key_category as ServiceCategory,
        default_value as ServiceSubcategory
    from {{ ref('int_billing__learnt_defaults') }}
    where default_column = 'ServiceSubcategory'

),

defaulted as (

    select
        cost_lines.AvailabilityZone,
        cost_lines.BilledCost,
        cost_lines.BillingAccountId,
        cost_lines.BillingAccountName,
        case
            when cost_lines.BillingAccountId is null then null
            else coalesce(
                cost_lines.BillingAccountType,
                billing_account_types.BillingAccountType,
                case cost_lines.ProviderName
                    {%- for provider, types in account_type_defaults.items() %}
                    when '{{ provider }}' then '{{ types.billing_account }}'
                    {%- endfor %}
                end,
                'Billing Account'
            )
        end as BillingAccountType,
        cost_lines.BillingCurrency,
        cost_lines.BillingPeriodEnd,
        cost_lines.BillingPeriodStart,
        cost_lines.CapacityReservationId,
        case
            when cost_lines.CapacityReservationId is null then null else cost_lines.CapacityReservationStatus
        end as CapacityReservationStatus,
        cost_lines.ChargeCategory,
        cost_lines.ChargeClass,
        cost_lines.ChargeDescription,
        coalesce(
            cost_lines.ChargeFrequency,
            case when cost_lines.ChargeCategory = 'Usage' then 'Usage-Based' else 'One-Time' end
        ) as ChargeFrequency,
        cost_lines.ChargePeriodEnd,
        cost_lines.ChargePeriodStart,
        cost_lines.CommitmentDiscountCategory,
        cost_lines.CommitmentDiscountId,
        cost_lines.CommitmentDiscountName,
        cost_lines.CommitmentDiscountQuantity,
        case
            when cost_lines.CommitmentDiscountId is null then null else cost_lines.CommitmentDiscountStatus
        end as CommitmentDiscountStatus,
        cost_lines.CommitmentDiscountType,
        cost_lines.CommitmentDiscountUnit,
        cost_lines.ConsumedQuantity,
        cost_lines.ConsumedUnit,
        cost_lines.ContractedCost,
        cost_lines.ContractedUnitPrice,
        cost_lines.EffectiveCost,
        cost_lines.InvoiceId,
        case
            {%- for provider, aliases in invoice_issuer_aliases.items() %}
            {%- set quoted = [] %}
            {%- for alias in aliases %}{% do quoted.append("'" ~ alias | replace("'", "''") ~ "'") %}{% endfor %}
            when cost_lines.ProviderName = '{{ provider }}'
                and cost_lines.InvoiceIssuerName in ({{ quoted | join(', ') }})
                then cost_lines.ProviderName
            {%- endfor %}
            else coalesce(cost_lines.InvoiceIssuerName, cost_lines.ProviderName)
        end as InvoiceIssuerName,
        cost_lines.ListCost,
        cost_lines.ListUnitPrice,
        cost_lines.PricingCategory,
        -- Without a separate pricing currency, prices are in BillingCurrency: the same amounts. A line priced in
        -- another currency whose effective cost in it is unknown (no rate delivered) is stated in BillingCurrency,
        -- since PricingCurrencyEffectiveCost must not be null.
        case
            when {{ restated_in_billing_currency }} then cost_lines.BillingCurrency
            else coalesce(cost_lines.PricingCurrency, cost_lines.BillingCurrency)
        end as PricingCurrency,
        {%- for column, billing_column in [
            ('PricingCurrencyContractedUnitPrice', 'ContractedUnitPrice'),
            ('PricingCurrencyEffectiveCost', 'EffectiveCost'),
            ('PricingCurrencyListUnitPrice', 'ListUnitPrice'),
        ] %}
        case
            when {{ restated_in_billing_currency }} then cost_lines.{{ billing_column }}
            when {{ priced_in_billing_currency }}
                then coalesce(cost_lines.{{ column }}, cost_lines.{{ billing_column }})
            else cost_lines.{{ column }}
        end as {{ column }},
        {%- endfor %}
        cost_lines.PricingQuantity,
        case when cost_lines.PricingQuantity is null then null else cost_lines.PricingUnit end as PricingUnit,
        cost_lines.ProviderName,
        coalesce(cost_lines.PublisherName, cost_lines.ProviderName) as PublisherName,
        cost_lines.RegionId,
        cost_lines.RegionName,
        cost_lines.ResourceId,
        cost_lines.ResourceName,
        -- A commitment's own lines name the commitment as their resource: its type is the commitment's.
        coalesce(
            cost_lines.ResourceType,
            case
                when cost_lines.ResourceId = cost_lines.CommitmentDiscountId then cost_lines.CommitmentDiscountType
            end
        ) as ResourceType,
        -- a line whose service has no classification (no category on any line) keeps its own, as before
        coalesce(services.ServiceCategory, cost_lines.ServiceCategory) as ServiceCategory,
        cost_lines.ServiceName,
        coalesce(
            services.ServiceSubcategory,
            cost_lines.ServiceSubcategory,
            {{ dbt.concat(["'Other ('", "cost_lines.ServiceCategory", "')'"]) }}
        ) as ServiceSubcategory,
        cost_lines.SkuId,
        case when cost_lines.SkuId is null then null else cost_lines.SkuMeter end as SkuMeter,
        case
            when cost_lines.SkuPriceId is null then null
            else {{ json_prefix_keys('cost_lines.SkuPriceDetails', sku_price_properties) }}
        end as SkuPriceDetails,
        cost_lines.SkuPriceId,
        cost_lines.SubAccountId,
        coalesce(
            cost_lines.SubAccountName, sub_account_names.SubAccountName, cost_lines.SubAccountId
        ) as SubAccountName,
        case
            when cost_lines.SubAccountId is null then null
            else coalesce(
                cost_lines.SubAccountType,
                sub_account_types.SubAccountType,
                case cost_lines.ProviderName
                    {%- for provider, types in account_type_defaults.items() %}
                    when '{{ provider }}' then '{{ types.sub_account }}'
                    {%- endfor %}
                end,
                'Sub Account'
            )
        end as SubAccountType,
        cost_lines.Tags,
        cost_lines.x_gpu_model,
        cost_lines.x_gpu_count,
        cost_lines.x_gpu_hours,
        cost_lines.x_instance_type,
        cost_lines.x_team,
        cost_lines.x_project,
        cost_lines.x_source,
        cost_lines.x_source_file,
        cost_lines.x_source_row,
        cost_lines.x_load_id,
        cost_lines.x_extensions,
        cost_lines.InvoiceIssuerName as x_delivered_invoice_issuer_name,
        cost_lines.ServiceCategory as x_delivered_service_category,
        cost_lines.ServiceSubcategory as x_delivered_service_subcategory,
        cost_lines.x_delivered_pricing_unit,
        cost_lines.x_delivered_consumed_unit,
        cost_lines.ConsumedQuantity as x_delivered_consumed_quantity,
        cost_lines.ListUnitPrice as x_delivered_list_unit_price,
        cost_lines.ContractedUnitPrice as x_delivered_contracted_unit_price,
        cost_lines.x_built_at
    from cost_lines
    left join billing_account_types
        on cost_lines.ProviderName = billing_account_types.ProviderName
        and cost_lines.BillingAccountId = billing_account_types.BillingAccountId
    left join sub_account_types
        on cost_lines.ProviderName = sub_account_types.ProviderName
        and cost_lines.SubAccountId = sub_account_types.SubAccountId
    left join sub_account_names
        on cost_lines.ProviderName = sub_account_names.ProviderName
        and cost_lines.SubAccountId = sub_account_names.SubAccountId
    left join services
        on cost_lines.ProviderName = services.ProviderName
        and cost_lines.ServiceName = services.ServiceName

),

focus_nulls as (

    select
        {% for name in (string_columns + other_columns) | sort -%}
        {% if name in focus_null_when -%}
        case when {{ focus_null_when[name] }} then null else {{ name }} end as {{ name }},
        {% else -%}
        {{ name }},
        {% endif -%}
        {% endfor -%}
        {{ project_columns | join(',\n        ') }},
        x_delivered_invoice_issuer_name,
        x_delivered_service_category,
        x_delivered_service_subcategory,
        x_delivered_pricing_unit,
        x_delivered_consumed_unit,
        x_delivered_consumed_quantity,
        x_delivered_list_unit_price,
        x_delivered_contracted_unit_price,
        x_built_at
    from defaulted

)

select * from focus_nulls
