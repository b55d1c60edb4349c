-- The recall log for analysts: one row per logged candidate, with its share of the query.
with

log as (
    select * from {{ source('app', 'memory_recall_log') }}
),

final as (
    select
        id as log_id,
        query_id,
        agent_id,
        user_id,
        item_type,
        item_id,
        scope,
        bm25_score,
        keyword_score,
        dense_score,
        recency_score,
        profile_score,
        score,
        score / nullif(sum(score) over (partition by query_id, item_type), 0) as score_share,
        is_selected,
        queried_at
    from log
)

select * from final
