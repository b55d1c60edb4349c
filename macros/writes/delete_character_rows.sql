{#
    A config table's rows of the characters $ids, before their new config is written.
#}
{% macro delete_character_rows(table) -%}
    delete from {{ table }}
    where list_contains(cast($ids as varchar[]), character_id)
{%- endmacro %}
