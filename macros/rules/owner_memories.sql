{#
    The memories of `table` of the agent $agent_id, scope $scope and player $user_id (null:
    official), by id.
#}
{% macro owner_memories(table) -%}
    select * from {{ table }}
    where
        agent_id = $agent_id
        and scope = $scope
        and user_id is not distinct from $user_id
    order by id
{%- endmacro %}
