{#
    An extraction batch claimed by its key: no row answered when another writer committed
    the same batch first (the caller undoes its transaction).
#}
{% macro insert_extraction_batch() -%}
    insert into memory_extraction_batch (
        batch_key, save_id, target_key, user_id, agent_id, first_line_id, last_line_id,
        turn_count, reason, scene, event_count, entity_count, llm_model, extracted_at,
        replaced_batch_keys
    )
    values (
        $batch_key, $save_id, $target_key, $user_id, $agent_id, $first_line_id,
        $last_line_id, $turn_count, $reason, $scene, $event_count, $entity_count,
        $llm_model, $now, $replaced_batch_keys
    )
    on conflict do nothing
    returning batch_key
{%- endmacro %}
