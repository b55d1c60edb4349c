-- The dense_candidates events nearest each query by the best of their three cosines (the
-- event's own vector and its two context vectors): the events meaning alone can bring in. The
-- Python path finds the same top in numpy over the vectors it holds.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

cosines as (
    select * from {{ ref('int_memory_query_cosines') }}
),

ranked as (
    select
        cosines.*,
        queries.dense_candidates,
        row_number() over (
            partition by cosines.query_id
            order by
                greatest(cosines.cosine, cosines.context_cosine, cosines.long_context_cosine)
                desc,
                cosines.event_id
        ) as dense_rank
    from cosines
    inner join queries
        on queries.query_id = cosines.query_id
),

-- a filter after the window, not QUALIFY: PostgreSQL has none
final as (
    select query_id, event_id, cosine, context_cosine, long_context_cosine
    from ranked
    where dense_rank <= dense_candidates
)

select * from final
