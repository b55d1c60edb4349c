{#
    A column added to a table written before the column existed (the game's own tables, which
    rolemem extends where they lack what it reads); nothing when it is there.
#}
{% macro add_missing_column(relation, column, column_type) -%}
    alter table {{ relation }} add column if not exists {{ column }} {{ column_type }}
{%- endmacro %}
