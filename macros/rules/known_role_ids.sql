{#
    Which of the role ids $ids the store's `role` table holds, as one list (null: none).
#}
{% macro known_role_ids() -%}
    select list(id) from role where list_contains(cast($ids as bigint[]), id)
{%- endmacro %}
