-- Per user x agent due for maintenance (dynamic-memory §八): the rule that applies and how
-- many memories it archives. Each rule runs at most every cleanup_interval_days:
-- * weakest_share: a player active on the run's day with cleanup_threshold memories or more
--   loses the weakest cleanup_share of them;
-- * inactive_trim: a player inactive for inactive_days keeps its inactive_min_keep strongest.
-- Activity = the latest observation, recall or write of the player's memories.
with

memories as (
    select * from {{ ref('int_memory_player_memories') }}
),

requests as (
    select * from {{ ref('int_memory_maintenance_requests') }}
),

states as (
    select * from {{ ref('stg_app__memory_loop_states') }}
),

runs as (
    select * from {{ ref('stg_app__memory_maintenance_runs') }}
),

observed as (
    select
        agent_id,
        user_id,
        max(last_observed_at) as last_observed_at
    from states
    group by agent_id, user_id
),

last_runs as (
    select
        agent_id,
        user_id,
        max(ran_at) as last_ran_at
    from runs
    group by agent_id, user_id
),

players as (
    select
        memories.agent_id,
        memories.user_id,
        count(*) as memory_count,
        greatest(max(memories.touched_at), max(observed.last_observed_at)) as last_active_at
    from memories
    left join observed
        on observed.agent_id = memories.agent_id and observed.user_id = memories.user_id
    group by memories.agent_id, memories.user_id
),

ruled as (
    select
        players.*,
        case
            when
                cast(players.last_active_at as date) = cast(requests.now as date)
                and players.memory_count >= requests.cleanup_threshold
                then 'weakest_share'
            when
                players.last_active_at
                < requests.now - requests.inactive_days * interval '1 day'
                and players.memory_count > requests.inactive_min_keep
                then 'inactive_trim'
        end as rule,
        requests.cleanup_share,
        requests.inactive_min_keep
    from players
    cross join requests
    left join last_runs
        on last_runs.agent_id = players.agent_id and last_runs.user_id = players.user_id
    where
        last_runs.last_ran_at is null
        or last_runs.last_ran_at
        <= requests.now - requests.cleanup_interval_days * interval '1 day'
),

final as (
    select
        agent_id,
        user_id,
        memory_count,
        last_active_at,
        rule,
        case rule
            when 'weakest_share' then cast(floor(memory_count * cleanup_share) as bigint)
            else memory_count - inactive_min_keep
        end as archive_quota
    from ruled
    where rule is not null
)

select * from final
