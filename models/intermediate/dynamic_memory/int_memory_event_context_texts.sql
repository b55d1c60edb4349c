-- The text each event's context vector is embedded from, when the event is written: the
-- previous event of the same timeline (agent, scope, player; by time, then id), a newline,
-- then the event itself. A memory is often found only through what came just before it (the
-- question a reply answers, the plan an outcome follows); its own vector is kept as well, and
-- recall scores both (docs block memory_event_score).
with

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

final as (
    select
        event_id,
        coalesce(
            lag(description) over (
                partition by agent_id, scope, user_id
                order by created_at, event_id
            ) || chr(10),
            ''
        ) || description as context_text
    from events
)

select * from final
