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
    where
        tokens.word not in (select word from stopwords)
        and tokens.word is distinct from requests.user_name
        and tokens.word is distinct from requests.char_name
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
    where
        not list_contains(coalesce(requests.filter_levels, []), associations.level)
        and associations.associated_word not in (
            select word from base_words as own where own.request_id = base_words.request_id
        )
),

pooled as (
    select
        request_id,
        word,
        max(level) + 2 * (count(distinct base_word) - 1) as pooled_level,
        min(word_position) as first_position,
        min(rank_in_base_word) as best_rank
    from candidates
    group by request_id, word
),

strategy_0 as (
    select
        request_id,
        word,
        max(level) as level,
        min(rank_in_base_word * 1000000 + word_position) as pick_order
    from candidates
    group by request_id, word
),

ordered as (
    select
        requests.request_id,
        pooled.word,
        case when requests.expand_strategy = 1 then pooled.pooled_level else strategy_0.level end
            as level,
        row_number() over (
            partition by requests.request_id
            order by
                case when requests.expand_strategy = 1 then -pooled.pooled_level
                    else strategy_0.pick_order end,
                pooled.first_position,
                pooled.best_rank,
                pooled.word
        ) as expansion_rank,
        requests.max_expanded_words
    from pooled
    inner join strategy_0
        on strategy_0.request_id = pooled.request_id and strategy_0.word = pooled.word
    inner join requests
        on requests.request_id = pooled.request_id
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
