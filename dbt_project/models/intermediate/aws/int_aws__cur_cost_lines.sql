{#-
    One cost line per AWS Cost and Usage Report line item (stg_aws__cur_line_items), in FOCUS 1.2
    terms. The loader gives CUR 2.0, legacy CUR CSV and legacy Athena/Parquet one shape (CUR 2.0 names,
    JSON for product attributes and tags), so one model serves all three.

    Why each rule is what it is:
    - BilledCost is the invoice basis: net unblended cost where AWS reports it (private or EDP
      discounts exist), else unblended cost; SavingsPlanNegation rows keep their negative amount, so
      covered usage plus its negation bills zero, as FOCUS wants for commitment-covered usage.
    - EffectiveCost is the amortized cost of CID's summary_view (the reference formula, section 2.7),
      on the net columns where AWS reports them so that BilledCost and EffectiveCost share one basis:
      covered usage carries its share of the commitment, the commitment fees carry only their unused
      part, upfront payments and negations carry nothing, and RI upfront fees (`Fee` with an RI) are
      already amortized into the covered usage.
    - ChargeCategory: usage at any price (incl. RI/SP-covered usage and the SP negation that undoes
      the covered line's on-demand amount, which is how the commitment prices that usage: not a
      credit granted after the fact) is Usage; commitment fees and other fees are Purchase; Tax is
      Tax; credits and the negotiated or bundled discounts AWS books as separate negative lines are
      Credit (FOCUS: price reductions not applied on the row itself); a Refund is Adjustment
      because CUR does not say which category it refunds; unknown types are Adjustment.
    - PricingCategory: Committed on RI/SP-covered usage, Dynamic on Spot usage, else Standard on
      usage and purchases (FOCUS counts a commitment's own purchase as Standard); null on Tax,
      credits and adjustments.
    - CommitmentDiscountStatus: Used on covered usage (and its negation), Unused on the RI and SP
      recurring fee lines, whose EffectiveCost is exactly the unused part of the commitment.
    - PricingQuantity and PricingUnit: instance usage (Box/Spot/HostBox/DedicatedUsage) is in hours;
      the negation line is 0, because its hours are the covered line's and must not count twice.
    - ServiceName and ServiceCategory belong to the service the line is billed under (lineItem/ProductCode,
      which product/ProductName names), not to product/servicecode: AWS books a service's data transfer
      under servicecode AWSDataTransfer, and FOCUS gives each service one category, so EC2's data transfer is
      Compute like the rest of EC2.
    - x_instance_type: the product's instance type, else the usage type (`USE2-SpotUsage:p5.48xlarge`),
      else for Spot lines without product attributes the description's first word, which is the
      instance type (`p5.48xlarge Linux/UNIX Spot Instance-hour ...`).
    - Split cost allocation rows (split_line_item_parent_resource_id set: an EKS pod's or ECS task's share
      of a parent EC2 instance, and the instance's unused row) are allocation detail of the parent
      instance's line, which keeps the whole cost: they stay cost lines (one per raw row, so the
      reconciliation to raw still counts them) with their own billed cost, which AWS leaves at zero
      (assert_aws_split_rows_carry_no_cost fails the build otherwise), no list cost and no instance type,
      so they add no cost, no list cost and no GPU-hours. Their split amounts are read by
      int_gpu_allocation__aws_split_daily.
-#}

{%- set instance_usage_pattern = '^(?:[A-Z0-9]+-)?(BoxUsage|SpotUsage|HostBoxUsage|DedicatedUsage):(.+)$' -%}
{%- set spot_description_pattern = '^([a-z][a-z0-9-]*[.][a-z0-9]+) ' -%}
{%- set savings_plan_types = ['SavingsPlanCoveredUsage', 'SavingsPlanNegation', 'SavingsPlanRecurringFee', 'SavingsPlanUpfrontFee'] -%}
{%- set credit_types = ['Credit', 'Discount', 'EdpDiscount', 'PrivateRateDiscount', 'BundledDiscount', 'SppDiscount', 'DistributorDiscount'] -%}
{#- FOCUS ServiceCategory by AWS product code (focus_converters' AWS mapping, abridged); anything else is Other. -#}
{%- set service_categories = {
    'AI and Machine Learning': ['AmazonSageMaker', 'AmazonBedrock', 'AmazonRekognition', 'AmazonTextract', 'AmazonPolly', 'AmazonLex', 'AmazonKendra', 'AmazonPersonalize', 'AmazonForecast', 'AmazonComprehend', 'comprehend', 'transcribe', 'translate', 'MachineLearningSavingsPlans'],
    'Analytics': ['AmazonAthena', 'AWSGlue', 'AmazonES', 'AmazonKinesis', 'AmazonKinesisFirehose', 'AmazonKinesisAnalytics', 'AmazonMSK', 'AmazonQuickSight', 'ElasticMapReduce', 'AWSLakeFormation', 'AWSDataExchange'],
    'Compute': ['AmazonEC2', 'AWSLambda', 'AmazonECS', 'AmazonEKS', 'AmazonECR', 'AmazonECRPublic', 'AmazonLightsail', 'AWSOutposts', 'AWSAppRunner', 'AmazonAppStream', 'ComputeSavingsPlans'],
    'Databases': ['AmazonRDS', 'AmazonDynamoDB', 'AmazonElastiCache', 'AmazonRedshift', 'AmazonDocDB', 'AmazonNeptune', 'AmazonMemoryDB', 'AmazonTimestream', 'AmazonMCS', 'AmazonQLDB'],
    'Developer Tools': ['AWSCodeArtifact', 'AWSCodeCommit', 'AWSCodeDeploy', 'AWSCodePipeline', 'CodeBuild', 'AWSAmplify', 'AWSAppSync', 'AWSXRay', 'AWSCloudShell'],
    'Integration': ['AWSQueueService', 'AmazonSNS', 'AmazonStates', 'AmazonMQ', 'AmazonMWAA', 'AWSEvents', 'AppFlow'],
    'Internet of Things': ['AWSIoT', 'AWSGreengrass', 'AWSIoTAnalytics', 'AWSIoTEvents', 'AWSIoTSiteWise'],
    'Management and Governance': ['AmazonCloudWatch', 'AWSCloudTrail', 'AWSConfig', 'AWSSystemsManager', 'AWSCloudFormation', 'AWSCostExplorer', 'AWSBudgets', 'AWSServiceCatalog', 'AmazonGrafana', 'AmazonPrometheus'],
    'Media': ['AWSElementalMediaConvert', 'AWSElementalMediaLive', 'AWSElementalMediaPackage', 'AmazonIVS', 'AmazonKinesisVideo'],
    'Migration': ['AWSDatabaseMigrationSvc', 'AWSDataSync', 'AWSTransfer', 'AWSApplicationMigrationSvc', 'AWSMigrationHubRefactorSpaces'],
    'Networking': ['AmazonVPC', 'AWSDataTransfer', 'AmazonCloudFront', 'AmazonRoute53', 'AWSELB', 'AWSDirectConnect', 'AWSGlobalAccelerator', 'AmazonApiGateway', 'AWSCloudMap'],
    'Security': ['awskms', 'AWSSecretsManager', 'AmazonGuardDuty', 'AWSSecurityHub', 'awswaf', 'AWSShield', 'AWSCertificateManager', 'AmazonInspectorV2', 'AmazonMacie', 'AmazonCognito', 'AWSFMS', 'CloudHSM', 'AWSNetworkFirewall'],
    'Storage': ['AmazonS3', 'AmazonEFS', 'AmazonFSx', 'AmazonGlacier', 'AmazonS3GlacierDeepArchive', 'AWSBackup', 'AWSStorageGateway'],
} -%}

with

line_items as (

    select * from {{ ref('stg_aws__cur_line_items') }}

),

classified as (

    select
        *,
        coalesce(line_item_net_unblended_cost, line_item_unblended_cost) as billed_cost,
        split_line_item_parent_resource_id is not null as is_split_row,
        {{ regexp_extract_group('line_item_usage_type', instance_usage_pattern, 2) }} as usage_type_instance,
        (
            line_item_usage_type like '%SpotUsage%' or lower(coalesce(pricing_purchase_option, '')) like '%spot%'
        ) as is_spot,
        case
            when line_item_line_item_type in ('{{ savings_plan_types | join("', '") }}') then 'Savings Plan'
            when line_item_line_item_type in ('DiscountedUsage', 'RIFee') then 'Reserved Instance'
            when line_item_line_item_type = 'Fee' and reservation_reservation_a_r_n is not null then 'Reserved Instance'
        end as commitment_type,
        case
            when line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
                then 'Usage'
            when line_item_line_item_type in ('RIFee', 'SavingsPlanRecurringFee', 'SavingsPlanUpfrontFee', 'Fee', 'FlatRateSubscription')
                then 'Purchase'
            when line_item_line_item_type = 'Tax' then 'Tax'
            when line_item_line_item_type in ('{{ credit_types | join("', '") }}') then 'Credit'
            else 'Adjustment'
        end as charge_category
    from line_items

),

priced as (

    select
        *,
        case
            when charge_category = 'Tax' then null
            when line_item_line_item_type = 'SavingsPlanNegation' then cast(0 as decimal(38, 12))
            else line_item_usage_amount
        end as pricing_quantity,
        case line_item_line_item_type
            when 'SavingsPlanCoveredUsage' then coalesce(
                savings_plan_net_savings_plan_effective_cost, savings_plan_savings_plan_effective_cost, 0
            )
            when 'SavingsPlanRecurringFee' then
                coalesce(savings_plan_total_commitment_to_date, 0) - coalesce(savings_plan_used_commitment, 0)
            when 'SavingsPlanNegation' then 0
            when 'SavingsPlanUpfrontFee' then 0
            when 'DiscountedUsage' then coalesce(reservation_net_effective_cost, reservation_effective_cost, 0)
            when 'RIFee' then
                coalesce(
                    reservation_net_unused_amortized_upfront_fee_for_billing_period,
                    reservation_unused_amortized_upfront_fee_for_billing_period,
                    0
                )
                + coalesce(reservation_net_unused_recurring_fee, reservation_unused_recurring_fee, 0)
            when 'Fee' then case when reservation_reservation_a_r_n is not null then 0 else billed_cost end
            else billed_cost
        end as effective_cost,
        case
            when commitment_type = 'Savings Plan' then savings_plan_savings_plan_a_r_n
            when commitment_type = 'Reserved Instance' then reservation_reservation_a_r_n
        end as commitment_discount_id
    from classified

),

renamed as (

    select
        -- FOCUS 1.2 columns
        line_item_availability_zone as AvailabilityZone,
        billed_cost as BilledCost,
        bill_payer_account_id as BillingAccountId,
        bill_payer_account_name as BillingAccountName,
        line_item_currency_code as BillingCurrency,
        coalesce(
            bill_billing_period_end_date,
            {{ dbt.dateadd('month', 1, 'bill_billing_period_start_date') }}
        ) as BillingPeriodEnd,
        bill_billing_period_start_date as BillingPeriodStart,
        capacity_reservation_capacity_reservation_arn as CapacityReservationId,
        case lower(capacity_reservation_capacity_reservation_status)
            when 'used' then 'Used'
            when 'unused' then 'Unused'
        end as CapacityReservationStatus,
        charge_category as ChargeCategory,
        line_item_line_item_description as ChargeDescription,
        case
            when charge_category = 'Usage' then 'Usage-Based'
            when line_item_line_item_type = 'SavingsPlanUpfrontFee' or bill_bill_type in ('Purchase', 'Refund')
                then 'One-Time'
            else 'Recurring'
        end as ChargeFrequency,
        coalesce(
            line_item_usage_end_date,
            bill_billing_period_end_date,
            {{ dbt.dateadd('month', 1, 'bill_billing_period_start_date') }}
        ) as ChargePeriodEnd,
        line_item_usage_start_date as ChargePeriodStart,
        case commitment_type when 'Savings Plan' then 'Spend' when 'Reserved Instance' then 'Usage' end
            as CommitmentDiscountCategory,
        commitment_discount_id as CommitmentDiscountId,
        case
            when commitment_discount_id is null then null
            when line_item_line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
                then 'Used'
            when line_item_line_item_type in ('RIFee', 'SavingsPlanRecurringFee') then 'Unused'
        end as CommitmentDiscountStatus,
        case when commitment_discount_id is not null then commitment_type end as CommitmentDiscountType,
        case
            when charge_category = 'Usage' and line_item_line_item_type <> 'SavingsPlanNegation'
                then line_item_usage_amount
        end as ConsumedQuantity,
        case
            when charge_category = 'Usage' and line_item_line_item_type <> 'SavingsPlanNegation'
                and line_item_usage_amount is not null
                then case when usage_type_instance is not null then 'Hours' else coalesce(pricing_unit, 'Units') end
        end as ConsumedUnit,
        cast(
            case
                when line_item_line_item_type = 'DiscountedUsage' then coalesce(pricing_public_on_demand_cost, 0)
                when line_item_line_item_type = 'SavingsPlanNegation' then 0
                else billed_cost
            end as decimal(38, 12)
        ) as ContractedCost,
        cast(effective_cost as decimal(38, 12)) as EffectiveCost,
        bill_invoice_id as InvoiceId,
        coalesce(bill_invoicing_entity, line_item_legal_entity, 'AWS') as InvoiceIssuerName,
        cast(
            case
                when line_item_line_item_type = 'SavingsPlanNegation' or is_split_row then 0
                else coalesce(pricing_public_on_demand_cost, 0)
            end as decimal(38, 12)
        ) as ListCost,
        case when line_item_line_item_type <> 'SavingsPlanNegation' then pricing_public_on_demand_rate end
            as ListUnitPrice,
        case
            when charge_category in ('Tax', 'Credit', 'Adjustment') then null
            when line_item_line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation')
                then 'Committed'
            when charge_category = 'Usage' and is_spot then 'Dynamic'
            else 'Standard'
        end as PricingCategory,
        pricing_quantity as PricingQuantity,
        case
            when pricing_quantity is null then null
            when usage_type_instance is not null then 'Hours'
            else coalesce(pricing_unit, 'Units')
        end as PricingUnit,
        'AWS' as ProviderName,
        case
            when bill_billing_entity = 'AWS Marketplace' then coalesce(line_item_legal_entity, 'AWS Marketplace')
            else 'AWS'
        end as PublisherName,
        coalesce(product_region_code, {{ json_extract_string('product', 'region') }}) as RegionId,
        coalesce(product_location, {{ json_extract_string('product', 'location') }}) as RegionName,
        coalesce(
            line_item_resource_id,
            case when charge_category = 'Purchase' then commitment_discount_id end
        ) as ResourceId,
        case coalesce(line_item_product_code, product_servicecode)
            {%- for category, codes in service_categories.items() %}
            {%- for code in codes %}
            when '{{ code }}' then '{{ category }}'
            {%- endfor %}
            {%- endfor %}
            else 'Other'
        end as ServiceCategory,
        coalesce(
            {{ json_extract_string('product', 'product_name') }}, line_item_product_code, product_servicecode
        ) as ServiceName,
        product_sku as SkuId,
        pricing_rate_code as SkuPriceId,
        line_item_usage_account_id as SubAccountId,
        line_item_usage_account_name as SubAccountName,
        resource_tags as Tags,

        -- FOCUS 1.3 additions
        'AWS' as ServiceProviderName,
        'AWS' as HostProviderName,

        -- project columns
        'aws_cur' as x_source,
        case when not is_split_row then
            coalesce(
                nullif(trim(product_instance_type), ''),
                usage_type_instance,
                case
                    when is_spot then
                        {{ regexp_extract_group('line_item_line_item_description', spot_description_pattern, 1) }}
                end
            )
        end as x_instance_type,
        case when not is_split_row then
            {{ dbt.safe_cast(json_extract_string('product', 'gpu'), 'decimal(18, 6)') }}
        end as x_sku_gpu_count,
        {{ json_object_of_text({
            'x_UsageType': 'line_item_usage_type',
            'x_Operation': 'line_item_operation',
            'x_ProductCode': 'line_item_product_code',
            'x_ServiceCode': 'product_servicecode',
            'x_LineItemType': 'line_item_line_item_type',
            'x_BillType': 'bill_bill_type',
            'x_PurchaseOption': 'pricing_purchase_option',
            'x_CurFormat': 'x_cur_format',
            'x_Model': json_extract_string('product', 'model'),
        }) }} as x_extensions,
        x_cur_format,
        x_load_id,
        x_source_file,
        x_source_row,
        x_ingested_at

    from priced

)

select * from renamed
