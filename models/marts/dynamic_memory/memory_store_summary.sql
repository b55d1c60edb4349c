-- One row per (agent, player, scope, memory type): how many memories and how strong.
with

entities as (
    select * from {{ ref('int_memory_entities_with_official') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

memories as (
    select agent_id, user_id, scope, 'entity' as memory_type, strength, recall_count
    from entities
    union all
    select agent_id, user_id, scope, 'event' as memory_type, strength, recall_count
    from events
),

final as (
    select
        agent_id,
        user_id,
        scope,
        memory_type,
        count(*) as memory_count,
        min(strength) as strength_min,
        {{ percentile('strength', 0.5) }} as strength_p50,
        {{ percentile('strength', 0.9) }} as strength_p90,
        max(strength) as strength_max,
        avg(strength) as strength_avg,
        sum(recall_count) as recall_count_total
    from memories
    group by agent_id, user_id, scope, memory_type
)

select * from final
