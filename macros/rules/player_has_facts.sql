{#
    Whether the player $user_id holds a fact with the agent $agent_id (a seek of the player's
    facts: many hold none, and a listing of them then plans none of the facts' models; on
    Citus the player's filter routes it to that shard).
#}
{% macro player_has_facts() -%}
    select exists (
        select 1 from memory_fact
        where user_id = $user_id and agent_id = $agent_id
    )
{%- endmacro %}
