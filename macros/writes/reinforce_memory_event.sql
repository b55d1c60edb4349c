{#
    An event the player's store already holds, mentioned again: its strength grows by the
    spacing increment for the time since it was last updated (macro strength_increment);
    answers its id, or no row when there is no such event (the caller then inserts it).
#}
{% macro reinforce_memory_event() -%}
    {{- adapter.dispatch('reinforce_memory_event', 'rolemem')() -}}
{%- endmacro %}

{% macro default__reinforce_memory_event() -%}
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

{#
    On Citus the player names the shard ($user_id, never null there) and the increment is
    computed in a read of the event: Citus refuses an UPDATE whose SET holds a subquery inside
    COALESCE ("non-IMMUTABLE functions are not allowed in CASE or COALESCE").
#}
{% macro citus__reinforce_memory_event() -%}
    {%- set increment = strength_increment(
        'coalesce(updated_at, created_at)', '$created_at', 'memory_strength_increments'
    ) -%}
    update memory_event
    set
        strength = memory_event.strength + mentioned.increment,
        updated_at = greatest(
            coalesce(memory_event.updated_at, memory_event.created_at), $created_at
        )
    from (
        select
            id,
            {{ increment | indent(12) }} as increment
        from memory_event
        where
            scope = $scope
            and agent_id = $agent_id
            and user_id = $user_id
            and description = $description
    ) as mentioned
    where memory_event.id = mentioned.id and memory_event.user_id = $user_id
    returning memory_event.id
{%- endmacro %}
