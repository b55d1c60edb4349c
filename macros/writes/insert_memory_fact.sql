{#
    A fact as stated (never updated afterwards: which value is current is resolved per chain,
    model int_memory_facts_resolved); answers its id. $supersedes and $line_ids are JSON text.
#}
{% macro insert_memory_fact() -%}
    insert into memory_fact (
        agent_id, user_id, subject, attribute, value, supersedes, save_id, line_id, line_ids,
        batch_key, created_at
    )
    values (
        $agent_id, $user_id, $subject, $attribute, $value, $supersedes, $save_id, $line_id,
        $line_ids, $batch_key, $created_at
    )
    returning id
{%- endmacro %}
