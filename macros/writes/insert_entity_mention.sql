{#
    A description fragment of entity $entity_id and the lines it came from, written with the
    entity's insert or merge (the entity row is one across saves; its mentions keep their
    lines, model int_memory_entity_mentions_visible). $line_ids is JSON text; a mention
    without a save (added by hand) has none and shows wherever its entity does.
#}
{% macro insert_entity_mention() -%}
    insert into memory_entity_mention (
        entity_id, user_id, agent_id, description, save_id, first_line_id, last_line_id,
        root_line_id, line_ids, target_key, batch_key, created_at
    )
    values (
        $entity_id, $user_id, $agent_id, $description, $save_id, $first_line_id,
        $last_line_id, $root_line_id, $line_ids, $target_key, $batch_key, $created_at
    )
{%- endmacro %}
