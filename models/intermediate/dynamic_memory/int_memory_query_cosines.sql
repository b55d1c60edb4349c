-- The cosine of each query's vector with the vector of each event it can reach (the agent's
-- official events and the player's own). The Python path replaces this model's use with
-- numbers it computes in numpy over the player's vectors held in memory (an array scan in SQL
-- costs ~10x more per turn): the dense candidates and the cosine statistics; the scoring rules
-- that use them stay in SQL.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

embeddings as (
    select * from {{ ref('int_memory_event_embeddings_with_official') }}
),

final as (
    select
        queries.query_id,
        embeddings.event_id,
        {{ cosine_similarity(
            'cast(embeddings.embedding as float[])', 'queries.query_embedding'
        ) }} as cosine,
        -- an event stored before context vectors counts its own vector for them
        {{ cosine_similarity(
            'cast(coalesce(embeddings.context_embedding, embeddings.embedding) as float[])',
            'queries.query_embedding'
        ) }} as context_cosine,
        {{ cosine_similarity(
            'cast(coalesce(embeddings.long_context_embedding, embeddings.embedding) as float[])',
            'queries.query_embedding'
        ) }} as long_context_cosine
    from queries
    inner join events
        on
            events.agent_id = queries.agent_id
            and (events.scope = 'official' or events.user_id = queries.user_id)
    inner join embeddings
        on embeddings.event_id = events.event_id
    where queries.query_embedding is not null
)

select * from final
