-- The overview timeline (前情提要, dynamic-memory §一/§四) of each query: the player's newest
-- timeline_size events in scope (so on the current branch), rank 1 = newest. Older events
-- leave the timeline, not the store.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

in_scope as (
    select * from {{ ref('int_memory_events_in_scope') }}
),

final as (
    select
        in_scope.query_id,
        in_scope.event_id,
        row_number() over (
            partition by in_scope.query_id
            order by in_scope.created_at desc, in_scope.event_id desc
        ) as timeline_rank
    from in_scope
    inner join queries
        on queries.query_id = in_scope.query_id
    where in_scope.scope = 'user'
    qualify timeline_rank <= queries.timeline_size
)

select * from final
