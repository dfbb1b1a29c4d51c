{#-
    The canonical cost line table: every billing source, one row per cost line, FOCUS 1.2 columns
    plus the 1.3 additions, with GPU model, GPU count and GPU-hours resolved in one place.

    Adding a billing source: write its staging model so it returns `focus_columns` and
    `staging_project_columns` below, then add one line to `cost_line_sources`.

    Incremental by billing period: a load replaces whole billing periods in raw, so a run rebuilds
    only the (x_source, BillingPeriodStart) keys whose lines changed, i.e. whose set of
    (load, row count) differs between the sources and this table (a new delivery, a restatement,
    owned servers' lines growing by a day), and replaces them whole (delete+insert). Unchanged
    periods are not read. x_built_at records the run that built a period, for the daily marts.
    Changed seeds (GPU instance types), tag key vars or this SQL need `dbt build --full-refresh`.
-#}

{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['x_source', 'BillingPeriodStart'],
    on_schema_change='append_new_columns',
) }}

{%- set incremental = incremental_with_columns(['x_built_at']) %}

{%- set cost_line_sources = [
    ref('stg_focus__cost_and_usage'),
    ref('stg_oci__cost_report'),
    ref('stg_aws__cur_line_items'),
    ref('stg_gpu_clouds__usage'),
    ref('int_onprem__daily_cost_lines'),
    ref('stg_azure__cost_details'),
    ref('stg_gcp__billing_export'),
] -%}

{#- FOCUS 1.2 columns, then the FOCUS 1.3 additions (nullable). -#}
{%- set focus_columns = [
    'AvailabilityZone', 'BilledCost', 'BillingAccountId', 'BillingAccountName', 'BillingAccountType',
    'BillingCurrency', 'BillingPeriodEnd', 'BillingPeriodStart', 'CapacityReservationId',
    'CapacityReservationStatus', 'ChargeCategory', 'ChargeClass', 'ChargeDescription', 'ChargeFrequency',
    'ChargePeriodEnd', 'ChargePeriodStart', 'CommitmentDiscountCategory', 'CommitmentDiscountId',
    'CommitmentDiscountName', 'CommitmentDiscountQuantity', 'CommitmentDiscountStatus',
    'CommitmentDiscountType', 'CommitmentDiscountUnit', 'ConsumedQuantity', 'ConsumedUnit',
    'ContractedCost', 'ContractedUnitPrice', 'EffectiveCost', 'InvoiceId', 'InvoiceIssuerName',
    'ListCost', 'ListUnitPrice', 'PricingCategory', 'PricingCurrency',
    'PricingCurrencyContractedUnitPrice', 'PricingCurrencyEffectiveCost', 'PricingCurrencyListUnitPrice',
    'PricingQuantity', 'PricingUnit', 'ProviderName', 'PublisherName', 'RegionId', 'RegionName',
    'ResourceId', 'ResourceName', 'ResourceType', 'ServiceCategory', 'ServiceName', 'ServiceSubcategory',
    'SkuId', 'SkuMeter', 'SkuPriceDetails', 'SkuPriceId', 'SubAccountId', 'SubAccountName',
    'SubAccountType', 'Tags',
    'ServiceProviderName', 'HostProviderName', 'ContractApplied', 'AllocatedMethodId',
    'AllocatedMethodDetails', 'AllocatedResourceId', 'AllocatedResourceName', 'AllocatedTags',
] -%}

{#- Project columns every staging model provides (GPU hints from the source, tags, lineage). -#}
{%- set staging_project_columns = [
    'x_source', 'x_instance_type', 'x_sku_gpu_count', 'x_sku_gpu_model',
    'x_load_id', 'x_source_file', 'x_source_row', 'x_extensions',
] -%}

{%- set source_columns = focus_columns + staging_project_columns -%}

{#- The lines a run rebuilds: all of them, or on an incremental run those of the changed periods. -#}
{%- set changed = '(x_source, BillingPeriodStart) in (select x_source, BillingPeriodStart from changed_periods)'
    if incremental else 'true' -%}

with

{% for relation in cost_line_sources %}
source_{{ loop.index }} as (

    select
        {{ source_columns | join(',\n        ') }}
    from {{ relation }}

),

{% endfor -%}

{%- if incremental %}

-- (source, load, billing period, rows) now and as built: any difference marks the period as changed.
current_fingerprint as (

    {% for relation in cost_line_sources -%}
    select x_source, x_load_id, BillingPeriodStart, count(*) as row_count
    from {{ relation }}
    group by x_source, x_load_id, BillingPeriodStart
    {%- if not loop.last %}
    union all
    {% endif %}
    {%- endfor %}

),

built_fingerprint as (

    select x_source, x_load_id, BillingPeriodStart, count(*) as row_count
    from {{ this }}
    group by x_source, x_load_id, BillingPeriodStart

),

changed_periods as (

    select distinct x_source, BillingPeriodStart
    from (
        (select * from current_fingerprint except select * from built_fingerprint)
        union all
        (select * from built_fingerprint except select * from current_fingerprint)
    ) as differences

),

{%- endif %}

unioned as (

    {% for relation in cost_line_sources -%}
    select * from source_{{ loop.index }}
    where {{ changed }}
    {%- if not loop.last %}
    union all
    {% endif %}
    {%- endfor %}

),

gpu_instance_types as (

    select
        lower(instance_type) as instance_type_key,
        gpu_model,
        gpu_count
    from {{ ref('gpu_instance_types') }}

),

gpu_sku_descriptions as (

    select
        lower(description_pattern) as pattern,
        gpu_model
    from {{ ref('gpu_sku_descriptions') }}

),

-- GPUs billed as their own per-GPU-hour SKU (Google Cloud) name no instance type: match the
-- charge description against known SKU wording, longest pattern first. The sources are read a
-- second time for this, narrow: reading `unioned` twice would make the engine hold every line.
sku_description_candidates as (

    {% for relation in cost_line_sources -%}
    select x_load_id, x_source_file, x_source_row, ChargeDescription
    from {{ relation }}
    where {{ changed }}
        and x_instance_type is null
        and lower(ChargeDescription) like '%gpu%'
    {%- if not loop.last %}
    union all
    {% endif %}
    {%- endfor %}

),

sku_description_matches as (

    select
        candidates.x_load_id,
        candidates.x_source_file,
        candidates.x_source_row,
        gpu_sku_descriptions.gpu_model,
        row_number() over (
            partition by candidates.x_load_id, candidates.x_source_file, candidates.x_source_row
            order by length(gpu_sku_descriptions.pattern) desc
        ) as match_rank
    from sku_description_candidates as candidates
    inner join gpu_sku_descriptions
        on lower(candidates.ChargeDescription) like {{ dbt.concat(["'%'", "gpu_sku_descriptions.pattern", "'%'"]) }}

),

gpu_resolved as (

    select
        unioned.*,
        -- what the bill states about the hardware beats matching words in its description
        coalesce(
            gpu_instance_types.gpu_model, unioned.x_sku_gpu_model, sku_description_matches.gpu_model
        ) as x_gpu_model,
        cast(coalesce(unioned.x_sku_gpu_count, gpu_instance_types.gpu_count) as decimal(18, 6)) as x_gpu_count
    from unioned
    left join gpu_instance_types
        on lower(unioned.x_instance_type) = gpu_instance_types.instance_type_key
    left join sku_description_matches
        on unioned.x_load_id = sku_description_matches.x_load_id
        and unioned.x_source_file = sku_description_matches.x_source_file
        and unioned.x_source_row = sku_description_matches.x_source_row
        and sku_description_matches.match_rank = 1

),

pricing_unit_aliases as (

    select lower(source_unit) as unit_key, focus_unit
    from {{ ref('pricing_unit_aliases') }}

),

-- Providers spell units their own way (`Hrs`, `hour`, `GB-Mo`, `1 GB/Month`): PricingUnit is
-- put in FOCUS Unit Format once here, and the GPU-hour rule below reads the normalised unit.
units_normalised as (

    select
        gpu_resolved.*,
        coalesce(pricing_unit_aliases.focus_unit, nullif(trim(gpu_resolved.PricingUnit), '')) as focus_pricing_unit
    from gpu_resolved
    left join pricing_unit_aliases
        on lower(trim(gpu_resolved.PricingUnit)) = pricing_unit_aliases.unit_key

),

final as (

    select
        {% for column in focus_columns -%}
        {{ 'focus_pricing_unit as PricingUnit' if column == 'PricingUnit' else column }}{{ ',' if not loop.last }}
        {% endfor -%},
        x_source,
        x_instance_type,
        x_gpu_model,
        x_gpu_count,
        case
            -- not a GPU line: GPU-hours do not apply
            when x_gpu_model is null and coalesce(x_gpu_count, 0) <= 0 then null
            -- GPU time actually used: hourly usage, except commitment hours that went unused
            when ChargeCategory = 'Usage'
                and focus_pricing_unit = 'Hours'
                and coalesce(CommitmentDiscountStatus, '') <> 'Unused'
                then cast(coalesce(PricingQuantity, 0) * x_gpu_count as decimal(38, 12))
            -- GPU line with no GPU time: purchases, taxes, credits, unused commitments, non-hourly units
            else cast(0 as decimal(38, 12))
        end as x_gpu_hours,
        {{ first_tag_value('Tags', var('team_tag_keys')) }} as x_team,
        {{ first_tag_value('Tags', var('project_tag_keys')) }} as x_project,
        x_load_id,
        x_source_file,
        x_source_row,
        x_extensions,
        cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp) as x_built_at
    from units_normalised

)

select * from final
