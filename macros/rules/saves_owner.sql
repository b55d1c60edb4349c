{#
    The player of the saves $save_ids, for a caller that named none (their owner: one player's
    saves).
#}
{% macro saves_owner() -%}
    select min(user_id) from save where list_contains(cast($save_ids as bigint[]), id)
{%- endmacro %}
