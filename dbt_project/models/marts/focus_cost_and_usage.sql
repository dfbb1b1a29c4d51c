{#-
    The warehouse's cost lines as a FOCUS 1.2 Cost and Usage dataset, for `gpu-finops export focus`:
    exactly the FOCUS 1.2 columns in the spec's order, then this project's `x_` columns, typed. It reads the
    lines with the defaults and nulls FOCUS requires already applied (int_billing__focus_lines) and restates
    unused commitment that a provider reports on its purchase line (the AWS Savings Plan recurring fee keeps the
    unused part in EffectiveCost) as its own Usage line with CommitmentDiscountStatus "Unused", leaving the
    purchase with EffectiveCost 0, as FOCUS Discount Handling requires; sums of BilledCost and EffectiveCost do
    not change.

    A view over the cost lines, not a second copy of them: a table would write every line again on every
    build (a third of a full build's time at 10M lines), while `gpu-finops export focus` reads it once per
    export. It is always current: a new file that names an account's type changes that account's lines in
    every period at once. `_cost_lines_built_at` (the cost line's x_built_at, not exported) lets an incremental
    run test only the lines it rebuilt; the learnt defaults are a small table tested on every run.
-#}

{{ config(materialized='view') }}

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
    ('x_delivered_service_category', 'x_DeliveredServiceCategory', 'string'),
    ('x_delivered_service_subcategory', 'x_DeliveredServiceSubcategory', 'string'),
    ('x_delivered_pricing_unit', 'x_DeliveredPricingUnit', 'string'),
    ('x_delivered_consumed_unit', 'x_DeliveredConsumedUnit', 'string'),
    ('x_delivered_consumed_quantity', 'x_DeliveredConsumedQuantity', 'decimal(38, 12)'),
    ('x_delivered_list_unit_price', 'x_DeliveredListUnitPrice', 'decimal(38, 12)'),
    ('x_delivered_contracted_unit_price', 'x_DeliveredContractedUnitPrice', 'decimal(38, 12)'),
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
    'x_delivered_consumed_unit': 'null',
    'x_delivered_consumed_quantity': 'null',
    'ContractedCost': 'coalesce(' ~ unused_share.ContractedCost ~ ', EffectiveCost)',
    'ListCost': 'coalesce(' ~ unused_share.ListCost ~ ', EffectiveCost)',
    'PricingCategory': "'Committed'",
    'PricingQuantity': 'coalesce(' ~ unused_share.PricingQuantity ~ ', PricingQuantity)',
    'x_gpu_hours': 'case when x_gpu_hours is null then null else cast(0 as decimal(38, 12)) end',
} -%}

{#- Each column of a delivered row and of its unused-commitment row (x_row_origin, see `lines` below). -#}
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


with

-- Every line once as delivered, and a commitment purchase with unused commitment once more as that unused
-- commitment: two reads of the lines (the second finds the few purchases), not one read crossed with the two
-- origins, which turns a filter on the view (a data test's) into the condition of a nested-loop join.
lines as (

    select *, 'Delivered' as x_row_origin
    from {{ ref('int_billing__focus_lines') }}

    union all

    select *, 'Unused commitment' as x_row_origin
    from {{ ref('int_billing__focus_lines') }}
    where {{ unused_commitment_purchase }}

),

exported_rows as (

    select
        {% for column in exported_columns -%}
        {{ by_origin[column] }} as {{ column }},
        {% endfor -%}
        x_row_origin,
        x_built_at
    from lines

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
