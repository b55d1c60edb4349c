-- Every event memory a query could recall, with each score component and the fused score
-- (docs block memory_event_score). Scope: int_memory_events_in_scope (official, the player's,
-- on the branch being played).
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

embeddings as (
    select * from {{ ref('stg_app__memory_event_embeddings') }}
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

postings as (
    select
        query_terms.query_id,
        terms.event_id,
        query_terms.word,
        query_terms.word_weight,
        terms.term_count,
        terms.description_count,
        terms.keyword_count
    from query_terms
    inner join terms
        on terms.term = query_terms.word
    inner join scoped_events
        on
            scoped_events.query_id = query_terms.query_id
            and scoped_events.event_id = terms.event_id
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
            * ln(1 + (corpus.event_count - document_frequencies.document_frequency + 0.5)
                / (document_frequencies.document_frequency + 0.5))
            * postings.term_count * (queries.bm25_k1 + 1)
            / (
                postings.term_count + queries.bm25_k1 * (
                    1 - queries.bm25_b
                    + queries.bm25_b * scoped_events.token_count / corpus.average_length
                )
            )
        ) as bm25_raw
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
        on query_terms.query_id = tags.query_id and query_terms.word = tags.tag
    inner join queries
        on queries.query_id = tags.query_id
    group by tags.query_id, tags.event_id
),

term_tiers as (
    select
        postings.query_id,
        postings.event_id,
        max(
            postings.word_weight * case
                when postings.keyword_count > 0 then queries.tier_partial_tag
                when length(postings.word) > 1 then queries.tier_partial_content
                else 0
            end
        ) as tier_score
    from postings
    inner join queries
        on queries.query_id = postings.query_id
    group by postings.query_id, postings.event_id
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
        and strpos(scoped_events.description, queries.query_text) > 0
),

keyword_scores as (
    select
        query_id,
        event_id,
        max(tier_score) as keyword_score
    from (
        select * from exact_tags
        union all
        select * from term_tiers
        union all
        select * from exact_content
    ) as tiers
    group by query_id, event_id
),

-- an exact scan of the player's vectors (at per-player scale it beats an index)
cosines as (
    select
        scoped_events.query_id,
        scoped_events.event_id,
        queries.dense_candidates,
        list_cosine_similarity(
            cast(embeddings.embedding as float[]), queries.query_embedding
        ) as cosine
    from scoped_events
    inner join queries
        on queries.query_id = scoped_events.query_id
    inner join embeddings
        on embeddings.event_id = scoped_events.event_id
    where queries.query_embedding is not null
),

-- the dense_candidates nearest events join the word-matched ones (sorting the scores only,
-- never the vectors)
dense as (
    select
        query_id,
        event_id,
        cosine
    from cosines
    qualify row_number() over (partition by query_id order by cosine desc, event_id)
        <= dense_candidates
),

best_bm25 as (
    select
        query_id,
        max(bm25_raw) as best_bm25_raw
    from bm25
    group by query_id
),

candidates as (
    select query_id, event_id from bm25
    union
    select query_id, event_id from keyword_scores
    union
    select query_id, event_id from dense
),

components as (
    select
        candidates.query_id,
        candidates.event_id,
        coalesce(bm25.bm25_raw, 0) as bm25_raw,
        coalesce(bm25.bm25_raw / nullif(best_bm25.best_bm25_raw, 0), 0) as bm25_score,
        coalesce(keyword_scores.keyword_score, 0) as keyword_score,
        dense.cosine,
        case
            when queries.query_embedding is null then null
            else greatest(
                0, (coalesce(dense.cosine, 0) - queries.dense_floor) / (1 - queries.dense_floor)
            )
        end as dense_score,
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
        scoped_events.feedback
    from candidates
    inner join queries
        on queries.query_id = candidates.query_id
    inner join scoped_events
        on
            scoped_events.query_id = candidates.query_id
            and scoped_events.event_id = candidates.event_id
    left join bm25
        on bm25.query_id = candidates.query_id and bm25.event_id = candidates.event_id
    left join best_bm25
        on best_bm25.query_id = candidates.query_id
    left join keyword_scores
        on
            keyword_scores.query_id = candidates.query_id
            and keyword_scores.event_id = candidates.event_id
    left join dense
        on dense.query_id = candidates.query_id and dense.event_id = candidates.event_id
),

relevant as (
    select
        components.*,
        (
            queries.bm25_weight * components.bm25_score
            + queries.keyword_weight * components.keyword_score
            + coalesce(queries.dense_weight * components.dense_score, 0)
        ) / (
            queries.bm25_weight + queries.keyword_weight
            + case when components.dense_score is null then 0 else queries.dense_weight end
        ) as relevance_score
    from components
    inner join queries
        on queries.query_id = components.query_id
),

profiled as (
    select
        relevant.*,
        queries.importance_weight * relevant.importance
        + queries.recency_weight * relevant.recency_score
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
        * exclude (relevance_share),
        relevance_share * relevance_score + (1 - relevance_share) * profile_score as score
    from profiled
)

select * from final
