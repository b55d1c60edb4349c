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

final as (
    select cosines.*
    from cosines
    inner join queries
        on queries.query_id = cosines.query_id
    qualify row_number() over (
        partition by cosines.query_id
        order by
            greatest(cosines.cosine, cosines.context_cosine, cosines.long_context_cosine) desc,
            cosines.event_id
    ) <= queries.dense_candidates
)

select * from final
