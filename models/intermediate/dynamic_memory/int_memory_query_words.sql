-- The words each dynamic-memory query recalls with: its TF-IDF keywords minus stopwords and
-- the player's and agent's names, then association words (the shared macro).
with

query_requests as (
    select
        query_id as request_id,
        tokens,
        user_name,
        agent_name as char_name,
        expand_strategy,
        max_expanded_words,
        filter_levels
    from {{ ref('int_memory_queries') }}
),

words as (
    {{ expand_recall_words('query_requests', ref('recall_stopwords'),
        ref('association_words')) }}
),

final as (
    select
        request_id as query_id,
        word,
        word_source,
        level,
        word_order
    from words
)

select * from final
