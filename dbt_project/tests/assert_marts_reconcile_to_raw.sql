{#-
    Fails the run when any comparison in audit.reconciliation (raw = canonical cost lines per source,
    canonical = fct_cost_daily, canonical GPU lines = fct_gpu_spend_daily, per billing period and
    currency) or in audit.reconciliation_invoices (raw = canonical per invoice, FOCUS and CUR) does
    not reconcile exactly. The comparisons themselves live in those models, so finance can read the
    same numbers the test judges.
-#}

select
    check_name,
    x_source,
    cast(billing_period_start as {{ dbt.type_string() }}) as reconciled_key,
    billing_currency,
    billed_cost_difference,
    effective_cost_difference
from {{ ref('reconciliation') }}
where not reconciled

union all

select
    'raw vs int_billing__cost_lines per invoice' as check_name,
    x_source,
    invoice_id as reconciled_key,
    billing_currency,
    billed_cost_difference,
    cast(null as decimal(38, 12)) as effective_cost_difference
from {{ ref('reconciliation_invoices') }}
where not reconciled
