-- The mentions of the player's entities each query's save may see (memory_entity_mention: an
-- entity row is one across saves, its mentions keep their lines), by the events' branch rule
-- (macro is_event_in_scope: lines on the chain, a replacement's only where its original is
-- cut away, another playthrough's with memory_scope 'player', one without a save
-- everywhere). Witnessing needs no test here: a mention, as an event, comes from lines its
-- character witnessed (extraction sends no other).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

mentions as (
    select * from {{ ref('stg_app__memory_entity_mentions') }}
),

query_chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

hidden_batches as (
    select * from {{ ref('int_memory_query_hidden_batches') }}
),

final as (
    select
        queries.query_id,
        mentions.mention_id,
        mentions.entity_id,
        mentions.description,
        mentions.line_ids_json,
        mentions.save_id,
        mentions.first_line_id,
        mentions.last_line_id,
        -- its last line's place on the chain; null off it (no save, another playthrough)
        query_chains.line_position
    from mentions
    inner join queries
        on
            mentions.agent_id = queries.agent_id
            and mentions.user_id = queries.user_id
    {{ event_scope_joins('queries.query_id', 'mentions') }}
    where {{ is_event_in_scope('mentions', 'queries') }}
)

select * from final
