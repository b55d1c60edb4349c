-- The overview timeline (前情提要, dynamic-memory §一/§四) of each query: the player's newest
-- timeline_size events it can see (on the branch being played, macro is_event_in_scope), rank
-- 1 = newest, with the event's fields. Older events leave the timeline, not the store.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

query_chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

-- ranked on narrow rows (a sort of every event of the player), fields joined to the newest
ranked as (
    select
        queries.query_id,
        events.event_id,
        queries.timeline_size,
        row_number() over (
            partition by queries.query_id
            order by events.created_at desc, events.event_id desc
        ) as timeline_rank
    from events
    inner join queries
        on
            events.agent_id = queries.agent_id
            and events.user_id = queries.user_id
            and events.scope = 'user'
    left join query_chains
        on
            query_chains.query_id = queries.query_id
            and query_chains.line_id = events.last_line_id
    where {{ is_event_in_scope('events', 'queries', 'query_chains.line_id') }}
),

-- a filter after the window, not QUALIFY: PostgreSQL has none
newest as (
    select query_id, event_id, timeline_rank
    from ranked
    where timeline_rank <= timeline_size
),

final as (
    select
        newest.query_id,
        events.*,
        {{ json_text_list('events.keywords_json') }} as keywords,
        newest.timeline_rank
    from newest
    inner join events
        on events.event_id = newest.event_id
)

select * from final
