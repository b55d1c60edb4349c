{#
    A page ($limit, $offset) of the archive, the players' and the designers'
    (model int_memory_archive_with_official), oldest first.
#}
{% macro archive_page() -%}
    select
        archive_id as id,
        memory_type,
        memory_id,
        agent_id,
        user_id,
        reason,
        strength,
        memory,
        archived_at
    from int_memory_archive_with_official
    order by archive_id
    limit $limit offset $offset
{%- endmacro %}
