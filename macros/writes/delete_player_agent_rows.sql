{#
    A player's rows of one table, of one agent or (no $agent_id) of all (a forgetting purge of
    the archive and the recall log); one row answered per deleted row.
#}
{% macro delete_player_agent_rows(table) -%}
    delete from {{ table }}
    where
        user_id = $user_id
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)
    returning 1
{%- endmacro %}
