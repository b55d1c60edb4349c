-- One row per event a query scored: every score component and whether it was returned
-- (what DynamicMemory.query(log=True) appends to memory_recall_log).
with

selected as (
    select * from {{ ref('int_memory_events_selected') }}
),

final as (
    select
        query_id,
        event_id,
        bm25_raw,
        bm25_score,
        keyword_score,
        cosine,
        dense_score,
        dense_z,
        context_cosine,
        context_score,
        long_context_cosine,
        long_context_score,
        time_score,
        recency_score,
        use_count_score,
        recent_use_score,
        importance,
        feedback,
        relevance_score,
        profile_score,
        score,
        has_evidence,
        selection_rank,
        is_in_timeline,
        is_above_threshold,
        is_selected
    from selected
)

select * from final
