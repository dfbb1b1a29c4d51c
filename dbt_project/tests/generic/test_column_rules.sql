{#-
    Every plain column rule of one model (or seed, or source table) in one query over one scan: not_null,
    non_negative, accepted_values, named `expressions` that no row may contradict (as in dbt_utils'
    expression_is_true, a row breaks one where it is false, not where it is null) and named `true_on_every_row`
    conditions that every row must meet (a row breaks one where it is false or null). One test per model instead of
    one per column and rule keeps a build's test count near its model count: each test is a query, and a node that dbt compiles and runs and Dagster records as
    an asset check, so on small daily deliveries the per-node cost, not the scan, is what tests cost.

    It returns one row per broken rule, naming the rule and its column (null for a named rule), with the number of
    rows that break it (`dbt test --store-failures` keeps them) and the condition true on exactly those rows
    (`failing_when`): write-audit-publish (pipelines/lib/transform/model_audit.py) finds a withheld delivery's first
    failing row with it. As in dbt's single-column tests, nulls pass non_negative and
    accepted_values; accepted values are compared as text literals (like accepted_values' default), quoted by
    `dbt.escape_single_quotes`, which knows each engine's escaping (Spark reads `''` as two adjacent literals).
    A rule with a `where` of its own stays a test of its own; a model's warn-severity rules are a second column_rules
    test, `<model>_warn_rules`, with `severity: warn`.

    Counted with `count(case when … then 1 end)`, not `sum(case when … then 1 else 0 end)`: DuckDB 2.0.1 can decide
    from statistics that such a sum is always 0 when the model left-joins an empty filtered relation (the FOCUS
    export's learnt defaults, before any are learnt) and drop every row of `where rule_n > 0`, passing a broken model.
-#}
{% test column_rules(model, not_null=[], non_negative=[], accepted_values={}, expressions={}, true_on_every_row={}) %}

{#- Each rule: (name, condition a breaking row meets, column or none) -#}
{%- set rules = [] -%}
{%- for column in not_null -%}
    {%- do rules.append((column ~ ' is null', column ~ ' is null', column)) -%}
{%- endfor -%}
{%- for column in non_negative -%}
    {%- do rules.append((column ~ ' is negative', column ~ ' < 0', column)) -%}
{%- endfor -%}
{%- for column, values in accepted_values.items() -%}
    {%- set literals = [] -%}
    {%- for value in values -%}
        {%- do literals.append("'" ~ dbt.escape_single_quotes(value | string) ~ "'") -%}
    {%- endfor -%}
    {%- do rules.append((column ~ ' is not an accepted value', column ~ ' not in (' ~ literals | join(', ') ~ ')', column)) -%}
{%- endfor -%}
{%- for name, expression in expressions.items() -%}
    {%- do rules.append((name, 'not (' ~ expression ~ ')', none)) -%}
{%- endfor -%}
{%- for name, condition in true_on_every_row.items() -%}
    {%- do rules.append((name, 'not coalesce(' ~ condition ~ ', false)', none)) -%}
{%- endfor -%}
{%- if not rules -%}
    {{ exceptions.raise_compiler_error("column_rules on " ~ model ~ " names no rule") }}
{%- endif %}

with rule_counts as (

    select
    {%- for rule in rules %}
        count(case when {{ rule[1] }} then 1 end) as rule_{{ loop.index }}{{ "," if not loop.last }}
    {%- endfor %}
    from {{ model }}

)

{% for rule in rules -%}
select
    '{{ dbt.escape_single_quotes(rule[0]) }}' as broken_rule,
    {% if rule[2] %}'{{ dbt.escape_single_quotes(rule[2]) }}'{% else %}cast(null as {{ dbt.type_string() }}){% endif %} as column_name,
    rule_{{ loop.index }} as failing_rows,
    '{{ dbt.escape_single_quotes(rule[1]) }}' as failing_when
from rule_counts
where rule_{{ loop.index }} > 0
{% if not loop.last %}union all
{% endif -%}
{% endfor %}

{% endtest %}
