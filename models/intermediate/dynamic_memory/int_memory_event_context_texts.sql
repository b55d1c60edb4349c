-- The texts each event's context vectors are embedded from, when the event is written: the
-- event after the previous event of the same timeline (agent, scope, player; by time, then id),
-- and after the previous two. A memory is often found only through what came just before it
-- (the question a reply answers, the plan an outcome follows); its own vector is kept as well,
-- and recall scores all three (docs block memory_event_score).
with

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

final as (
    select
        event_id,
        concat_ws(chr(10), lag(description) over by_time, description) as context_text,
        concat_ws(
            chr(10), lag(description, 2) over by_time, lag(description) over by_time, description
        ) as long_context_text
    from events
    window by_time as (partition by agent_id, scope, user_id order by created_at, event_id)
)

select * from final
