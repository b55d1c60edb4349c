{#
    A new entity, fresh (strength 1, never recalled); answers its id. `table`: memory_entity,
    or official_entity for a designer's.
#}
{% macro insert_memory_entity(table='memory_entity') -%}
    insert into {{ table }} (
        scope, agent_id, user_id, user_name, entity_name, entity_type, kind, keyword,
        description, strength, recall_count, created_at, updated_at
    )
    values (
        $scope, $agent_id, $user_id, $user_name, $entity_name, $entity_type, $kind, $keyword,
        $description, 1, 0, $at, $at
    )
    returning id
{%- endmacro %}
