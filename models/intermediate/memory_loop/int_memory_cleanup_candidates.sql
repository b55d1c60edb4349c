-- The player memories a maintenance run archives, one row each: the weakest archive_quota
-- unpinned memories of each user x agent due (int_memory_cleanup_quotas). Weakest = lowest
-- strength, ties oldest first (then type and id: the same database and now, the same archive).
-- Pinned memories count towards the quota's base but are never archived.
with

memories as (
    select * from {{ ref('int_memory_player_memories') }}
),

quotas as (
    select * from {{ ref('int_memory_cleanup_quotas') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by agent_id, user_id
            order by strength, created_at, memory_type, memory_id
        ) as weakness_rank
    from memories
    where not is_pinned
),

final as (
    select
        ranked.memory_type,
        ranked.memory_id,
        ranked.agent_id,
        ranked.user_id,
        quotas.rule as reason,
        ranked.strength,
        ranked.weakness_rank,
        quotas.memory_count,
        quotas.archive_quota,
        ranked.created_at
    from ranked
    inner join quotas
        on quotas.agent_id = ranked.agent_id and quotas.user_id = ranked.user_id
    where ranked.weakness_rank <= quotas.archive_quota
)

select * from final
