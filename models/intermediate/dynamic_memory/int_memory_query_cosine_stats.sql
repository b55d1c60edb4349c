-- Per query, how the cosines of the player's reachable events (official and the player's own)
-- spread: what min-max scales a dense signal by and what the evidence gate's baseline pools
-- with the reference sentences. The Python path computes the same numbers in numpy where it
-- computes the cosines (vector_cache); the rules that use them stay in SQL.
with

cosines as (
    select * from {{ ref('int_memory_query_cosines') }}
),

final as (
    select
        query_id,
        count(*) as cosine_count,
        sum(cosine) as cosine_sum,
        sum(cosine * cosine) as cosine_square_sum,
        min(cosine) as cosine_min,
        max(cosine) as cosine_max,
        min(context_cosine) as context_cosine_min,
        max(context_cosine) as context_cosine_max,
        min(long_context_cosine) as long_context_cosine_min,
        max(long_context_cosine) as long_context_cosine_max
    from cosines
    group by query_id
)

select * from final
