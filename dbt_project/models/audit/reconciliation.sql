{#-
    Money must not be lost or invented between the loaded files and the marts. One row per
    comparison, billing period and billing currency, with line counts, the sums of BilledCost and
    EffectiveCost on both sides, their differences and whether they reconcile (exactly: the amounts
    are sums of the same DECIMAL(38, 12) values, so any difference at all, even under a cent, is a
    lost, doubled or altered line):
      each raw billing table = the canonical cost lines from that source,
      canonical cost lines (all sources) = fct_cost_daily,
      canonical GPU cost lines = fct_gpu_spend_daily.
    The marts carry no source column, so they are compared with the canonical lines of all sources
    together; each source is pinned down between raw and canonical.

    Each billing source states its raw totals in its own columns: the billing period start (as
    the canonical BillingPeriodStart), the currency, the line count, and the billed and effective
    cost. Where a source's canonical lines are not one per raw row (Azure keeps amortized rows plus
    actual purchases), its line count is `none` and only the money is compared; where raw holds
    no effective cost (it is computed downstream), effective is `none`. Those comparisons are left
    out by design and flagged in line_count_compared / effective_cost_compared.

    A view in the `audit` schema, beside the loader's audit tables: it reads dbt models, so dbt
    builds it after them, documents it, and assert_marts_reconcile_to_raw fails the run on any row
    that does not reconcile.
-#}

{%- set raw_sources = [
    {
        'x_source': 'focus',
        'relation': source('raw', 'focus_cost_and_usage'),
        'period': 'BillingPeriodStart',
        'currency': 'BillingCurrency',
        'line_count': 'count(*)',
        'billed': 'BilledCost',
        'effective': 'EffectiveCost',
    },
    {
        'x_source': 'oci_cost',
        'relation': source('raw', 'oci_cost_report'),
        'period': 'billing_period_start',
        'currency': 'cost_currency_code',
        'line_count': 'count(*)',
        'billed': 'cost_my_cost',
        'effective': 'cost_my_cost',
    },
    {
        'x_source': 'aws_cur',
        'relation': source('raw', 'aws_cur_line_items'),
        'period': 'bill_billing_period_start_date',
        'currency': 'line_item_currency_code',
        'line_count': 'count(*)',
        'billed': 'coalesce(line_item_net_unblended_cost, line_item_unblended_cost)',
        'effective': none,
    },
    {
        'x_source': 'gpu_cloud_usage',
        'relation': source('raw', 'gpu_cloud_usage'),
        'period': 'billing_period_start',
        'currency': 'currency',
        'line_count': 'count(*)',
        'billed': 'cost',
        'effective': 'cost',
    },
    {
        'x_source': 'azure_amortized',
        'relation': source('raw', 'azure_amortized_cost'),
        'period': '_billing_period_start',
        'currency': 'BillingCurrencyCode',
        'line_count': 'count(*)',
        'billed': "case when lower(replace(trim(PricingModel), ' ', '')) in ('reservation', 'savingsplan')"
            ~ " and lower(trim(ChargeType)) in ('usage', 'unusedreservation', 'unusedsavingsplan')"
            ~ " then 0 else CostInBillingCurrency end",
        'effective': 'CostInBillingCurrency',
    },
    {
        'x_source': 'azure_actual',
        'relation': source('raw', 'azure_actual_cost'),
        'period': '_billing_period_start',
        'currency': 'BillingCurrencyCode',
        'line_count': "sum(case when (lower(trim(ChargeType)) in ('purchase', 'refund')"
            ~ " and lower(replace(trim(PricingModel), ' ', '')) in ('reservation', 'savingsplan'))"
            ~ " or (_billing_account_id, _billing_period_start) not in (select _billing_account_id,"
            ~ " _billing_period_start from " ~ source('raw', 'azure_amortized_cost') ~ ") then 1 else 0 end)",
        'billed': "case when (lower(trim(ChargeType)) in ('purchase', 'refund')"
            ~ " and lower(replace(trim(PricingModel), ' ', '')) in ('reservation', 'savingsplan'))"
            ~ " or (_billing_account_id, _billing_period_start) not in (select _billing_account_id,"
            ~ " _billing_period_start from " ~ source('raw', 'azure_amortized_cost') ~ ")"
            ~ " then CostInBillingCurrency else 0 end",
        'effective': "case when lower(trim(ChargeType)) in ('purchase', 'refund')"
            ~ " and lower(replace(trim(PricingModel), ' ', '')) in ('reservation', 'savingsplan') then 0"
            ~ " when (_billing_account_id, _billing_period_start) not in (select _billing_account_id,"
            ~ " _billing_period_start from " ~ source('raw', 'azure_amortized_cost') ~ ")"
            ~ " then CostInBillingCurrency else 0 end",
    },
    {
        'x_source': 'gcp_billing',
        'relation': source('raw', 'gcp_billing_export'),
        'period': 'billing_period_start',
        'currency': 'currency',
        'line_count': 'count(*)',
        'billed': 'cost + credits_amount',
        'effective': 'cost + credits_amount',
    },
] -%}

{#- One totals query per side of a comparison: relation, period and currency columns, line count, filter. -#}
{%- set canonical = ('BillingPeriodStart', 'BillingCurrency', 'count(*)', 'BilledCost', 'EffectiveCost') -%}
{%- set mart = ('billing_period_start', 'billing_currency', 'sum(cost_line_count)', 'billed_cost', 'effective_cost') -%}
{%- set totals = [] -%}
{%- set comparisons = [] -%}
{%- for raw in raw_sources -%}
    {%- set raw_columns = (raw.period, raw.currency, raw.line_count or 'null', raw.billed, raw.effective or 'null') -%}
    {%- do totals.append(('raw_' ~ raw.x_source, raw.relation, raw_columns, 'true')) -%}
    {%- do totals.append(('cost_lines_' ~ raw.x_source, ref('int_billing__cost_lines'), canonical, "x_source = '" ~ raw.x_source ~ "'")) -%}
    {%- do comparisons.append((
        'raw ' ~ raw.x_source ~ ' vs int_billing__cost_lines (' ~ raw.x_source ~ ')', raw.x_source,
        'raw_' ~ raw.x_source, 'cost_lines_' ~ raw.x_source, raw.line_count is not none, raw.effective is not none
    )) -%}
{%- endfor -%}
{%- do totals.extend([
    ('cost_lines_all', ref('int_billing__cost_lines'), canonical, 'true'),
    ('cost_lines_gpu', ref('int_billing__cost_lines'), canonical, 'x_gpu_model is not null'),
    ('cost_daily', ref('fct_cost_daily'), mart, 'true'),
    ('gpu_spend_daily', ref('fct_gpu_spend_daily'), mart, 'true'),
]) -%}
{%- do comparisons.extend([
    ('int_billing__cost_lines vs fct_cost_daily', 'all sources', 'cost_lines_all', 'cost_daily', true, true),
    ('int_billing__cost_lines (gpu) vs fct_gpu_spend_daily', 'all sources', 'cost_lines_gpu', 'gpu_spend_daily', true, true),
]) -%}

with

{% for name, relation, columns, condition in totals -%}
{%- set period, currency, line_count, billed, effective = columns -%}
{{ name }} as (

    select
        {{ period }} as billing_period_start,
        {{ currency }} as billing_currency,
        {{ line_count }} as line_count,
        sum({{ billed }}) as billed_cost,
        sum({{ effective }}) as effective_cost
    from {{ relation }}
    where {{ condition }}
    group by {{ period }}, {{ currency }}

),

{% endfor -%}

compared as (

    {% for check, x_source, expected, actual, compare_lines, compare_effective in comparisons -%}
    select
        '{{ check }}' as check_name,
        '{{ x_source }}' as x_source,
        '{{ expected }}' as expected_side,
        '{{ actual }}' as actual_side,
        coalesce(expected.billing_period_start, actual.billing_period_start) as billing_period_start,
        coalesce(expected.billing_currency, actual.billing_currency) as billing_currency,
        {{ 'true' if compare_lines else 'false' }} as line_count_compared,
        {{ 'true' if compare_effective else 'false' }} as effective_cost_compared,
        {% if compare_lines -%}
        coalesce(expected.line_count, 0) as expected_line_count,
        coalesce(actual.line_count, 0) as actual_line_count,
        {%- else -%}
        cast(null as bigint) as expected_line_count,
        cast(null as bigint) as actual_line_count,
        {%- endif %}
        coalesce(expected.billed_cost, 0) as expected_billed_cost,
        coalesce(actual.billed_cost, 0) as actual_billed_cost,
        {% if compare_effective -%}
        coalesce(expected.effective_cost, 0) as expected_effective_cost,
        coalesce(actual.effective_cost, 0) as actual_effective_cost
        {%- else -%}
        cast(null as decimal(38, 12)) as expected_effective_cost,
        cast(null as decimal(38, 12)) as actual_effective_cost
        {%- endif %}
    from {{ expected }} as expected
    full outer join {{ actual }} as actual
        on expected.billing_period_start = actual.billing_period_start
        and expected.billing_currency = actual.billing_currency
    {% if not loop.last %}
    union all
    {% endif -%}
    {%- endfor %}

),

final as (

    select
        check_name,
        x_source,
        expected_side,
        actual_side,
        cast(billing_period_start as timestamp) as billing_period_start,
        billing_currency,
        line_count_compared,
        effective_cost_compared,
        cast(expected_line_count as bigint) as expected_line_count,
        cast(actual_line_count as bigint) as actual_line_count,
        cast(expected_billed_cost as decimal(38, 12)) as expected_billed_cost,
        cast(actual_billed_cost as decimal(38, 12)) as actual_billed_cost,
        cast(actual_billed_cost - expected_billed_cost as decimal(38, 12)) as billed_cost_difference,
        cast(expected_effective_cost as decimal(38, 12)) as expected_effective_cost,
        cast(actual_effective_cost as decimal(38, 12)) as actual_effective_cost,
        cast(actual_effective_cost - expected_effective_cost as decimal(38, 12)) as effective_cost_difference,
        coalesce(
            (not line_count_compared or expected_line_count = actual_line_count)
            and expected_billed_cost = actual_billed_cost
            and (not effective_cost_compared or expected_effective_cost = actual_effective_cost),
            false
        ) as reconciled
    from compared

)

select * from final
