{#
    Memories of one table into the archive before they go, each whole row as JSON (macro
    row_as_json), with the reason and the time; an official memory's into `archive`
    official_archive.
#}
{% macro archive_memories(table, columns, archive='memory_archive') -%}
    insert into {{ archive }} (
        memory_type, memory_id, agent_id, user_id, reason, strength, memory, archived_at
    )
    select
        $memory_type as memory_type,
        {{ table }}.id as memory_id,
        {{ table }}.agent_id,
        {{ table }}.user_id,
        $reason as reason,
        {{ table }}.strength,
        {{ row_as_json(table, columns) | indent(4) }} as memory,
        $now as archived_at
    from {{ table }}
    where list_contains(cast($ids as bigint[]), {{ table }}.id)
{%- endmacro %}
