{#-
    GPU budgets in force: the seed gpu_budgets, where the dbt var `gpu_budget_overrides` replaces (same month, scope,
    name and currency) or adds rows for one run without editing the seed, as buy_vs_rent_overrides does for the
    buy-vs-rent assumptions, e.g.
    dbt build --select fct_gpu_spend_forecast --vars '{gpu_budget_overrides: [{month: 2026-10-01, scope: team, name: platform, currency: USD, amount: 9000}]}'
-#}

{%- set overrides = var('gpu_budget_overrides', []) or [] %}
{%- set fields = ['month', 'scope', 'name', 'currency', 'amount'] %}
{%- for row in overrides %}
    {%- for field in fields %}
        {%- if row[field] is not defined or row[field] is none %}
            {{ exceptions.raise_compiler_error("dbt var gpu_budget_overrides: row " ~ loop.index ~ " lacks '" ~ field ~ "'; each row needs " ~ fields | join(', ')) }}
        {%- endif %}
    {%- endfor %}
    {%- if row['scope'] not in ['team', 'provider'] %}
        {{ exceptions.raise_compiler_error("dbt var gpu_budget_overrides: scope must be team or provider, got '" ~ row['scope'] ~ "'") }}
    {%- endif %}
{%- endfor %}

with

seed as (

    select
        cast(budget_month as date) as budget_month,
        scope,
        scope_name,
        billing_currency,
        cast(amount as decimal(38, 12)) as amount,
        false as is_overridden
    from {{ ref('gpu_budgets') }}

){% if overrides %},

overrides as (

    {% for row in overrides -%}
    select
        cast('{{ row["month"] | string | replace("'", "''") }}' as date) as budget_month,
        '{{ row["scope"] }}' as scope,
        '{{ row["name"] | string | replace("'", "''") }}' as scope_name,
        '{{ row["currency"] | string | replace("'", "''") }}' as billing_currency,
        cast('{{ row["amount"] | string | replace("'", "''") }}' as decimal(38, 12)) as amount,
        true as is_overridden
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

){% endif %}

select seed.*
from seed
{%- if overrides %}
where not exists (
    select 1 from overrides
    where overrides.budget_month = seed.budget_month
        and overrides.scope = seed.scope
        and overrides.scope_name = seed.scope_name
        and overrides.billing_currency = seed.billing_currency
)

union all

select * from overrides
{%- endif %}
