-- The batch path's dynamic-memory queries (demo seed) with the scoring profile and word
-- settings. The Python API replaces this model with its one query, all values bound.
with

queries as (
    select * from {{ ref('demo_memory_queries') }}
),

profile as (
    select * from {{ ref('memory_scoring_profile') }}
),

limits as (
    select * from {{ ref('recall_limits') }}
),

loop_settings as (
    select * from {{ ref('memory_loop_settings') }}
),

final as (
    select
        queries.query_id,
        queries.agent_id,
        queries.user_id,
        nullif(queries.user_name, '') as user_name,
        nullif(queries.agent_name, '') as agent_name,
        queries.text as query_text,
        {{ json_text_list('queries.tokens') }} as tokens,
        -- the batch path has no embedder: dense relevance is left out of the score
        cast(null as float[]) as query_embedding,
        cast(null as integer) as reference_cosine_count,
        cast(null as double precision) as reference_cosine_sum,
        cast(null as double precision) as reference_cosine_square_sum,
        queries.now,
        queries.result_limit,
        queries.score_threshold,
        queries.roulette_seed,
        queries.save_id,
        loop_settings.memory_scope,
        -- the batch path knows no lineage: the branch rule then reads the save's own events
        cast(null as bigint[]) as lineage_save_ids,
        limits.expand_strategy,
        limits.max_expanded_words,
        cast({{ json_text_list('limits.filter_levels') }} as integer[]) as filter_levels,
        profile.*
    from queries
    cross join profile
    cross join limits
    cross join loop_settings
)

select * from final
