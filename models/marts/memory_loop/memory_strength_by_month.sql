-- Strength over time: per agent, memory type and month of creation, how many player memories
-- are live or archived and how strong the live ones are.
with

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

entities as (
    select * from {{ ref('int_memory_entities_with_official') }}
),

archive as (
    select * from {{ ref('int_memory_archive_with_official') }}
),

live as (
    select agent_id, 'event' as memory_type, strength, created_at
    from events
    where scope = 'user'
    union all
    select agent_id, 'entity' as memory_type, strength, created_at
    from entities
    where scope = 'user'
),

live_by_month as (
    select
        agent_id,
        memory_type,
        date_trunc('month', created_at) as created_month,
        count(*) as live_count,
        min(strength) as strength_min,
        {{ percentile('strength', 0.5) }} as strength_p50,
        {{ percentile('strength', 0.9) }} as strength_p90,
        max(strength) as strength_max
    from live
    group by agent_id, memory_type, created_month
),

archived_by_month as (
    select
        agent_id,
        memory_type,
        date_trunc('month', cast({{ json_field_text('memory', 'created_at') }} as timestamp))
            as created_month,
        count(*) as archived_count
    from archive
    where reason <> 'consolidated'
    group by agent_id, memory_type, created_month
),

final as (
    select
        coalesce(live_by_month.agent_id, archived_by_month.agent_id) as agent_id,
        coalesce(live_by_month.memory_type, archived_by_month.memory_type) as memory_type,
        coalesce(live_by_month.created_month, archived_by_month.created_month) as created_month,
        coalesce(live_by_month.live_count, 0) as live_count,
        coalesce(archived_by_month.archived_count, 0) as archived_count,
        live_by_month.strength_min,
        live_by_month.strength_p50,
        live_by_month.strength_p90,
        live_by_month.strength_max
    from live_by_month
    full outer join archived_by_month
        on
            archived_by_month.agent_id = live_by_month.agent_id
            and archived_by_month.memory_type = live_by_month.memory_type
            and archived_by_month.created_month = live_by_month.created_month
)

select * from final
