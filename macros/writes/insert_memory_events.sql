{#
    A new memory event, fresh (strength 1, never recalled), its update time its creation time;
    answers its id. `table`: memory_event, or official_event for a designer's.
#}
{% macro insert_memory_event(table='memory_event') -%}
    insert into {{ table }} (
        scope, agent_id, user_id, scene, place, description, deepinsight, keywords,
        importance, feedback, strength, recall_count, token_count, save_id, first_line_id,
        last_line_id, root_line_id, batch_key, created_at, updated_at
    )
    values (
        $scope, $agent_id, $user_id, $scene, $place, $description, $deepinsight, $keywords,
        $importance, $feedback, 1, 0, $token_count, $save_id, $first_line_id,
        $last_line_id, $root_line_id, $batch_key, $created_at, $created_at
    )
    returning id
{%- endmacro %}
