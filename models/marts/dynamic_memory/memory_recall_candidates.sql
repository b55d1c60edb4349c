-- One row per event a query scored: every score component, whether it was returned, and why
-- or why not (what DynamicMemory.query(log=True) appends to memory_recall_log; the turn's
-- trace reads status and reason).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

selected as (
    select * from {{ ref('int_memory_events_selected') }}
),

-- the first rule that keeps an event out, in the order the selection applies them
judged as (
    select
        selected.*,
        queries.result_limit,
        queries.score_threshold,
        case
            when selected.is_selected then 'shown'
            when selected.is_in_timeline then 'in the timeline'
            when not selected.has_evidence then 'no evidence'
            when not selected.is_above_threshold then 'below the threshold'
            else 'over the limit'
        end as status
    from selected
    inner join queries
        on queries.query_id = selected.query_id
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
        time_answer_score,
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
        is_selected,
        status,
        case status
            when 'shown'
                then
                    'selected #' || cast(selection_rank as varchar) || ' (score '
                    || {{ format_decimal('score', 4) }} || ')'
            when 'in the timeline' then 'already in the overview timeline, delivered beside it'
            when 'no evidence'
                then 'no shared word or tag, no clear meaning match, not in the time named'
            when 'below the threshold'
                then
                    'score ' || {{ format_decimal('score', 4) }} || ' is under the threshold '
                    || {{ format_decimal('coalesce(score_threshold, 0)', 4) }}
            else
                'ranked #' || cast(selection_rank as varchar) || ', past the limit of '
                || cast(result_limit as varchar)
        end as reason
    from judged
)

select * from final
