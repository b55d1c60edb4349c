{#
    Every fact of the players of the saves $save_ids.
#}
{% macro saves_player_facts() -%}
    select * from memory_fact
    where
        user_id in (
            select save.user_id from save
            where list_contains(cast($save_ids as bigint[]), save.id)
        )
{%- endmacro %}
