{#-
    Every plain column rule of one model (or seed, or source table) in one query over one scan: not_null,
    non_negative and accepted_values. One test per model instead of one per column and rule keeps a build's test
    count near its model count: each test is a query, and a node that dbt compiles and runs and Dagster records as
    an asset check, so on small daily deliveries the per-node cost, not the scan, is what tests cost.

    It returns one row per broken rule, naming the column and the rule, with the number of rows that break it
    (`dbt test --store-failures` keeps them). As in dbt's single-column tests, nulls pass non_negative and
    accepted_values; accepted values are compared as text literals (like accepted_values' default), quoted by
    `dbt.escape_single_quotes`, which knows each engine's escaping (Spark reads `''` as two adjacent literals).
    Rules with their own config (a `where`, a severity) stay single-column tests.
-#}
{% test column_rules(model, not_null=[], non_negative=[], accepted_values={}) %}

{%- set rules = [] -%}
{%- for column in not_null -%}
    {%- do rules.append((column ~ ' is null', column ~ ' is null')) -%}
{%- endfor -%}
{%- for column in non_negative -%}
    {%- do rules.append((column ~ ' is negative', column ~ ' < 0')) -%}
{%- endfor -%}
{%- for column, values in accepted_values.items() -%}
    {%- set literals = [] -%}
    {%- for value in values -%}
        {%- do literals.append("'" ~ dbt.escape_single_quotes(value | string) ~ "'") -%}
    {%- endfor -%}
    {%- do rules.append((column ~ ' is not an accepted value', column ~ ' not in (' ~ literals | join(', ') ~ ')')) -%}
{%- endfor -%}
{%- if not rules -%}
    {{ exceptions.raise_compiler_error("column_rules on " ~ model ~ " names no rule") }}
{%- endif %}

with rule_counts as (

    select
    {%- for rule in rules %}
        sum(case when {{ rule[1] }} then 1 else 0 end) as rule_{{ loop.index }}{{ "," if not loop.last }}
    {%- endfor %}
    from {{ model }}

)

{% for rule in rules -%}
select
    '{{ rule[0] }}' as broken_rule,
    rule_{{ loop.index }} as failing_rows
from rule_counts
where rule_{{ loop.index }} > 0
{% if not loop.last %}union all
{% endif -%}
{% endfor %}

{% endtest %}
