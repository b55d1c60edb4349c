-- Every event memory a query could recall, with each score component, whether there is
-- evidence it is relevant, and the fused score (docs block memory_event_score). Scope:
-- int_memory_events_in_scope (official, the player's, on the branch being played).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

words as (
    select * from {{ ref('int_memory_query_words') }}
),

scoped_events as (
    select * from {{ ref('int_memory_events_in_scope') }}
),

terms as (
    select * from {{ ref('stg_app__memory_event_terms') }}
),

query_cosines as (
    select * from {{ ref('int_memory_query_cosines') }}
),

time_windows as (
    select * from {{ ref('int_memory_query_time_windows') }}
),

corpus as (
    select
        query_id,
        count(*) as event_count,
        greatest(avg(token_count), 1) as average_length
    from scoped_events
    group by query_id
),

query_terms as (
    select
        words.query_id,
        words.word,
        case when words.word_source = 'token' then 1.0 else queries.expanded_word_weight end
            as word_weight
    from words
    inner join queries
        on queries.query_id = words.query_id
),

-- a one-character word counts only where it equals a tag's token, never inside a description
postings as (
    select
        query_terms.query_id,
        terms.event_id,
        query_terms.word,
        query_terms.word_weight,
        terms.keyword_count
        + case when length(query_terms.word) > 1 then terms.description_count else 0 end
            as term_count,
        terms.keyword_count
    from query_terms
    inner join terms
        on terms.term = query_terms.word
    inner join scoped_events
        on
            scoped_events.query_id = query_terms.query_id
            and scoped_events.event_id = terms.event_id
    where terms.keyword_count > 0 or length(query_terms.word) > 1
),

document_frequencies as (
    select
        query_id,
        word,
        count(*) as document_frequency
    from postings
    group by query_id, word
),

bm25 as (
    select
        postings.query_id,
        postings.event_id,
        sum(
            postings.word_weight
            * ln(
                1 + (corpus.event_count - document_frequencies.document_frequency + 0.5)
                / (document_frequencies.document_frequency + 0.5)
            )
            * postings.term_count * (queries.bm25_k1 + 1)
            / (
                postings.term_count + queries.bm25_k1 * (
                    1 - queries.bm25_b
                    + queries.bm25_b * scoped_events.token_count / corpus.average_length
                )
            )
        ) as bm25_raw,
        max(
            postings.word_weight * case
                when postings.keyword_count > 0 then queries.tier_partial_tag
                else queries.tier_partial_content
            end
        ) as term_tier
    from postings
    inner join document_frequencies
        on
            document_frequencies.query_id = postings.query_id
            and document_frequencies.word = postings.word
    inner join corpus
        on corpus.query_id = postings.query_id
    inner join queries
        on queries.query_id = postings.query_id
    inner join scoped_events
        on
            scoped_events.query_id = postings.query_id
            and scoped_events.event_id = postings.event_id
    group by postings.query_id, postings.event_id
),

-- retrieval tiers (bot-memory-notes 2.3): exact tag > partial tag > exact content > partial
-- content; an association word counts at expanded_word_weight
exact_tags as (
    select
        tags.query_id,
        tags.event_id,
        max(query_terms.word_weight * queries.tier_exact_tag) as tier_score
    from (
        select
            query_id,
            event_id,
            unnest(keywords) as tag
        from scoped_events
    ) as tags
    inner join query_terms
        -- query words and postings are case-folded (Hiking = hiking)
        on query_terms.query_id = tags.query_id and query_terms.word = lower(tags.tag)
    inner join queries
        on queries.query_id = tags.query_id
    group by tags.query_id, tags.event_id
),

exact_content as (
    select
        scoped_events.query_id,
        scoped_events.event_id,
        queries.tier_exact_content as tier_score
    from scoped_events
    inner join queries
        on queries.query_id = scoped_events.query_id
    where
        length(queries.query_text) > 1
        and strpos(lower(scoped_events.description), lower(queries.query_text)) > 0
),

keyword_scores as (
    select
        query_id,
        event_id,
        max(tier_score) as keyword_score
    from (
        select * from exact_tags
        union all
        select query_id, event_id, term_tier as tier_score from bm25
        union all
        select * from exact_content
    ) as tiers
    group by query_id, event_id
),

-- the in-scope events' cosines (an exact scan: at per-player scale it beats an index), with
-- where each sits among them: e5 cosines crowd a narrow band, so only their spread means much
cosines as (
    select
        scoped_events.query_id,
        scoped_events.event_id,
        queries.dense_candidates,
        query_cosines.cosine,
        query_cosines.context_cosine,
        query_cosines.long_context_cosine
    from scoped_events
    inner join query_cosines
        on
            query_cosines.query_id = scoped_events.query_id
            and query_cosines.event_id = scoped_events.event_id
    inner join queries
        on queries.query_id = scoped_events.query_id
),

-- the null distribution a cosine is judged against: the other in-scope events and fixed
-- unrelated reference sentences (so a store of a few memories has a baseline too)
dense_baselines as (
    select
        query_id,
        avg(cosine) as cosine_mean,
        stddev_pop(cosine) as cosine_sd
    from (
        select query_id, cosine from cosines
        union all
        select query_id, unnest(reference_cosines) as cosine from queries
    ) as pooled
    group by query_id
),

dense as (
    select
        cosines.query_id,
        cosines.event_id,
        cosines.cosine,
        cosines.context_cosine,
        cosines.long_context_cosine,
        {{ min_max('cosines.cosine', 'by_query') }} as dense_score,
        {{ min_max('cosines.context_cosine', 'by_query') }} as context_score,
        {{ min_max('cosines.long_context_cosine', 'by_query') }} as long_context_score,
        (cosines.cosine - dense_baselines.cosine_mean) / nullif(dense_baselines.cosine_sd, 0)
            as dense_z
    from cosines
    inner join dense_baselines
        on dense_baselines.query_id = cosines.query_id
    window by_query as (partition by cosines.query_id)
    -- the best dense_candidates by their best vector (one window: each costs per query)
    qualify row_number() over (
        partition by cosines.query_id
        order by
            greatest(cosines.cosine, cosines.context_cosine, cosines.long_context_cosine) desc,
            cosines.event_id
    ) <= cosines.dense_candidates
),

in_time_window as (
    select
        scoped_events.query_id,
        scoped_events.event_id
    from scoped_events
    inner join time_windows
        on
            time_windows.query_id = scoped_events.query_id
            and scoped_events.created_at >= time_windows.window_start
            and scoped_events.created_at < time_windows.window_end
),

candidates as (
    select query_id, event_id from bm25
    union
    select query_id, event_id from keyword_scores
    union
    select query_id, event_id from dense
    union
    select query_id, event_id from in_time_window
),

components as (
    select
        candidates.query_id,
        candidates.event_id,
        coalesce(bm25.bm25_raw, 0) as bm25_raw,
        coalesce(bm25.bm25_raw / nullif(max(bm25.bm25_raw) over by_query, 0), 0)
            as bm25_score,
        coalesce(keyword_scores.keyword_score, 0) as keyword_score,
        dense.cosine,
        dense.context_cosine,
        dense.long_context_cosine,
        case
            when queries.query_embedding is not null then coalesce(dense.dense_score, 0)
        end as dense_score,
        case
            when queries.query_embedding is not null then coalesce(dense.context_score, 0)
        end as context_score,
        case
            when queries.query_embedding is not null then coalesce(dense.long_context_score, 0)
        end as long_context_score,
        dense.dense_z,
        case
            when time_windows.query_id is not null
                then case when in_time_window.event_id is null then 0.0 else 1.0 end
        end as time_score,
        exp(
            -ln(2) * greatest(date_diff('second', scoped_events.created_at, queries.now), 0)
            / 86400.0 / queries.recency_half_life_days
        ) as recency_score,
        least(1.0, ln(1 + scoped_events.recall_count) / ln(11)) as use_count_score,
        case
            when scoped_events.last_recalled_at is null then 0.0
            else exp(
                -greatest(date_diff('second', scoped_events.last_recalled_at, queries.now), 0)
                / 3600.0 / queries.recent_use_hours
            )
        end as recent_use_score,
        scoped_events.importance,
        scoped_events.feedback,
        -- evidence: a shared word or tag, a cosine clearly above the player's other events,
        -- or the time the query names; without it a memory is never recalled
        coalesce(bm25.bm25_raw, 0) > 0
        or coalesce(keyword_scores.keyword_score, 0) > 0
        or coalesce(dense.dense_z >= queries.dense_gate_sigma, false)
        or in_time_window.event_id is not null as has_evidence,
        -- the future has not happened yet: an event dated after now is no evidence of recency
        scoped_events.created_at > queries.now as is_in_future
    from candidates
    inner join queries
        on queries.query_id = candidates.query_id
    inner join scoped_events
        on
            scoped_events.query_id = candidates.query_id
            and scoped_events.event_id = candidates.event_id
    left join bm25
        on bm25.query_id = candidates.query_id and bm25.event_id = candidates.event_id
    left join keyword_scores
        on
            keyword_scores.query_id = candidates.query_id
            and keyword_scores.event_id = candidates.event_id
    left join dense
        on dense.query_id = candidates.query_id and dense.event_id = candidates.event_id
    left join time_windows
        on time_windows.query_id = candidates.query_id
    left join in_time_window
        on
            in_time_window.query_id = candidates.query_id
            and in_time_window.event_id = candidates.event_id
    window by_query as (partition by candidates.query_id)
),

-- reciprocal ranks per signal, for fusion = 'rrf'
ranked as (
    select
        *,
        case when bm25_raw > 0 then rank() over (
            partition by query_id order by bm25_raw desc
        ) end as bm25_rank,
        case when keyword_score > 0 then rank() over (
            partition by query_id order by keyword_score desc
        ) end as keyword_rank,
        -- the three dense signals rank as one (the sum of their normalised scores)
        case when cosine is not null then rank() over (
            partition by query_id
            order by
                dense_score + context_score + long_context_score desc nulls last,
                cosine desc
        ) end as dense_rank,
        case when time_score > 0 then 1 end as time_rank
    from components
),

relevant as (
    select
        ranked.*,
        case queries.fusion
            when 'rrf'
                then (
                    queries.bm25_weight * coalesce(1.0 / (queries.rrf_k + ranked.bm25_rank), 0)
                    + queries.keyword_weight
                    * coalesce(1.0 / (queries.rrf_k + ranked.keyword_rank), 0)
                    + (queries.dense_weight + 2 * queries.context_dense_weight)
                    * coalesce(1.0 / (queries.rrf_k + ranked.dense_rank), 0)
                    + queries.time_weight * coalesce(1.0 / (queries.rrf_k + ranked.time_rank), 0)
                ) * (queries.rrf_k + 1)
            else
                queries.bm25_weight * ranked.bm25_score
                + queries.keyword_weight * ranked.keyword_score
                + coalesce(queries.dense_weight * ranked.dense_score, 0)
                + coalesce(queries.context_dense_weight * ranked.context_score, 0)
                + coalesce(queries.context_dense_weight * ranked.long_context_score, 0)
                + coalesce(queries.time_weight * ranked.time_score, 0)
        end / (
            queries.bm25_weight + queries.keyword_weight
            + case when ranked.dense_score is null then 0 else queries.dense_weight end
            + case
                when ranked.context_score is null then 0 else queries.context_dense_weight
            end
            + case
                when ranked.long_context_score is null then 0 else queries.context_dense_weight
            end
            + case when ranked.time_score is null then 0 else queries.time_weight end
        ) as relevance_score
    from ranked
    inner join queries
        on queries.query_id = ranked.query_id
),

profiled as (
    select
        relevant.*,
        queries.importance_weight * relevant.importance
        + queries.recency_weight * case
            when relevant.is_in_future then 0 else
                relevant.recency_score
        end
        + queries.use_count_weight * relevant.use_count_score
        + queries.recent_use_penalty_weight * (1 - relevant.recent_use_score)
        + queries.content_match_weight * relevant.relevance_score
        + queries.feedback_weight * relevant.feedback as profile_score,
        queries.relevance_share
    from relevant
    inner join queries
        on queries.query_id = relevant.query_id
),

final as (
    select
        * exclude (relevance_share, bm25_rank, keyword_rank, dense_rank, time_rank),
        relevance_share * relevance_score + (1 - relevance_share) * profile_score as score
    from profiled
)

select * from final
