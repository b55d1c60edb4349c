-- The cosine of each query's vector with each stored event vector. The Python path replaces
-- this model with cosines it computed in numpy over the player's vectors held in memory (an
-- array scan in SQL costs ~10x more per turn); the scoring rules that use them stay in SQL.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

embeddings as (
    select * from {{ ref('stg_app__memory_event_embeddings') }}
),

final as (
    select
        queries.query_id,
        embeddings.event_id,
        list_cosine_similarity(
            cast(embeddings.embedding as float[]), queries.query_embedding
        ) as cosine,
        -- an event stored before context vectors counts its own vector for them
        list_cosine_similarity(
            cast(coalesce(embeddings.context_embedding, embeddings.embedding) as float[]),
            queries.query_embedding
        ) as context_cosine,
        list_cosine_similarity(
            cast(coalesce(embeddings.long_context_embedding, embeddings.embedding) as float[]),
            queries.query_embedding
        ) as long_context_cosine
    from queries
    cross join embeddings
    where queries.query_embedding is not null
)

select * from final
