{#
    An event the player's store already holds, mentioned again: its strength grows by the
    spacing increment for the time since it was last updated (macro strength_increment);
    answers its id, or no row when there is no such event (the caller then inserts it).
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
        and user_id is not distinct from $user_id
        and description = $description
    returning id
{%- endmacro %}
