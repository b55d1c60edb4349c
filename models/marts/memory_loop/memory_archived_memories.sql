-- One row per archived memory with the reason, for analysts (the live tables no longer hold it).
with

archive as (
    select * from {{ ref('int_memory_archive_with_official') }}
),

final as (
    select
        archive_id,
        memory_type,
        memory_id,
        agent_id,
        user_id,
        reason,
        strength,
        {{ json_field_text('memory', 'description') }} as description,
        memory,
        archived_at
    from archive
)

select * from final
