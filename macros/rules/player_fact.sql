{#
    The player $user_id's fact $id (no row when it is another player's, or none): what a
    change or a delete of it reads first.
#}
{% macro player_fact() -%}
    select id, agent_id, subject, attribute, value, save_id, line_id, line_ids
    from memory_fact
    where id = $id and user_id = $user_id
{%- endmacro %}
