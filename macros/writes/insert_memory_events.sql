{#
    New memory events, fresh (strength 1, never recalled), their update time their creation
    time: one row per position of the bound lists, in their order, each with the id drawn for
    it (draw_ids). `table`: memory_event, or official_event for a designer's. The lists are
    unnested in the select itself (no subquery: Citus plans the insert as bound rows only).
#}
{% macro insert_memory_events(table='memory_event') -%}
    insert into {{ table }} (
        id, scope, agent_id, user_id, scene, place, description, deepinsight, keywords,
        importance, feedback, strength, recall_count, token_count, save_id, first_line_id,
        last_line_id, root_line_id, batch_key, created_at, updated_at
    )
    select
        unnest(cast($id as bigint[])) as id,
        unnest(cast($scope as varchar[])) as scope,
        unnest(cast($agent_id as varchar[])) as agent_id,
        unnest(cast($user_id as varchar[])) as user_id,
        unnest(cast($scene as varchar[])) as scene,
        unnest(cast($place as varchar[])) as place,
        unnest(cast($description as varchar[])) as description,
        unnest(cast($deepinsight as varchar[])) as deepinsight,
        cast(unnest(cast($keywords as varchar[])) as json) as keywords,
        unnest(cast($importance as double[])) as importance,
        unnest(cast($feedback as double[])) as feedback,
        1 as strength,
        0 as recall_count,
        unnest(cast($token_count as integer[])) as token_count,
        unnest(cast($save_id as bigint[])) as save_id,
        unnest(cast($first_line_id as bigint[])) as first_line_id,
        unnest(cast($last_line_id as bigint[])) as last_line_id,
        unnest(cast($root_line_id as bigint[])) as root_line_id,
        unnest(cast($batch_key as varchar[])) as batch_key,
        unnest(cast($created_at as timestamp[])) as created_at,
        unnest(cast($created_at as timestamp[])) as updated_at
{%- endmacro %}
