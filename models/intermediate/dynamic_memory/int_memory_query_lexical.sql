-- Each query's BM25 signal per event sharing a word with it (description and tag words):
-- BM25 over the query's reachable events (the agent's official ones and the player's own; their
-- count and average length) and the best retrieval tier a word reaches. Scoring reads it through
-- int_memory_event_candidates; the Python path may bind the same rows computed from the
-- player's postings held in memory (a parity test holds them equal).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

words as (
    select * from {{ ref('int_memory_query_words') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

terms as (
    select * from {{ ref('int_memory_event_terms_with_official') }}
),

-- the corpus BM25 reads (its event count and average length) summed from one row per owner
-- (the agent's official events, each player's own): aggregated before the join, so no
-- row-by-row join or sort of every reachable event
owners as (
    select
        agent_id,
        scope,
        user_id,
        count(*) as event_count,
        count(token_count) as length_count,
        sum(token_count) as length_total
    from events
    group by agent_id, scope, user_id
),

corpus as (
    select
        queries.query_id,
        -- typed as the row count it sums (a sum of counts is wider on both engines)
        cast(sum(owners.event_count) as bigint) as event_count,
        greatest(
            cast(sum(owners.length_total) as double precision)
            / nullif(sum(owners.length_count), 0),
            1
        ) as average_length
    from owners
    inner join queries
        on
            owners.agent_id = queries.agent_id
            and (owners.scope = 'official' or owners.user_id = queries.user_id)
    group by queries.query_id
),

-- a one-character word counts only where it equals a tag's token, never inside a description;
-- the postings of the query's words carry their event's owner, so no join with every
-- reachable event is needed to find them (the event's length comes by its key)
postings as (
    select
        words.query_id,
        terms.event_id,
        terms.keyword_count
        + case when length(words.word) > 1 then terms.description_count else 0 end
            as term_count,
        events.token_count,
        case when words.word_source = 'token' then 1.0 else queries.expanded_word_weight end
            as word_weight,
        case
            -- query words and postings are case-folded (Hiking = hiking); tag_count: the tags
            -- the word is whole
            when terms.tag_count > 0 then queries.tier_exact_tag
            when terms.keyword_count > 0 then queries.tier_partial_tag
            else queries.tier_partial_content
        end as word_tier,
        count(*) over (partition by words.query_id, words.word) as document_frequency
    from words
    inner join queries
        on queries.query_id = words.query_id
    inner join terms
        on
            terms.term = words.word
            and terms.agent_id = queries.agent_id
            and (terms.scope = 'official' or terms.user_id = queries.user_id)
    inner join events
        on events.event_id = terms.event_id
    where
        (terms.keyword_count > 0 or length(words.word) > 1)
        and {{ in_few_rows('terms.term', 'select word from words') }}
),

final as (
    select
        postings.query_id,
        postings.event_id,
        sum(
            postings.word_weight
            * ln(
                1 + (corpus.event_count - postings.document_frequency + 0.5)
                / (postings.document_frequency + 0.5)
            )
            * postings.term_count * (queries.bm25_k1 + 1)
            / (
                postings.term_count + queries.bm25_k1 * (
                    1 - queries.bm25_b
                    + queries.bm25_b * postings.token_count / corpus.average_length
                )
            )
        ) as bm25_raw,
        max(postings.word_weight * postings.word_tier) as word_tier
    from postings
    inner join corpus
        on corpus.query_id = postings.query_id
    inner join queries
        on queries.query_id = postings.query_id
    group by postings.query_id, postings.event_id
)

select * from final
