{#-
    AI API spend as token lines: one row per usage cost line of an AI API (Amazon Bedrock, Azure OpenAI / Foundry
    Models, Vertex AI's generative models, or any FOCUS row whose ConsumedUnit is `Tokens`), read from the canonical
    cost lines, with the model, the token type and the exact token count the line bills.

    Which lines (api_family): Bedrock by its product codes (`AmazonBedrock…`, CUR's x_ProductCode or AWS FOCUS's
    x_ServiceCode); Azure OpenAI by meter category (`Azure OpenAI`, `Foundry Models`, or `Cognitive Services` with an
    OpenAI sub-category); Vertex AI / Gemini API lines whose SKU names tokens, characters or Gemini (the rest of Vertex
    AI is training and serving on machines, not API use); FOCUS rows in `Tokens`. Only ChargeCategory Usage: credits,
    taxes and purchases are not token use. A line of these services that the rules cannot read (provisioned
    throughput, fine-tuning hosting, a new meter spelling) is kept with token_type `unknown` and no tokens, so the
    spend reconciles whatever the rules know.

    The rules (macros/ai_api/ai_api_token_rules.sql): token type and deployment type from the line's usage type or
    meter; the model from what the bill states (FOCUS SkuPriceDetails ModelId, CUR's product attribute `model`), else
    from the usage type (`USE1-NovaPro-input-tokens` -> NovaPro) or meter (`gpt-4o-0806-Inp-glbl Tokens` -> gpt-4o-0806),
    else for AWS Marketplace lines the product's name; then the normalised id from seed ai_api_models.

    Tokens. A FOCUS row in `Tokens` states them in ConsumedQuantity. Otherwise the quantity is PricingQuantity and
    its unit (`1K`, `1M`, CUR's pricing_unit, or the meter's own `1M Tokens`) gives a block size; whether the
    quantity counts blocks or single tokens is read from the rate: the line's cost over quantity × unit price is 1
    when the quantity counts blocks and 1/block when it counts tokens (threshold 1/√block, so discounts up to 96% of
    a 1K price do not mislead it). Without a usable rate the quantity is taken to count blocks, as FOCUS defines
    PricingQuantity. token_scale_rule records which rule decided.
-#}

{%- set seed_families = ['bedrock', 'azure_openai', 'vertex'] -%}

with

cost_lines as (

    select
        *,
        coalesce(
            {{ json_extract_string('x_extensions', 'x_ProductCode') }},
            {{ json_extract_string('x_extensions', 'x_ServiceCode') }}
        ) as product_code,
        coalesce(
            {{ json_extract_string('x_extensions', 'MeterCategory') }},
            {{ json_extract_string('x_extensions', 'x_SkuMeterCategory') }}
        ) as meter_category,
        coalesce(
            {{ json_extract_string('x_extensions', 'MeterSubCategory') }},
            {{ json_extract_string('x_extensions', 'x_SkuMeterSubcategory') }}
        ) as meter_subcategory
    from {{ ref('int_billing__cost_lines') }}
    where ChargeCategory = 'Usage'
        -- Only lines the family rules below can match, found before any JSON is parsed: every product code and
        -- meter category they name is text inside x_extensions (reading three keys of every cost line took 10 s
        -- of a 10M-line daily build; this takes a fraction of one).
        and (
            ServiceName in ('Azure OpenAI', 'Foundry Models', 'Vertex AI', 'Gemini API')
            or lower(trim(ConsumedUnit)) = 'tokens'
            or x_extensions like '%AmazonBedrock%'
            or x_extensions like '%Azure OpenAI%'
            or x_extensions like '%Foundry Models%'
            or x_extensions like '%Cognitive Services%'
        )

),

families as (

    select
        *,
        case
            when product_code like 'AmazonBedrock%' then 'bedrock'
            when meter_category in ('Azure OpenAI', 'Foundry Models')
                or ServiceName in ('Azure OpenAI', 'Foundry Models')
                or (meter_category = 'Cognitive Services' and lower(meter_subcategory) like '%openai%')
                then 'azure_openai'
            when ServiceName in ('Vertex AI', 'Gemini API')
                and (
                    lower(ChargeDescription) like '%token%'
                    or lower(ChargeDescription) like '%character%'
                    or lower(ChargeDescription) like '%gemini%'
                )
                then 'vertex'
            when lower(trim(ConsumedUnit)) = 'tokens' then 'tokens_unit'
        end as api_family
    from cost_lines

),

ai_lines as (

    select
        families.*,
        -- what the rules read: the usage type for Bedrock, the meter for Azure, else the SKU meter or description
        case api_family
            when 'bedrock' then coalesce({{ json_extract_string('x_extensions', 'x_UsageType') }}, SkuMeter)
            when 'azure_openai' then coalesce(
                SkuMeter,
                {{ json_extract_string('x_extensions', 'MeterName') }},
                {{ json_extract_string('x_extensions', 'x_SkuMeterName') }}
            )
            else coalesce(SkuMeter, ChargeDescription)
        end as billed_item,
        -- what the bill itself states: FOCUS's model and token type properties (x_ until ratified), CUR's product model
        coalesce(
            {{ json_extract_string('SkuPriceDetails', 'ModelId') }},
            {{ json_extract_string('SkuPriceDetails', 'x_ModelId') }},
            {{ json_extract_string('x_extensions', 'x_Model') }}
        ) as stated_model,
        lower(coalesce(
            {{ json_extract_string('SkuPriceDetails', 'TokenType') }},
            {{ json_extract_string('SkuPriceDetails', 'x_TokenType') }}
        )) as stated_token_type,
        coalesce(
            {{ json_extract_string('SkuPriceDetails', 'ModelDeveloper') }},
            {{ json_extract_string('SkuPriceDetails', 'x_ModelDeveloper') }}
        ) as stated_model_developer
    from families
    where api_family is not null

),

parsed as (

    select
        ai_lines.*,
        {{ ai_api_padded_text('billed_item') }} as padded_item,
        coalesce(
            nullif(trim(stated_model), ''),
            case api_family
                when 'bedrock' then coalesce(
                    {{ regexp_extract_group(
                        'billed_item',
                        '^(?:[A-Z]{2,4}[0-9]?-)?(.+?)-(?:mantle-)?(?:cache-read-|cache-write-)?(?:input|output)-token',
                        1,
                    ) }},
                    -- AWS Marketplace (`USE1-MP:USE1_InputTokenCount-Units`): the model is the product
                    case
                        when billed_item like '%MP:%'
                            then {{ regexp_extract_group('trim(ServiceName)', '^(.+?)( [(]Amazon Bedrock Edition[)])?$', 1) }}
                    end
                )
                else {{ regexp_extract_group(
                    'trim(billed_item)',
                    '(?i)^(.+?)[ _-]+(cached|cchd|inp|input|outp|outpt|output|cache|batch|reasoning|text)([ _-]|$)',
                    1,
                ) }}
            end
        ) as billed_model
    from ai_lines

),

typed as (

    select
        parsed.*,
        case
            when stated_token_type in ('input', 'output', 'reasoning') then stated_token_type
            when replace(replace(stated_token_type, ' ', '_'), '-', '_') in ('cache_read', 'cached_input')
                then 'cache_read'
            when replace(replace(stated_token_type, ' ', '_'), '-', '_') = 'cache_write' then 'cache_write'
            -- the text must speak of tokens (or the unit be tokens): `Provisioned Managed` hours are not token use
            when padded_item like '%token%'
                or lower(coalesce(x_delivered_pricing_unit, '')) like '%token%'
                or lower(trim(ConsumedUnit)) = 'tokens'
                then {{ ai_api_token_type('padded_item') }}
        end as parsed_token_type,
        {{ ai_api_deployment_type('padded_item') }} as deployment_type,
        lower(trim(ConsumedUnit)) = 'tokens' and ConsumedQuantity is not null as has_consumed_tokens,
        case
            when {{ ai_api_unit_block('x_delivered_pricing_unit') }} > 1 then {{ ai_api_unit_block('x_delivered_pricing_unit') }}
            when {{ ai_api_unit_block('PricingUnit') }} > 1 then {{ ai_api_unit_block('PricingUnit') }}
            else coalesce({{ ai_api_text_block('padded_item') }}, 1)
        end as unit_block,
        -- the stated unit price and the cost it prices, on one basis
        case
            when ContractedUnitPrice > 0 then ContractedUnitPrice
            when ListUnitPrice > 0 then ListUnitPrice
        end as stated_unit_price,
        case
            when ContractedUnitPrice > 0 then EffectiveCost
            when ListUnitPrice > 0 then ListCost
        end as priced_cost
    from parsed

),

scaled as (

    select
        typed.*,
        {{ decimal_divide('priced_cost', decimal_product(['PricingQuantity', 'stated_unit_price']), 12) }}
            as cost_to_rate_ratio
    from typed

),

ruled as (

    select
        scaled.*,
        case
            when parsed_token_type is null then null
            when has_consumed_tokens then 'consumed_unit_tokens'
            when PricingQuantity is null then null
            when unit_block = 1 then 'unit_counts_tokens'
            when cost_to_rate_ratio is null then 'assumed_quantity_in_blocks'
            when {{ decimal_product(['abs(cost_to_rate_ratio)', 'abs(cost_to_rate_ratio)', 'unit_block']) }} > 1
                then 'rate_prices_quantity_in_blocks'
            else 'rate_prices_quantity_in_tokens'
        end as token_scale_rule
    from scaled

),

models as (

    select
        api_family,
        billed_model_key,
        model,
        model_developer
    from {{ ref('ai_api_models') }}

),

final as (

    select
        ruled.x_source,
        ruled.x_load_id,
        ruled.x_source_file,
        ruled.x_source_row,
        ruled.api_family,
        case
            when ruled.api_family = 'tokens_unit' then 'focus_consumed_unit_tokens'
            when ruled.stated_token_type is not null and ruled.parsed_token_type is not null then 'focus_sku_price_details'
            when ruled.api_family = 'bedrock' and ruled.billed_item like '%MP:%' then 'bedrock_marketplace_usage_type'
            when ruled.api_family = 'bedrock' then 'bedrock_usage_type'
            when ruled.api_family = 'azure_openai' then 'azure_openai_meter'
            when ruled.api_family = 'vertex' then 'vertex_sku_description'
        end as recognition_rule,
        ruled.ProviderName as provider_name,
        ruled.ServiceName as service_name,
        ruled.billed_item,
        ruled.billed_model,
        coalesce(
            models.model,
            replace(lower(trim(ruled.billed_model)), ' ', '-')
        ) as model,
        case when models.model is not null then 'ai_api_models' when ruled.billed_model is not null then 'bill_spelling' end
            as model_source,
        coalesce(nullif(trim(ruled.stated_model_developer), ''), models.model_developer) as model_developer,
        coalesce(ruled.parsed_token_type, 'unknown') as token_type,
        ruled.deployment_type,
        case
            when ruled.token_scale_rule = 'consumed_unit_tokens' then ruled.ConsumedQuantity
            when ruled.token_scale_rule in ('unit_counts_tokens', 'rate_prices_quantity_in_tokens')
                then ruled.PricingQuantity
            when ruled.token_scale_rule in ('assumed_quantity_in_blocks', 'rate_prices_quantity_in_blocks')
                then {{ decimal_product(['ruled.PricingQuantity', 'ruled.unit_block']) }}
        end as tokens,
        ruled.token_scale_rule,
        ruled.unit_block,
        ruled.PricingQuantity as pricing_quantity,
        ruled.x_delivered_pricing_unit as pricing_unit,
        ruled.stated_unit_price,
        ruled.BilledCost as billed_cost,
        ruled.EffectiveCost as effective_cost,
        ruled.ListCost as list_cost,
        ruled.BillingCurrency as billing_currency,
        ruled.BillingPeriodStart as billing_period_start,
        ruled.ChargePeriodStart as charge_period_start,
        cast({{ dbt.date_trunc('day', 'ruled.ChargePeriodStart') }} as date) as usage_date,
        ruled.BillingAccountId as billing_account_id,
        ruled.SubAccountId as sub_account_id,
        ruled.RegionId as region_id,
        ruled.x_team as team,
        ruled.x_project as project,
        ruled.Tags as tags
    from ruled
    left join models
        on ruled.api_family = models.api_family
        and {{ ai_api_model_key('ruled.billed_model') }} = models.billed_model_key

)

select * from final
