{#-
    The ARM VM size (`Standard_ND96isr_H100_v5`) of an Azure cost line, or null when it is not a VM
    line. Shared by the Azure actual/amortized staging model and the FOCUS staging model (Microsoft
    FocusCost rows), which carry the same information under other column names.

    1. The VM size Azure states in a details JSON (AdditionalInfo; in FocusCost SkuPriceDetails or
       x_SkuDetails), key `ServiceType` or `VMSize`, when it is an ARM size (`Standard_…`; ServiceType
       also holds values such as `DataAnalysis` on other lines). Read with a regular expression, not a
       JSON parser, so a malformed provider column cannot fail the build.
    2. Else, on `Virtual Machines` meters, the meter name: `ND96isr H100 v5 Spot` → strip the
       ` Spot` / ` Low Priority` suffix, spaces → `_`, prefix `Standard_`. Meter names that cover
       several sizes (`D2 v3/D2s v3`) give null: which one ran is not knowable.

    azure_instance_type(['AdditionalInfo'], 'MeterCategory', 'MeterName')
-#}
{% macro azure_instance_type(details_columns, meter_category, meter_name) -%}
    {%- if details_columns is string -%}{%- set details_columns = [details_columns] -%}{%- endif -%}
    {%- set stated_size = '"(?:ServiceType|VMSize)"\\s*:\\s*"([Ss]tandard_[A-Za-z0-9_]+)"' -%}
    {%- set vm_meter = '^([A-Za-z0-9]+(?: [A-Za-z0-9]+)*?)(?: Spot| Low Priority)?$' -%}
    {%- set meter_size = regexp_extract_group('trim(' ~ meter_name ~ ')', vm_meter, 1) -%}
    coalesce(
        {%- for details in details_columns %}
        {{ regexp_extract_group(details, stated_size, 1) }},
        {%- endfor %}
        case
            when trim({{ meter_category }}) = 'Virtual Machines' and {{ meter_size }} is not null
                then {{ dbt.concat(["'Standard_'", "replace(" ~ meter_size ~ ", ' ', '_')"]) }}
        end
    )
{%- endmacro %}
