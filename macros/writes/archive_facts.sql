{#
    The player's facts $ids into the archive before they go, each whole row as JSON (macro
    row_as_json), with the reason and the time; a fact has no strength (archived as 1). Answers
    the ids archived: none of another player's.
#}
{% macro archive_facts(columns) -%}
    insert into memory_archive (
        memory_type, memory_id, agent_id, user_id, reason, strength, memory, archived_at
    )
    select
        'fact' as memory_type,
        memory_fact.id as memory_id,
        memory_fact.agent_id,
        memory_fact.user_id,
        $reason as reason,
        1 as strength,
        {{ row_as_json('memory_fact', columns) | indent(4) }} as memory,
        $now as archived_at
    from memory_fact
    where list_contains(cast($ids as bigint[]), memory_fact.id) and memory_fact.user_id = $user_id
    returning memory_id
{%- endmacro %}
