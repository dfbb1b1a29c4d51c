{#-
    The canonical cost line table: every billing source, one row per cost line, FOCUS 1.2 columns
    plus the 1.3 additions, with GPU model, GPU count and GPU-hours resolved in one place.

    Adding a billing source: a staging model that selects, renames and types what the source has;
    where FOCUS needs more (joins, amortization, combining exports), an intermediate model returning
    the FOCUS columns it can fill (macro focus_columns) and `staging_project_columns` below; then one
    entry in `cost_line_sources`. Columns a source lacks become nulls of their type.

    Incremental by billing period: a load replaces whole billing periods in raw, so a run rebuilds
    only the (x_source, BillingPeriodStart) keys whose lines changed, i.e. whose set of
    (load, row count) differs between the sources and this table (a new delivery, a restatement,
    owned servers' lines growing by a day), and replaces them whole (macro replace_periods). Unchanged
    periods are not read. x_built_at records the run that built a period, for the daily marts.
    Changed seeds (GPU instance types), tag key vars or this SQL need `dbt build --full-refresh`.
-#}

{{ config(
    materialized='incremental',
    on_schema_change='append_new_columns',
    **replace_periods(['x_source', 'BillingPeriodStart'])
) }}

{%- set incremental = incremental_with_columns(['x_built_at']) %}

{#- The cost lines of each billing source: its intermediate model where its FOCUS mapping needs more than
    renaming (joins, amortization), else its staging model. -#}
{%- set cost_line_sources = [
    'int_focus__cost_lines',
    'int_oci__cost_lines',
    'int_aws__cur_cost_lines',
    'int_gpu_clouds__usage',
    'int_onprem__daily_cost_lines',
    'int_azure__cost_lines',
    'int_gcp__billing_cost_lines',
] -%}

{#- FOCUS 1.2 columns, then the FOCUS 1.3 additions (nullable): the one definition, var focus_columns. -#}
{%- set focus_column_list = focus_columns() -%}

{#- Project columns: GPU hints from the source, tags, lineage. -#}
{%- set staging_project_columns = [
    ('x_source', dbt.type_string()),
    ('x_instance_type', dbt.type_string()),
    ('x_sku_gpu_count', 'decimal(18, 6)'),
    ('x_sku_gpu_model', dbt.type_string()),
    ('x_load_id', dbt.type_string()),
    ('x_source_file', dbt.type_string()),
    ('x_source_row', dbt.type_bigint()),
    ('x_extensions', dbt.type_string()),
] -%}

{%- set source_columns = focus_column_list + staging_project_columns -%}

{#- The unit columns as the final select writes them: in FOCUS Unit Format (units_normalised below). -#}
{%- set normalised_units = {
    'PricingUnit': 'focus_pricing_unit as PricingUnit',
    'ConsumedUnit': 'focus_consumed_unit as ConsumedUnit',
} -%}

{#- A source states only the columns it has: the others are filled with nulls of their type. -#}
{%- set sources = [] -%}
{%- for name in cost_line_sources -%}
    {%- do sources.append({'relation': ref(name), 'columns': columns_or_typed_nulls(name, source_columns)}) -%}
{%- endfor -%}

{#- The lines a run rebuilds: all of them, or on an incremental run those of the changed periods. -#}
{%- set changed = '(x_source, BillingPeriodStart) in (select x_source, BillingPeriodStart from changed_periods)'
    if incremental else 'true' -%}

with

{% for source in sources %}
source_{{ loop.index }} as (

    select
        {% for name, sql_type in source_columns -%}
        {{ source.columns[name] }}{{ ' as ' ~ name if source.columns[name] != name }}{{ ',' if not loop.last }}
        {% endfor %}
    from {{ source.relation }}

),

{% endfor -%}

{%- if incremental %}

-- (source, load, billing period, rows) now and as built: any difference marks the period as changed.
current_fingerprint as (

    {% for source in sources -%}
    select x_source, x_load_id, BillingPeriodStart, count(*) as row_count
    from {{ source.relation }}
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

    {% for source in sources -%}
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

-- GPUs billed as their own per-GPU-hour SKU (Google Cloud, OCI) name no instance type: match the
-- charge description against known SKU wording. The sources are read a second time for this, narrow:
-- reading `unioned` twice would make the engine hold every line.
sku_description_candidates as (

    {% for source in sources -%}
    select x_load_id, x_source_file, x_source_row, ChargeDescription
    from {{ source.relation }}
    where {{ changed }}
        and {{ source.columns['x_instance_type'] }} is null
    {%- if not loop.last %}
    union all
    {% endif %}
    {%- endfor %}

),

sku_description_matches as (

    {{ gpu_sku_description_matches('sku_description_candidates', ['x_load_id', 'x_source_file', 'x_source_row'], 'ChargeDescription') }}

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

),

pricing_unit_aliases as (

    select lower(source_unit) as unit_key, focus_unit
    from {{ ref('pricing_unit_aliases') }}

),

-- Providers spell units their own way (`Hrs`, `hour`, `GB-Mo`, `IOPS-Mo`, `1 GB/Month`): PricingUnit and
-- ConsumedUnit are put in FOCUS Unit Format once here (macro focus_unit), the delivered spellings kept in
-- x_delivered_*_unit, and the GPU-hour rule below reads the normalised unit.
units_normalised as (

    select
        gpu_resolved.*,
        {{ focus_unit('gpu_resolved.PricingUnit', 'pricing_units.focus_unit') }} as focus_pricing_unit,
        {{ focus_unit('gpu_resolved.ConsumedUnit', 'consumed_units.focus_unit') }} as focus_consumed_unit
    from gpu_resolved
    left join pricing_unit_aliases as pricing_units
        on lower(trim(gpu_resolved.PricingUnit)) = pricing_units.unit_key
    left join pricing_unit_aliases as consumed_units
        on lower(trim(gpu_resolved.ConsumedUnit)) = consumed_units.unit_key

),

final as (

    select
        {% for column, sql_type in focus_column_list -%}
        {{ normalised_units.get(column, column) }}{{ ',' if not loop.last }}
        {% endfor -%},
        x_source,
        x_instance_type,
        x_gpu_model,
        x_gpu_count,
        case
            -- not a GPU line: GPU-hours do not apply
            when x_gpu_model is null and coalesce(x_gpu_count, 0) <= 0 then null
            -- GPU time actually used: hourly usage, except commitment hours that went unused; a usage reversal
            -- (negative PricingQuantity) gives the negative GPU-hours it cancels, which the marts net on its charge day
            when ChargeCategory = 'Usage'
                and focus_pricing_unit = 'Hours'
                and coalesce(CommitmentDiscountStatus, '') <> 'Unused'
                then {{ decimal_product(['coalesce(PricingQuantity, 0)', 'x_gpu_count']) }}
            -- GPU line with no GPU time: purchases, taxes, credits, unused commitments, non-hourly units
            else cast(0 as decimal(38, 12))
        end as x_gpu_hours,
        {{ first_tag_value('Tags', var('team_tag_keys')) }} as x_team,
        {{ first_tag_value('Tags', var('project_tag_keys')) }} as x_project,
        x_load_id,
        x_source_file,
        x_source_row,
        x_extensions,
        PricingUnit as x_delivered_pricing_unit,
        ConsumedUnit as x_delivered_consumed_unit,
        {{ this_run_started_at() }} as x_built_at
    from units_normalised

)

select * from final
