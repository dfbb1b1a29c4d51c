{#-
    One row per line of the loaded Oracle Cloud Infrastructure cost reports (stg_oci__cost_report), in
    FOCUS 1.2 terms, so OCI spend joins every other provider in int_billing__cost_lines.

    Why the mapping is what it is:
    - cost/myCost is what the tenancy is charged for the line, overage included (OCI's schema:
      "billedQuantity, myCost, and unitPrice are inclusive of Overage numbers"), so it is BilledCost
      alone; adding cost/myCostOverage would count overage twice. OCI bills usage as it happens and
      amortizes nothing, so EffectiveCost and ContractedCost are the same amount.
    - cost/unitPrice is the price per unit the tenancy pays; the report has no separate public price,
      so ListCost is unitPrice × billedQuantity (myCost where either is missing).
    - lineItem/isCorrection rows fix an earlier line (named in lineItem/backreferenceNo): they are
      Adjustment charges with ChargeClass Correction.
    - OCI sells GPU compute per GPU-hour (SKUs such as `Compute - GPU - H100`), and the report names
      no shape, so a GPU line's billedQuantity already counts GPU-hours: it gets PricingUnit `Hours`
      and one GPU per unit; the GPU model comes from the SKU description (seed gpu_sku_descriptions).
-#}

{%- set service_categories = {
    'Compute': ['COMPUTE', 'FUNCTIONS', 'CONTAINER_ENGINE', 'OKE', 'CONTAINER_INSTANCES'],
    'Storage': ['BLOCK_STORAGE', 'OBJECTSTORE', 'OBJECT_STORAGE', 'FILE_STORAGE', 'ARCHIVE_STORAGE'],
    'Databases': ['DATABASE', 'MYSQL', 'NOSQL', 'EXADATA', 'POSTGRESQL', 'OPENSEARCH'],
    'Networking': ['NETWORK', 'NETWORKING', 'LOAD_BALANCER', 'DNS', 'FASTCONNECT', 'VPN'],
    'Management and Governance': ['TELEMETRY', 'MONITORING', 'LOGGING', 'LOGGING_ANALYTICS', 'NOTIFICATIONS', 'EVENTS'],
    'Analytics': ['ORACLE_STREAMING_SERVICE', 'DATA_FLOW', 'ANALYTICS', 'DATA_INTEGRATION'],
    'AI and Machine Learning': ['GENERATIVE_AI', 'DATA_SCIENCE', 'AI_LANGUAGE', 'AI_VISION', 'AI_SPEECH'],
    'Security': ['VAULT', 'KMS', 'WAF', 'CLOUD_GUARD', 'BASTION'],
} -%}

{#- Source columns kept in x_extensions under their OCI header (identifiers, units, flags, numbers). -#}
{%- set extension_columns = {
    'lineItem/referenceNo': 'line_item_reference_no',
    'lineItem/backreferenceNo': 'line_item_backreference_no',
    'cost/subscriptionId': 'cost_subscription_id',
    'cost/billingUnitReadable': 'cost_billing_unit_readable',
    'cost/skuUnitDescription': 'cost_sku_unit_description',
    'cost/overageFlag': 'cost_overage_flag',
    'usage/billedQuantityOverage': 'usage_billed_quantity_overage',
    'cost/unitPriceOverage': 'cost_unit_price_overage',
    'cost/myCostOverage': 'cost_my_cost_overage',
} -%}

{%- set text = dbt.type_string() -%}
{%- set quote, double_quote = "'", '"' -%}
{%- set extension_members = [] -%}
{%- for key, column in extension_columns.items() -%}
    {%- do extension_members.append(quote ~ (',' if not loop.first else '') ~ double_quote ~ key ~ double_quote ~ ':' ~ quote) -%}
    {%- do extension_members.append(
        'coalesce(' ~ dbt.concat([quote ~ double_quote ~ quote, 'cast(' ~ column ~ ' as ' ~ text ~ ')', quote ~ double_quote ~ quote]) ~ ", 'null')"
    ) -%}
{%- endfor %}

with

source as (

    select * from {{ ref('stg_oci__cost_report') }}

),

classified as (

    select
        *,
        coalesce(line_item_is_correction = 'true', false) as is_correction,
        -- A GPU SKU metered per hour: its quantity is GPU-hours.
        (
            lower(product_description) like '%gpu%'
            and (
                lower(cost_sku_unit_description) like '%hour%'
                or upper(cost_billing_unit_readable) like '% HOURS %'
            )
        ) as is_gpu_hours,
        {{ dbt.concat(["'{'"] + extension_members + ["'}'"]) }} as extensions_base
    from source

),

renamed as (

    select
        product_availability_domain as AvailabilityZone,
        cost_my_cost as BilledCost,
        line_item_tenant_id as BillingAccountId,
        'Tenancy' as BillingAccountType,
        cost_currency_code as BillingCurrency,
        billing_period_end as BillingPeriodEnd,
        billing_period_start as BillingPeriodStart,
        case when is_correction then 'Adjustment' else 'Usage' end as ChargeCategory,
        case when is_correction then 'Correction' end as ChargeClass,
        product_description as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        line_item_interval_usage_end as ChargePeriodEnd,
        line_item_interval_usage_start as ChargePeriodStart,
        case when not is_correction then usage_billed_quantity end as ConsumedQuantity,
        case
            when not is_correction and usage_billed_quantity is not null
                then coalesce(cost_sku_unit_description, cost_billing_unit_readable)
        end as ConsumedUnit,
        cost_my_cost as ContractedCost,
        cost_unit_price as ContractedUnitPrice,
        cost_my_cost as EffectiveCost,
        'Oracle' as InvoiceIssuerName,
        coalesce({{ decimal_product(['cost_unit_price', 'usage_billed_quantity']) }}, cost_my_cost) as ListCost,
        cost_unit_price as ListUnitPrice,
        case when not is_correction then 'Standard' end as PricingCategory,
        usage_billed_quantity as PricingQuantity,
        case
            when usage_billed_quantity is null then null
            when is_gpu_hours then 'Hours'
            else coalesce(cost_sku_unit_description, cost_billing_unit_readable)
        end as PricingUnit,
        'Oracle' as ProviderName,
        'Oracle' as PublisherName,
        product_region as RegionId,
        product_resource_id as ResourceId,
        -- OCIDs name their resource type: ocid1.<type>.<realm>...
        {{ regexp_extract_group('product_resource_id', '^ocid1\\.([a-z0-9]+)\\.', 1) }} as ResourceType,
        case
            {%- for category, services in service_categories.items() %}
            when upper(product_service) in ('{{ services | join("', '") }}') then '{{ category }}'
            {%- endfor %}
            else 'Other'
        end as ServiceCategory,
        product_service as ServiceName,
        cost_product_sku as SkuId,
        product_compartment_id as SubAccountId,
        product_compartment_name as SubAccountName,
        'Compartment' as SubAccountType,
        tags as Tags,

        -- FOCUS 1.3 additions
        'Oracle' as ServiceProviderName,
        'Oracle' as HostProviderName,

        -- project columns
        'oci_cost' as x_source,
        cast(case when is_gpu_hours then 1 end as decimal(18, 6)) as x_sku_gpu_count,
        -- columns OCI added after the pinned list arrive as a JSON object: merge its members in
        case
            when extra_columns is null or extra_columns = '{}' then extensions_base
            else {{ dbt.concat([
                "substring(extensions_base, 1, length(extensions_base) - 1)",
                "','",
                "substring(extra_columns, 2, length(extra_columns) - 1)",
            ]) }}
        end as x_extensions,
        x_load_id,
        x_source_file,
        x_source_row,
        x_ingested_at

    from classified

),

final as (

    select * from renamed

)

select * from final
