{#-
    A unit in FOCUS Unit Format (FOCUS 1.2, Unit Format): the spelling seed pricing_unit_aliases maps it to
    (`alias`, the seed's focus_unit joined by the caller on the lower-cased, trimmed unit); else, for a unit
    whose time part a provider abbreviates (`IOPS-Mo`, `GiBps-mo`, `ACU-Hr`, `LCU-Hrs`, `DPU-Hour`), the same
    unit with the plural time unit FOCUS names (`IOPS-Months`, `GiBps-Months`, `ACU-Hours`...), which is
    `<singular-unit>-<plural-time-units>`; else the unit as delivered, trimmed (blank is null). Standard SQL.
-#}
{% macro focus_unit(unit, alias) -%}
    {%- set time_units = {
        'Months': ['mo', 'mos', 'month', 'months'],
        'Days': ['day', 'days'],
        'Hours': ['hr', 'hrs', 'hour', 'hours'],
        'Minutes': ['min', 'mins', 'minute', 'minutes'],
        'Seconds': ['sec', 'secs', 'second', 'seconds'],
    } -%}
    {%- set trimmed = 'trim(' ~ unit ~ ')' -%}
    coalesce(
        {{ alias }},
        case
            when {{ trimmed }} like '%_-%'
                then case
                    {%- for time_unit, spellings in time_units.items() %}
                    {%- for spelling in spellings %}
                    {%- set suffix_length = (spelling | length) + 1 %}
                    when lower({{ dbt.right(trimmed, suffix_length) }}) = '-{{ spelling }}'
                        then {{ dbt.concat([
                            'substring(' ~ trimmed ~ ', 1, length(' ~ trimmed ~ ') - ' ~ suffix_length ~ ')',
                            "'-" ~ time_unit ~ "'",
                        ]) }}
                    {%- endfor %}
                    {%- endfor %}
                end
        end,
        nullif({{ trimmed }}, '')
    )
{%- endmacro %}
