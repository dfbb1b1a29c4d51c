{#-
    The bill per invoice, as finance reconciles it against the provider's invoice: for the sources
    whose lines carry an invoice id (FOCUS InvoiceId, AWS CUR bill/InvoiceId), the line count and
    BilledCost per invoice and currency in raw and in the canonical cost lines, with the difference.
    Lines without an invoice id yet (the open month) are covered by audit.reconciliation per billing
    period. Exact comparison, like audit.reconciliation; assert_marts_reconcile_to_raw fails the run
    on any invoice that does not reconcile.
-#}

{%- set invoiced_sources = [
    {
        'x_source': 'focus',
        'relation': source('raw', 'focus_cost_and_usage'),
        'invoice_id': 'InvoiceId',
        'currency': 'BillingCurrency',
        'billed': 'BilledCost',
    },
    {
        'x_source': 'aws_cur',
        'relation': source('raw', 'aws_cur_line_items'),
        'invoice_id': 'bill_invoice_id',
        'currency': 'line_item_currency_code',
        'billed': 'coalesce(line_item_net_unblended_cost, line_item_unblended_cost)',
    },
] -%}

with

{% for raw in invoiced_sources -%}
raw_{{ raw.x_source }} as (

    select
        '{{ raw.x_source }}' as x_source,
        {{ raw.invoice_id }} as invoice_id,
        {{ raw.currency }} as billing_currency,
        count(*) as line_count,
        sum({{ raw.billed }}) as billed_cost
    from {{ raw.relation }}
    where {{ raw.invoice_id }} is not null
    group by {{ raw.invoice_id }}, {{ raw.currency }}

),

{% endfor -%}

raw_invoices as (

    {% for raw in invoiced_sources -%}
    select * from raw_{{ raw.x_source }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

canonical_invoices as (

    select
        x_source,
        InvoiceId as invoice_id,
        BillingCurrency as billing_currency,
        count(*) as line_count,
        sum(BilledCost) as billed_cost
    from {{ ref('int_billing__cost_lines') }}
    where InvoiceId is not null
        and x_source in ('{{ invoiced_sources | map(attribute="x_source") | join("', '") }}')
    group by x_source, InvoiceId, BillingCurrency

),

compared as (

    select
        coalesce(raw.x_source, canonical.x_source) as x_source,
        coalesce(raw.invoice_id, canonical.invoice_id) as invoice_id,
        coalesce(raw.billing_currency, canonical.billing_currency) as billing_currency,
        cast(coalesce(raw.line_count, 0) as bigint) as raw_line_count,
        cast(coalesce(canonical.line_count, 0) as bigint) as canonical_line_count,
        cast(coalesce(raw.billed_cost, 0) as decimal(38, 12)) as raw_billed_cost,
        cast(coalesce(canonical.billed_cost, 0) as decimal(38, 12)) as canonical_billed_cost
    from raw_invoices as raw
    full outer join canonical_invoices as canonical
        on raw.x_source = canonical.x_source
        and raw.invoice_id = canonical.invoice_id
        and raw.billing_currency = canonical.billing_currency

)

select
    x_source,
    invoice_id,
    billing_currency,
    raw_line_count,
    canonical_line_count,
    raw_billed_cost,
    canonical_billed_cost,
    cast(canonical_billed_cost - raw_billed_cost as decimal(38, 12)) as billed_cost_difference,
    raw_line_count = canonical_line_count and raw_billed_cost = canonical_billed_cost as reconciled
from compared
