-- The event memories a query may see: the agent's official events and the player's own, on
-- the branch being played. An event extracted from the queried save whose last source line is
-- no longer on that save's current chain is hidden (it comes back when the player returns to
-- that branch; nothing is deleted). memory_scope = 'save' also hides events extracted in the
-- player's other saves. Events with no source save (added by hand) are always in scope.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

query_chains as (
    select
        queries.query_id,
        chains.line_id
    from queries
    inner join chains
        on chains.save_id = queries.save_id
),

final as (
    select
        queries.query_id,
        events.*
    from events
    inner join queries
        on
            events.agent_id = queries.agent_id
            and (events.scope = 'official' or events.user_id = queries.user_id)
    left join query_chains
        on
            query_chains.query_id = queries.query_id
            and query_chains.line_id = events.last_line_id
    where
        events.save_id is null
        or (
            queries.memory_scope = 'player'
            and (queries.save_id is null or events.save_id <> queries.save_id)
        )
        or (events.save_id = queries.save_id and query_chains.line_id is not null)
)

select * from final
