{#-
    The warehouse's cost lines as a FOCUS 1.2 Cost and Usage dataset, for `gpu-finops export focus`:
    exactly the FOCUS 1.2 columns in the spec's order, then this project's `x_` columns. The export
    must pass the FinOps Foundation's validator (tests/pipelines/test_focus_export_validates.py) whatever the
    sources deliver, so this model, and only for the export:
    - fills FOCUS 1.2 columns that may not be null (InvoiceIssuerName, PublisherName, ChargeFrequency,
      BillingAccountType, SubAccountType, ServiceSubcategory, PricingCurrency and its effective cost)
      from values the line or the same account or service already has, when a source (FOCUS 1.0/1.1
      files, exports without the column) leaves them empty; each default is described on its column; a line
      priced in another currency than billed, with no cost in that currency, is stated in its billing currency;
    - restates unused commitment that a provider reports on its purchase line (the AWS Savings Plan
      recurring fee keeps the unused part in EffectiveCost) as its own Usage line with
      CommitmentDiscountStatus "Unused", leaving the purchase with EffectiveCost 0, as FOCUS Discount
      Handling requires; sums of BilledCost and EffectiveCost do not change;
    - names the invoice issuer like the provider when it is the provider's own legal entity (var
      focus_invoice_issuer_aliases), since FOCUS reads a different name as a third-party charge;
    - writes blanks as nulls, nulls what FOCUS defines as null (pricing columns on Tax lines, a unit
      without a quantity, a commitment status without a commitment, a meter without a SKU, price
      details without a price id) and prefixes provider-specific SkuPriceDetails keys with `x_`.

    A view over the cost lines, not a second copy of them: a table would write every line again on every
    build (a third of a full build's time at 10M lines), while `gpu-finops export focus` reads it once per
    export. It is always current: a new file that names an account's type changes that account's lines in
    every period at once. `_cost_lines_built_at` (the cost line's x_built_at, not exported) lets an incremental
    run test only the lines it rebuilt; the learnt defaults are a small table tested on every run.
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

{#- FOCUS 1.2 columns in the spec's order, with their types: strings are string, JSON is text. -#}
{%- set focus_columns = [
    ('AvailabilityZone', 'string'), ('BilledCost', 'decimal(38, 12)'), ('BillingAccountId', 'string'),
    ('BillingAccountName', 'string'), ('BillingAccountType', 'string'), ('BillingCurrency', 'string'),
    ('BillingPeriodEnd', 'timestamp'), ('BillingPeriodStart', 'timestamp'), ('CapacityReservationId', 'string'),
    ('CapacityReservationStatus', 'string'), ('ChargeCategory', 'string'), ('ChargeClass', 'string'),
    ('ChargeDescription', 'string'), ('ChargeFrequency', 'string'), ('ChargePeriodEnd', 'timestamp'),
    ('ChargePeriodStart', 'timestamp'), ('CommitmentDiscountCategory', 'string'),
    ('CommitmentDiscountId', 'string'), ('CommitmentDiscountName', 'string'),
    ('CommitmentDiscountQuantity', 'decimal(38, 12)'), ('CommitmentDiscountStatus', 'string'),
    ('CommitmentDiscountType', 'string'), ('CommitmentDiscountUnit', 'string'),
    ('ConsumedQuantity', 'decimal(38, 12)'), ('ConsumedUnit', 'string'), ('ContractedCost', 'decimal(38, 12)'),
    ('ContractedUnitPrice', 'decimal(38, 12)'), ('EffectiveCost', 'decimal(38, 12)'), ('InvoiceId', 'string'),
    ('InvoiceIssuerName', 'string'), ('ListCost', 'decimal(38, 12)'), ('ListUnitPrice', 'decimal(38, 12)'),
    ('PricingCategory', 'string'), ('PricingCurrency', 'string'),
    ('PricingCurrencyContractedUnitPrice', 'decimal(38, 12)'), ('PricingCurrencyEffectiveCost', 'decimal(38, 12)'),
    ('PricingCurrencyListUnitPrice', 'decimal(38, 12)'), ('PricingQuantity', 'decimal(38, 12)'),
    ('PricingUnit', 'string'), ('ProviderName', 'string'), ('PublisherName', 'string'), ('RegionId', 'string'),
    ('RegionName', 'string'), ('ResourceId', 'string'), ('ResourceName', 'string'), ('ResourceType', 'string'),
    ('ServiceCategory', 'string'), ('ServiceName', 'string'), ('ServiceSubcategory', 'string'),
    ('SkuId', 'string'), ('SkuMeter', 'string'), ('SkuPriceDetails', 'string'), ('SkuPriceId', 'string'),
    ('SubAccountId', 'string'), ('SubAccountName', 'string'), ('SubAccountType', 'string'), ('Tags', 'string'),
] -%}

{#- SkuPriceDetails property keys FOCUS 1.2 defines; any other key must start with `x_`. -#}
{%- set sku_price_properties = [
    'CoreCount', 'DiskMaxIops', 'DiskSpace', 'DiskType', 'GpuCount', 'InstanceType', 'InstanceSeries',
    'MemorySize', 'NetworkMaxIops', 'NetworkMaxThroughput', 'OperatingSystem', 'Redundancy', 'StorageClass',
] -%}

{#- Unit prices FOCUS defines as null on Tax lines, with the quantity, unit and pricing category. -#}
{%- set tax_null_columns = [
    'PricingQuantity', 'PricingUnit', 'PricingCategory', 'ListUnitPrice', 'ContractedUnitPrice',
    'PricingCurrencyListUnitPrice', 'PricingCurrencyContractedUnitPrice',
] -%}

{#- Project columns carried through, and their export names and types (FOCUS: custom columns last, `x_`). -#}
{%- set x_columns = [
    ('x_gpu_model', 'x_GpuModel', 'string'),
    ('x_gpu_count', 'x_GpuCount', 'decimal(18, 6)'),
    ('x_gpu_hours', 'x_GpuHours', 'decimal(38, 12)'),
    ('x_instance_type', 'x_InstanceType', 'string'),
    ('x_team', 'x_Team', 'string'),
    ('x_project', 'x_Project', 'string'),
    ('x_source', 'x_SourceFormat', 'string'),
    ('x_source_file', 'x_SourceFile', 'string'),
    ('x_source_row', 'x_SourceRow', 'bigint'),
    ('x_load_id', 'x_LoadId', 'string'),
    ('x_row_origin', 'x_RowOrigin', 'string'),
    ('x_delivered_invoice_issuer_name', 'x_DeliveredInvoiceIssuerName', 'string'),
    ('x_extensions', 'x_Extensions', 'string'),
] -%}
{%- set export_project_columns = x_columns | map(attribute=0) | reject('equalto', 'x_row_origin') | list -%}

{#- A commitment purchase whose EffectiveCost holds the commitment's unused part. -#}
{%- set unused_commitment_purchase =
    "ChargeCategory = 'Purchase' and CommitmentDiscountId is not null and EffectiveCost <> 0" -%}
{%- set zero_on_split_purchase =
    'case when ' ~ unused_commitment_purchase ~ ' then cast(0 as decimal(38, 12)) else ' -%}
{%- set delivered_overrides = {
    'EffectiveCost': zero_on_split_purchase ~ 'EffectiveCost end',
    'PricingCurrencyEffectiveCost': zero_on_split_purchase ~ 'PricingCurrencyEffectiveCost end',
} -%}

{#- The purchase's quantities and costs times its unused share, EffectiveCost / BilledCost. -#}
{%- set unused_share = {} -%}
{%- for column in ['CommitmentDiscountQuantity', 'ContractedCost', 'ListCost', 'PricingQuantity'] -%}
    {%- do unused_share.update({column: decimal_divide(
        'cast(' ~ column ~ ' as decimal(38, 10)) * cast(EffectiveCost as decimal(38, 10))', 'BilledCost', 12
    )}) -%}
{%- endfor -%}
{#- The unused commitment as FOCUS shows it: a Usage line, nothing billed, the unused part as
    EffectiveCost, nothing consumed; quantities and costs are the purchase's times the unused share. -#}
{%- set unused_overrides = {
    'BilledCost': 'cast(0 as decimal(38, 12))',
    'ChargeCategory': "'Usage'",
    'ChargeDescription': dbt.concat([
        "'Unused commitment: '", 'coalesce(ChargeDescription, CommitmentDiscountName, CommitmentDiscountId)'
    ]),
    'ChargeFrequency': "'Usage-Based'",
    'CommitmentDiscountQuantity':
        'coalesce(' ~ unused_share.CommitmentDiscountQuantity ~ ', CommitmentDiscountQuantity)',
    'CommitmentDiscountStatus': "'Unused'",
    'ConsumedQuantity': 'null',
    'ConsumedUnit': 'null',
    'ContractedCost': 'coalesce(' ~ unused_share.ContractedCost ~ ', EffectiveCost)',
    'ListCost': 'coalesce(' ~ unused_share.ListCost ~ ', EffectiveCost)',
    'PricingCategory': "'Committed'",
    'PricingQuantity': 'coalesce(' ~ unused_share.PricingQuantity ~ ', PricingQuantity)',
    'x_gpu_hours': 'case when x_gpu_hours is null then null else cast(0 as decimal(38, 12)) end',
} -%}

{#- Each column of a delivered row and of its unused-commitment row (x_row_origin, see cost_lines below). -#}
{%- set exported_columns = (focus_columns | map(attribute=0) | list) + export_project_columns -%}
{%- set by_origin = {} -%}
{%- for column in exported_columns -%}
    {%- set delivered = delivered_overrides.get(column, column) -%}
    {%- set unused = unused_overrides.get(column, column) -%}
    {%- if delivered == unused -%}
        {%- do by_origin.update({column: column}) -%}
    {%- else -%}
        {%- do by_origin.update({column: "case when x_row_origin = 'Delivered' then "
            ~ delivered ~ ' else ' ~ unused ~ ' end'}) -%}
    {%- endif -%}
{%- endfor -%}

{%- set priced_in_billing_currency =
    '(cost_lines.PricingCurrency is null or cost_lines.PricingCurrency = cost_lines.BillingCurrency)' -%}
{%- set restated_in_billing_currency =
    '(not ' ~ priced_in_billing_currency ~ ' and cost_lines.PricingCurrencyEffectiveCost is null)' -%}

{%- set account_type_defaults = var('focus_account_type_defaults') -%}
{%- set invoice_issuer_aliases = var('focus_invoice_issuer_aliases') -%}

with

-- Every line once as delivered, and a commitment purchase with unused commitment once more as that unused
-- commitment (x_row_origin). Split here, at the scan, so each step below reads one stream: a union further down
-- would read a step twice, which DuckDB then materializes (and, as of 2.0.1, can answer a filter on wrongly), and a
-- cross join with the two origins turns a filter on the view (a data test's) into a nested-loop join condition.
cost_lines as (

    {%- for origin in ['Delivered', 'Unused commitment'] %}

    select
        lines.*,
        '{{ origin }}' as x_row_origin
    from (
        select
            {% for column in string_columns -%}
            {{ blank_as_null(column) }} as {{ column }},
            {% endfor -%}
            {{ (other_columns + project_columns) | join(',\n            ') }},
            x_built_at
        from {{ ref('int_billing__cost_lines') }}
    ) as lines
    {%- if not loop.first %}
    where {{ unused_commitment_purchase }}
    {%- endif %}
    {%- if not loop.last %}

    union all
    {%- endif %}
    {%- endfor %}

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

service_subcategories as (

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
        cost_lines.ServiceCategory,
        cost_lines.ServiceName,
        coalesce(
            cost_lines.ServiceSubcategory,
            service_subcategories.ServiceSubcategory,
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
        cost_lines.SubAccountName,
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
        cost_lines.x_row_origin,
        cost_lines.x_built_at
    from cost_lines
    left join billing_account_types
        on cost_lines.ProviderName = billing_account_types.ProviderName
        and cost_lines.BillingAccountId = billing_account_types.BillingAccountId
    left join sub_account_types
        on cost_lines.ProviderName = sub_account_types.ProviderName
        and cost_lines.SubAccountId = sub_account_types.SubAccountId
    left join service_subcategories
        on cost_lines.ProviderName = service_subcategories.ProviderName
        and cost_lines.ServiceName = service_subcategories.ServiceName
        and cost_lines.ServiceCategory = service_subcategories.ServiceCategory

),

focus_nulls as (

    select
        {% for name, type in focus_columns -%}
        {% if name in tax_null_columns -%}
        case when ChargeCategory = 'Tax' then null else {{ name }} end as {{ name }},
        {% else -%}
        {{ name }},
        {% endif -%}
        {% endfor -%}
        {{ export_project_columns | join(',\n        ') }},
        x_row_origin,
        x_built_at
    from defaulted

),

exported_rows as (

    select
        {% for column in exported_columns -%}
        {{ by_origin[column] }} as {{ column }},
        {% endfor -%}
        x_row_origin,
        x_built_at
    from focus_nulls

),

final as (

    select
        {% for name, type in focus_columns -%}
        cast({{ name }} as {{ type }}) as {{ name }},
        {% endfor -%}
        {%- for column, name, type in x_columns -%}
        cast({{ column }} as {{ type }}) as {{ name }},
        {% endfor -%}
        cast(x_built_at as timestamp) as _cost_lines_built_at
    from exported_rows

)

select * from final
