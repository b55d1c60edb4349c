{#
    Entity $entity_id's one mention after its description was rewritten (an edit, an LLM
    consolidation), its old mentions deleted before (macro delete_memories): the entity's
    new description, citing the bound source ($save_id … $batch_key, $line_ids JSON text;
    null and '[]' for an edit, the player's word, shown wherever the entity is).
#}
{% macro rewrite_entity_mention() -%}
    insert into memory_entity_mention (
        entity_id, user_id, agent_id, description, save_id, first_line_id, last_line_id,
        root_line_id, line_ids, target_key, batch_key, created_at
    )
    select
        id as entity_id,
        user_id,
        agent_id,
        description,
        $save_id as save_id,
        $first_line_id as first_line_id,
        $last_line_id as last_line_id,
        $root_line_id as root_line_id,
        $line_ids as line_ids,
        $target_key as target_key,
        $batch_key as batch_key,
        $now as created_at
    from memory_entity
    where id = $entity_id and scope = 'user'
{%- endmacro %}
