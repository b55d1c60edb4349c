{#
    An event the player's store already holds, mentioned again: its strength grows by the
    spacing increment for the time since it was last updated (macro strength_increment);
    answers its id, or no row when there is no such event (the caller then inserts it).
    One statement for every engine: the player by equality routes it to the player's shard on
    Citus (one task), and the increment is one scalar subquery, which Citus runs in an
    UPDATE's SET (it refuses one under a CASE or COALESCE).
#}
{% macro reinforce_memory_event() -%}
    {%- set increment = strength_increment(
        'coalesce(updated_at, created_at)', '$created_at', 'memory_strength_increments'
    ) -%}
    update memory_event
    set
        strength = strength + {{ increment | indent(4) }},
        updated_at = greatest(coalesce(updated_at, created_at), $created_at)
    where
        scope = $scope
        and agent_id = $agent_id
        -- a player's event (a designer's lives in official_event, never mentioned again)
        and user_id = $user_id
        and description = $description
    returning id
{%- endmacro %}
