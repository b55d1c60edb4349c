{#
    The staged columns of a memory table's rows, read from `relation`: the player table's
    staging model and its official twin's (official_*) say them once, so the union models
    (int_memory_*_with_official) line up.
#}
{% macro staged_memory_rows(table, relation) -%}
{%- if table == 'memory_event' -%}
    select
        id as event_id,
        scope,
        agent_id,
        user_id,
        scene,
        place,
        description,
        deepinsight,
        -- parsed where an answer shows it (a few rows), not for every event a turn scores
        keywords as keywords_json,
        cast(importance as double precision) as importance,
        cast(feedback as double precision) as feedback,
        strength,
        recall_count,
        token_count,
        coalesce(is_pinned, false) as is_pinned,
        save_id,
        first_line_id,
        last_line_id,
        root_line_id,
        batch_key,
        created_at,
        coalesce(updated_at, created_at) as updated_at,
        last_recalled_at
    from {{ relation }}
{%- elif table == 'memory_entity' -%}
    select
        id as entity_id,
        scope,
        agent_id,
        user_id,
        user_name,
        entity_name,
        entity_type,
        kind,
        keyword,
        description,
        strength,
        recall_count,
        coalesce(is_pinned, false) as is_pinned,
        coalesce(merge_count, 0) as merge_count,
        created_at,
        updated_at,
        last_recalled_at
    from {{ relation }}
{%- elif table == 'memory_archive' -%}
    select
        id as archive_id,
        memory_type,
        memory_id,
        agent_id,
        user_id,
        reason,
        strength,
        memory,
        archived_at
    from {{ relation }}
{%- elif table == 'memory_event_term' -%}
    select
        event_id,
        agent_id,
        scope,
        user_id,
        term,
        description_count,
        keyword_count,
        tag_count,
        description_count + keyword_count as term_count
    from {{ relation }}
{%- elif table == 'memory_event_embedding' -%}
    select
        event_id,
        embedding,
        context_embedding,
        long_context_embedding
    from {{ relation }}
{%- else -%}
    {{ exceptions.raise_compiler_error('staged_memory_rows: no memory table ' ~ table) }}
{%- endif %}
{%- endmacro %}
