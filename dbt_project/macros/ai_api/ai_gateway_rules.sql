{#-
    How a gateway names a model, read into the ids the bills are normalised to (int_ai_api__gateway_tokens_daily).
    docs/ai-workloads.md ("Gateway usage: API spend by team") lists the spellings they were written from.
-#}

{#-
    The AI API family of a gateway request, from LiteLLM's custom_llm_provider or else the model's `<provider>/`
    prefix: `bedrock…` -> bedrock, `azure…` -> azure_openai, `vertex_ai…` and `gemini` -> vertex; null for any other
    provider (the bills of OpenAI, Anthropic and others come as FOCUS `tokens_unit` lines, matched by model alone).
-#}
{% macro ai_gateway_api_family(provider, model) -%}
    {%- set named = "lower(trim(coalesce(" ~ provider ~ ", " ~ regexp_extract_group("lower(trim(" ~ model ~ "))", '^([a-z_]+)/', 1) ~ ")))" -%}
    case
        when {{ named }} like 'bedrock%' then 'bedrock'
        when {{ named }} like 'azure%' then 'azure_openai'
        when {{ named }} like 'vertex%' or {{ named }} = 'gemini' then 'vertex'
    end
{%- endmacro %}

{#-
    A gateway's model string as a model id: lower case, the route before the last `/` dropped (`bedrock/`,
    `bedrock/converse/`, `azure/`), then Bedrock's cross-region inference prefix (`us.`, `eu.`, `apac.`, `global.`,
    `jp.`, `au.`, `ca.`) and its date and version suffixes (`-20250514`, `-v1:0`) removed:
    `bedrock/amazon.nova-pro-v1:0` -> `amazon.nova-pro`,
    `bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0` -> `anthropic.claude-sonnet-4`,
    `azure/gpt-4o` -> `gpt-4o` (an Azure deployment's name: seed ai_gateway_models says which model it runs),
    `gpt-4o-2024-08-06` stays as it is (OpenAI's dated ids are the bills' ids).
-#}
{% macro ai_gateway_model_id(model) -%}
    {%- set last_segment = regexp_extract_group("lower(trim(" ~ model ~ "))", '([^/]+)$', 1) -%}
    coalesce(
        {{ regexp_extract_group(
            last_segment,
            '^(?:(?:us|eu|apac|global|jp|au|ca|us-gov)[.])?(.+?)(?:-[0-9]{8})?(?:-v[0-9]+(?::[0-9]+)?)?$',
            1,
        ) }},
        {{ last_segment }}
    )
{%- endmacro %}
