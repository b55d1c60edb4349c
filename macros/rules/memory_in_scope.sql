{#
    The memory $id of `table` when it is in the caller's scope: of scope $scope, of the player
    $user_id (null: an official one), of the agent $agent_id (null: any). No row otherwise, so a
    memory outside the scope reads exactly as one that does not exist.
#}
{% macro memory_in_scope(table) -%}
    select id from {{ table }}
    where
        id = $id
        and scope = $scope
        and user_id is not distinct from $user_id
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)
{%- endmacro %}
