{#
    One cleanup of a player's memories by a rule, with what it counted and archived.
#}
{% macro insert_maintenance_run() -%}
    insert into memory_maintenance_run (
        agent_id, user_id, rule, memory_count, archived_count, ran_at
    )
    values ($agent_id, $user_id, $rule, $memory_count, $archived, $now)
{%- endmacro %}
