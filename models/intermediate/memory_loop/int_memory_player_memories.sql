-- Every player memory (user scope), events and entities alike, with what forgetting looks at:
-- strength, pin, age and the last time it was touched (written, merged or recalled).
with

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

entities as (
    select * from {{ ref('stg_app__memory_entities') }}
),

final as (
    select
        'event' as memory_type,
        event_id as memory_id,
        agent_id,
        user_id,
        strength,
        is_pinned,
        created_at,
        greatest(updated_at, last_recalled_at) as touched_at
    from events
    where scope = 'user'
    union all
    select
        'entity' as memory_type,
        entity_id as memory_id,
        agent_id,
        user_id,
        strength,
        is_pinned,
        created_at,
        greatest(updated_at, last_recalled_at) as touched_at
    from entities
    where scope = 'user'
)

select * from final
