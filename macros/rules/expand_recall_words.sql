{#
    The words a recall uses (dynamic-memory §11), shared by character and dynamic memory:
    the request's tokens minus stopwords and names (in order, first occurrence), then
    association words. Strategy 0 takes each token's strongest associations in turn;
    strategy 1 pools them and lifts a word by 2 levels for each extra token that calls it up.
    Levels in filter_levels are dropped; at most max_expanded_words are added, never a word
    that is already a token.

    requests: request_id, tokens (varchar[]), user_name, char_name, expand_strategy,
              max_expanded_words, filter_levels (integer[])
#}
{% macro expand_recall_words(requests, stopwords, associations) %}
with

requests as (
    select * from {{ requests }}
),

stopwords as (
    select * from {{ stopwords }}
),

associations as (
    select * from {{ associations }}
),

tokens as (
    select
        request_id,
        unnest(tokens) as word,
        generate_subscripts(tokens, 1) as token_position
    from requests
),

base_words as (
    select
        tokens.request_id,
        tokens.word,
        min(tokens.token_position) as word_position
    from tokens
    inner join requests
        on requests.request_id = tokens.request_id
    {{ anti_join('stopwords', 'stopwords.word = tokens.word') }}
    where
        -- names in any letter case (dynamic recall's words are case-folded)
        lower(tokens.word) is distinct from lower(requests.user_name)
        and lower(tokens.word) is distinct from lower(requests.char_name)
    group by tokens.request_id, tokens.word
),

candidates as (
    select
        base_words.request_id,
        base_words.word as base_word,
        base_words.word_position,
        associations.associated_word as word,
        associations.level,
        row_number() over (
            partition by base_words.request_id, base_words.word
            order by associations.level desc, associations.associated_word
        ) as rank_in_base_word
    from base_words
    inner join associations
        on associations.word = base_words.word
    inner join requests
        on requests.request_id = base_words.request_id
    -- joins, not (correlated) `not in` subqueries: fewer operators, each paid per recall
    {{ anti_join(
        'base_words as own',
        'own.request_id = base_words.request_id and own.word = associations.associated_word'
    ) }}
    where not {{ list_has('coalesce(requests.filter_levels, cast(array[] as integer[]))', 'associations.level') }}
),

-- both strategies' keys in one pass: strategy 0's strongest level and pick order, strategy
-- 1's pooled level
per_word as (
    select
        request_id,
        word,
        max(level) as level,
        -- a (word, associated word) pair is in the lexicon once (a seed test): one row per base
        -- word calling it up
        max(level) + 2 * (count(*) - 1) as pooled_level,
        min(rank_in_base_word * 1000000 + word_position) as pick_order,
        min(word_position) as first_position,
        min(rank_in_base_word) as best_rank
    from candidates
    group by request_id, word
),

ordered as (
    select
        requests.request_id,
        per_word.word,
        case when requests.expand_strategy = 1 then per_word.pooled_level else per_word.level end
            as level,
        row_number() over (
            partition by requests.request_id
            order by
                case when requests.expand_strategy = 1 then -per_word.pooled_level
                    else per_word.pick_order end,
                per_word.first_position,
                per_word.best_rank,
                per_word.word
        ) as expansion_rank,
        requests.max_expanded_words
    from per_word
    inner join requests
        on requests.request_id = per_word.request_id
),

final as (
    select
        request_id,
        word,
        'token' as word_source,
        cast(null as integer) as level,
        word_position as word_order
    from base_words
    union all
    select
        request_id,
        word,
        'expanded' as word_source,
        level,
        1000 + expansion_rank as word_order
    from ordered
    where expansion_rank <= max_expanded_words
)

select * from final
{% endmacro %}
