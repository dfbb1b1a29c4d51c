{#-
    The rules that read an AI API bill line (int_ai_api__token_lines): in one place, so that a new meter spelling
    is one edit here. Each macro is standard SQL over an expression; the words are matched in the line's text
    lower-cased with `-`, `_` and `:` read as spaces and padded with a space each side (ai_api_padded_text), so
    `gpt-4o-0806-Inp-glbl Tokens`, `gpt 4o 0806 cached Inp regnl Tokens` and `USE1-NovaPro-input-tokens` read alike.
    docs/ai-workloads.md ("AI API spend") lists the rules with the spellings they were written from.
-#}

{#- The line's text as the rules read it: ` gpt 4o 0806 inp glbl tokens `. -#}
{% macro ai_api_padded_text(text) -%}
    {{ dbt.concat(["' '", "replace(replace(replace(lower(coalesce(" ~ text ~ ", '')), '-', ' '), '_', ' '), ':', ' ')", "' '"]) }}
{%- endmacro %}

{#-
    The token type a line's text names, first match wins: cache reads before inputs (`cached Inp`,
    `cache-read-input-token-count`, `CacheReadInputTokenCount`), cache writes, reasoning, outputs (`outpt`, `output`,
    `OutputTokenCount`), inputs (`Inp`, `input`, `InputTokenCount`); null when the text names none.
-#}
{% macro ai_api_token_type(padded) -%}
    case
        when {{ padded }} like '%cache%read%' or {{ padded }} like '%cached%' or {{ padded }} like '% cchd %'
            or {{ padded }} like '%cache hit%'
            then 'cache_read'
        when {{ padded }} like '%cache%write%' or {{ padded }} like '%cache creation%' then 'cache_write'
        when {{ padded }} like '%reasoning%' or {{ padded }} like '%thinking%' then 'reasoning'
        when {{ padded }} like '%outp%' or {{ padded }} like '% out %' then 'output'
        when {{ padded }} like '%input%' or {{ padded }} like '% inp %' then 'input'
    end
{%- endmacro %}

{#-
    The deployment or processing type a line's text names: Azure's `glbl` / `regnl` / data zone deployments, and
    batch (Bedrock's `-batch` usage types, Azure's batch meters), combined as `global_batch` where both are named;
    null when the bill does not say.
-#}
{% macro ai_api_deployment_type(padded) -%}
    {%- set place -%}
        case
            when {{ padded }} like '% glbl %' or {{ padded }} like '% global %' then 'global'
            when {{ padded }} like '% regnl %' or {{ padded }} like '% regional %' then 'regional'
            when {{ padded }} like '% dzone %' or {{ padded }} like '% data zone %' or {{ padded }} like '% datazone %'
                then 'data_zone'
        end
    {%- endset -%}
    case
        when {{ padded }} like '% batch %'
            then {{ dbt.concat(["coalesce(" ~ dbt.concat([place, "'_'"]) ~ ", '')", "'batch'"]) }}
        else {{ place }}
    end
{%- endmacro %}

{#-
    The tokens one unit of a line's quantity stands for, as its unit says: `1K`, `1K tokens`, `1000 Units`
    (pricing_unit_aliases' spelling of Azure's `1K`), `thousand` -> 1000; `1M`, `1M tokens`, `1000000 Units`,
    `million` -> 1000000; anything else -> 1. `1 Month` is not a million.
-#}
{% macro ai_api_unit_block(unit) -%}
    {%- set unit_key = "lower(trim(coalesce(" ~ unit ~ ", '')))" -%}
    case
        when {{ regexp_extract_group(unit_key, '^(1 ?k|1,?000|thousand)( .*)?$', 1) }} is not null then 1000
        when {{ regexp_extract_group(unit_key, '^(1 ?m|1,?000,?000|million)( .*)?$', 1) }} is not null then 1000000
        else 1
    end
{%- endmacro %}

{#- The block a meter's own name states (`GPT 5 outpt Glbl 1M Tokens`), or null. -#}
{% macro ai_api_text_block(padded) -%}
    case
        when {{ padded }} like '% 1k tokens %' then 1000
        when {{ padded }} like '% 1m tokens %' then 1000000
    end
{%- endmacro %}

{#-
    A model's spelling reduced to its letters and digits, lower case (`gpt-4o-0806`, `gpt 4o 0806` -> `gpt4o0806`;
    `Nova Pro`, `NovaPro` -> `novapro`): the key seed ai_api_models is looked up by.
-#}
{% macro ai_api_model_key(model) -%}
    {%- set ns = namespace(expression="lower(trim(" ~ model ~ "))") -%}
    {%- for character in [' ', '-', '_', '.', ':', '(', ')', '/'] -%}
        {%- set ns.expression = "replace(" ~ ns.expression ~ ", '" ~ character ~ "', '')" -%}
    {%- endfor -%}
    {{ ns.expression }}
{%- endmacro %}
