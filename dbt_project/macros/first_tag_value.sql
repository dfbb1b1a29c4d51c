{#-
    The value of the first of several tag keys present in a FOCUS `Tags` JSON object, blanks as null.
    Providers spell the same tag differently (`team`, `Team`, CUR 2.0's `user_team`, legacy CUR's
    `user:team`), so teams and projects are found through an ordered list of keys (dbt vars
    `team_tag_keys`, `project_tag_keys`).

    first_tag_value('Tags', var('team_tag_keys'))
-#}
{% macro first_tag_value(tags_column, keys) -%}
    {%- if keys is string -%}{%- set keys = [keys] -%}{%- endif -%}
    coalesce(
        {%- for key in keys %}
        nullif(trim({{ json_extract_string(tags_column, key) }}), ''){{ ',' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
